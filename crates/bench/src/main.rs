//! `csm`: continuous subgraph matching from the command line.
//! See `docs/cli.md` for every command, flag and JSON contract.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use csm_bench::cmd;

/// Continuous subgraph matching: static counts, update streams, generators,
/// cross-engine verification and throughput sweeps.
#[derive(Parser, Debug)]
#[command(name = "csm", version, about, propagate_version = true)]
struct Cli {
    /// Log progress to stderr (-v info, -vv debug, -vvv trace; RUST_LOG also works).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a self-contained demo on generated data (no files, no GPU).
    Demo(cmd::demo::DemoArgs),
    /// Count the embeddings of a query in a graph.
    #[command(name = "match")]
    Match(cmd::matching::MatchArgs),
    /// Apply an update stream in batches and report positive/negative matches.
    Stream(cmd::stream::StreamCmdArgs),
    /// Generate graphs, update streams and queries.
    Gen(cmd::gen::GenArgs),
    /// Cross-check several engines on the same input.
    Verify(cmd::verify::VerifyArgs),
    /// Measure throughput over queries x batch sizes x threads; write CSV and SVG.
    Sweep(cmd::sweep::SweepArgs),
    /// GCSM cache study: access-frequency sampling and cache policies per batch.
    Sample(cmd::sample::SampleArgs),
}

fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = match verbose {
        0 => match std::env::var("RUST_LOG") {
            Ok(v) if !v.is_empty() => EnvFilter::new(v),
            _ => return,
        },
        1 => EnvFilter::new("info"),
        2 => EnvFilter::new("debug"),
        _ => EnvFilter::new("trace"),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Restores SIGPIPE's default action, which the Rust runtime sets to
/// ignore: writing to a closed pipe (`csm gen graph -o - | head`, `csm
/// stream --json | head -3`) then ends the process quietly, as it ends
/// `cat` and `grep`, instead of `println!` panicking on the broken pipe.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first in main, before any other thread exists;
    // SIG_DFL is a valid action for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    // Usage errors exit 1 like every other error (clap's own default is 2);
    // --help and --version exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    init_tracing(cli.verbose);
    let result = match cli.command {
        Command::Demo(a) => cmd::demo::run(a),
        Command::Match(a) => cmd::matching::run(a),
        Command::Stream(a) => cmd::stream::run(a),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Verify(a) => cmd::verify::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Sample(a) => cmd::sample::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", csm_bench::input::describe_error(&e));
            ExitCode::FAILURE
        }
    }
}
