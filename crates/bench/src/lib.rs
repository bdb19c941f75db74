//! The `csm` command-line tool (binary `csm`, see `docs/cli.md`) and the
//! criterion benchmarks of csm.
//!
//! The commands live in [`cmd`] (one module per subcommand), input loading in
//! [`input`] and output helpers (tables, JSON lines, progress bars) in
//! [`output`]. The binary's `main.rs` only holds the top-level clap types and
//! the dispatch.

pub mod cmd;
pub mod input;
pub mod limit;
pub mod list_file;
pub mod output;
