//! `csm stream`: continuous matching of an update stream, batch by batch.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use csm_baselines::listing::ListingEngine;
use csm_baselines::registry::{self, EngineOptions};
use csm_engine::{past, Batch, BatchResult, ContinuousMatcher, FIRST_TIMED_RUN};
use csm_graph::{GraphData, LocatedUpdate, Strictness};
use csm_planner::{count, QueryGraph};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::input::{self, EngineArgs, GraphArgs, QueryArgs, StreamArgs};
use crate::limit::{self, Watchdog};
use crate::list_file::{self, ListFile};
use crate::output;

/// Arguments of `csm stream`.
#[derive(Args, Debug, Clone)]
pub struct StreamCmdArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    #[command(flatten)]
    pub query: QueryArgs,
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Updates per batch.
    #[arg(long, short = 'b', value_name = "B")]
    pub batch: usize,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Also count |M(G0)| with the static cpu engine (reported as
    /// `initial_count`, with `final_count` = initial + positive - negative).
    #[arg(long)]
    pub initial_count: bool,
    /// Stop after this many seconds of processing (counted from the end of
    /// loading and engine set-up): between batches, or at the limit from a
    /// watchdog when a batch is still running. The summary then says
    /// `"timed_out": true` and covers the batches that finished; the exit
    /// status is 0.
    #[arg(long, value_name = "SECONDS", value_parser = crate::limit::parse_limit)]
    pub time_limit: Option<f64>,
    /// Print JSON lines (one per batch, then a summary) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write every embedding that appears or vanishes to FILE (`-`: stdout,
    /// not with --json), one line each: `BATCH SIGN f(u0) f(u1) ...`, SIGN
    /// `+` or `-`, in the files' vertex ids. Runs the listing engine
    /// (`list`) instead of --engine's; on several threads a batch's lines
    /// come in no fixed order (batches in order).
    #[arg(long, value_name = "FILE")]
    pub list: Option<PathBuf>,
}

/// Updates handed to [`ContinuousMatcher::process_each_until`] at a time
/// when batches hold one update (results still come per update; the
/// progress bar moves once per run).
pub const EACH_RUN: usize = 4096;

/// Totals over processed batches.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub batches: usize,
    pub updates: usize,
    pub positive: u64,
    pub negative: u64,
    /// Matching time, seconds.
    pub seconds: f64,
    /// Graph update time, seconds.
    pub update_seconds: f64,
    pub skipped: usize,
    /// The run stopped at its time limit before the last batch.
    pub timed_out: bool,
}

impl Totals {
    pub fn add(&mut self, updates: usize, r: &BatchResult) {
        self.batches += 1;
        self.updates += updates;
        self.positive = count::add(self.positive, r.positive);
        self.negative = count::add(self.negative, r.negative);
        self.seconds += r.seconds;
        self.update_seconds += r.update_seconds;
        self.skipped += r.skipped;
    }

    /// Updates per second of processing time (matching + graph update).
    pub fn updates_per_second(&self) -> f64 {
        output::rate(self.updates as f64, self.seconds + self.update_seconds)
    }
}

/// Feeds `updates` to `engine` in consecutive batches of `batch` and calls
/// `on_batch(index, updates, result)` after each. The engine must be
/// initialised. Batches of one update go through
/// [`ContinuousMatcher::process_each_until`] a run of [`EACH_RUN`] at a
/// time (the cpu engine overlaps them on several threads), with the same
/// results; the engine starts no update after the deadline, so every
/// update that finished in time is reported. Under a deadline the runs
/// start at [`FIRST_TIMED_RUN`] updates and double up to [`EACH_RUN`]: a
/// run's results come back only when it returns, and the watchdog that
/// ends an update still running past the limit reports what came back,
/// which with doubling runs is at least half of what finished.
pub fn process_stream(
    engine: &mut dyn ContinuousMatcher,
    updates: &[LocatedUpdate],
    source: &str,
    batch: usize,
    strictness: Strictness,
    on_batch: impl FnMut(usize, &[LocatedUpdate], &BatchResult),
) -> Result<Totals> {
    process_stream_until(engine, updates, source, batch, strictness, None, on_batch)
}

/// [`process_stream`] that starts no batch (no run of single updates) after
/// `deadline`; the totals then say [`Totals::timed_out`].
pub fn process_stream_until(
    engine: &mut dyn ContinuousMatcher,
    updates: &[LocatedUpdate],
    source: &str,
    batch: usize,
    strictness: Strictness,
    deadline: Option<Instant>,
    mut on_batch: impl FnMut(usize, &[LocatedUpdate], &BatchResult),
) -> Result<Totals> {
    if batch == 0 {
        bail!("--batch must be at least 1");
    }
    let mut totals = Totals::default();
    if batch == 1 {
        let mut results = Vec::with_capacity(EACH_RUN);
        let mut start = 0;
        let mut run_len = if deadline.is_some() { FIRST_TIMED_RUN } else { EACH_RUN };
        while start < updates.len() {
            if past(deadline) {
                totals.timed_out = true;
                break;
            }
            let run = &updates[start..(start + run_len).min(updates.len())];
            run_len = (2 * run_len).min(EACH_RUN);
            results.clear();
            let done = engine.process_each_until(
                Batch {
                    updates: run,
                    source,
                    strictness,
                },
                deadline,
                &mut results,
            );
            for (k, res) in results.iter().enumerate() {
                totals.add(1, res);
                on_batch(start + k, &run[k..=k], res);
            }
            done?;
            start += results.len();
            if results.len() < run.len() {
                // stopped at the deadline
                totals.timed_out = true;
                break;
            }
        }
        return Ok(totals);
    }
    for (i, chunk) in updates.chunks(batch).enumerate() {
        if past(deadline) {
            totals.timed_out = true;
            break;
        }
        let r = engine.process(Batch {
            updates: chunk,
            source,
            strictness,
        })?;
        totals.add(chunk.len(), &r);
        on_batch(i, chunk, &r);
    }
    Ok(totals)
}

/// |M(g)| with the static cpu engine (on the edges of `q`'s label triples
/// unless `opts` keep every edge, as `csm match` counts).
pub fn static_count(g: &GraphData, q: &QueryGraph, opts: &EngineOptions) -> Result<u64> {
    let engine = registry::static_engine("cpu", opts)?;
    let csr = csm_engine::EdgesApart::counted_csr(g, q, opts.edge_filter)?;
    Ok(engine.count(&csr, q)?)
}

/// What a stream summary says besides the totals.
#[derive(Clone, Debug)]
struct SummaryMeta {
    engine: String,
    query: String,
    graph: String,
    threads: usize,
    order: String,
    batch_size: usize,
    init_seconds: f64,
    load_seconds: f64,
    /// Update-file lines skipped as unreadable (`--lenient`).
    unreadable: usize,
}

impl SummaryMeta {
    /// The `"summary": true` JSON object.
    fn json(&self, t: &Totals) -> Value {
        json!({
            "summary": true,
            "engine": self.engine,
            "query": self.query,
            "graph": self.graph,
            "threads": self.threads,
            "pool_threads": rayon::current_num_threads(),
            "order": self.order,
            "batch_size": self.batch_size,
            "batches": t.batches,
            "updates": t.updates,
            "positive": output::count_json(t.positive),
            "negative": output::count_json(t.negative),
            "seconds": t.seconds,
            "update_seconds": t.update_seconds,
            "skipped": t.skipped,
            "unreadable_lines": self.unreadable,
            "updates_per_second": t.updates_per_second(),
            "init_seconds": self.init_seconds,
            "load_seconds": self.load_seconds,
            "timed_out": t.timed_out,
        })
    }
}

/// The header columns of the query vertices in a `--list` file: `u0 u1 ...`.
pub fn query_columns(k: usize) -> String {
    (0..k).map(|u| format!("u{u}")).collect::<Vec<_>>().join(" ")
}

/// The JSON object of one batch: the fixed keys, then the engine's extras.
pub fn batch_json(index: usize, chunk: &[LocatedUpdate], r: &BatchResult) -> Value {
    let mut o = Map::new();
    o.insert("batch".into(), json!(index));
    o.insert("first_line".into(), json!(chunk.first().map_or(0, |u| u.line)));
    o.insert("updates".into(), json!(chunk.len()));
    o.insert("positive".into(), output::count_json(r.positive));
    o.insert("negative".into(), output::count_json(r.negative));
    output::mark_overflow(&mut o, &[r.positive, r.negative]);
    o.insert("seconds".into(), json!(r.seconds));
    o.insert("update_seconds".into(), json!(r.update_seconds));
    o.insert("skipped".into(), json!(r.skipped));
    output::flatten_into(&mut o, &r.extra);
    Value::Object(o)
}

pub fn run(args: StreamCmdArgs) -> Result<()> {
    input::use_threads(args.engine.threads);
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    if !args.stream.given() {
        bail!("give the updates: --updates FILE, or --stream-fraction F / --stream-count N to generate them");
    }
    list_file::check_args(args.list.as_deref(), args.json, &args.engine.engine)?;
    let mut g = args.graph.load()?;
    let mut q = args.query.load()?;
    let opts = args.engine.options()?;
    let mut engine = match args.list {
        Some(_) => None,
        None => Some(args.engine.continuous_engine()?),
    };
    let mut w = g.workload(&args.stream, None)?;
    input::drop_zero_edge_labels(&mut w.g0, &w.updates, &mut q.query);
    // (after the workload: the ids of vertices the updates add are known)
    let list = match &args.list {
        Some(path) => {
            let header = format!("batch sign {}", query_columns(q.query.num_vertices()));
            let file = ListFile::create(path, g.ids.clone(), &header)?;
            // (several threads: a batch's seeds spread over the pool, each
            // piece of work writing its lines in pieces, in no fixed order
            // within the batch; one thread: plan order)
            let lister = if rayon::current_num_threads() > 1 {
                ListingEngine::parallel(opts.order.clone(), file.stream_buffers())
            } else {
                ListingEngine::new(opts.order.clone(), file.stream_sink())
            };
            engine = Some(Box::new(lister));
            Some(file)
        }
        None => None,
    };
    let mut engine = engine.expect("chosen above");
    let engine_name = if list.is_some() { "list" } else { &args.engine.engine };
    let strictness = if args.graph.read.lenient {
        Strictness::Lenient
    } else {
        Strictness::Strict
    };

    let initial = if args.initial_count {
        let t = Instant::now();
        let c = static_count(&w.g0, &q.query, &opts)?;
        tracing::info!("|M(G0)| = {c} in {:.3} s", t.elapsed().as_secs_f64());
        Some(c)
    } else {
        None
    };

    let t_init = Instant::now();
    engine.init(&w.g0, &q.query)?;
    let init_seconds = t_init.elapsed().as_secs_f64();

    let meta = SummaryMeta {
        engine: engine_name.to_string(),
        query: q.name.clone(),
        graph: g.name.clone(),
        threads: args.engine.threads,
        order: args.engine.order.clone(),
        batch_size: args.batch,
        init_seconds,
        load_seconds: g.seconds,
        unreadable: w.unreadable,
    };
    let pb = output::progress_bar(w.updates.len() as u64, !args.json, "updates");
    let json = args.json;
    let (limit, fired_meta, fired_pb) = (args.time_limit.unwrap_or(0.0), meta.clone(), pb.clone());
    // a batch still running at the limit: report the finished ones and end
    let deadline = limit::deadline(args.time_limit)?;
    let watchdog = Watchdog::start(
        limit::watchdog_deadline(deadline, limit),
        Totals::default(),
        move |t: &Totals| {
            fired_pb.finish_and_clear();
            let t = Totals {
                timed_out: true,
                ..t.clone()
            };
            if json {
                output::json_line(&fired_meta.json(&t));
            } else {
                println!(
                    "time limit of {limit} s reached during batch {}: +{} / -{} matches in the {} batches before it",
                    t.batches,
                    output::count_text(t.positive),
                    output::count_text(t.negative),
                    t.batches
                );
            }
        },
    );
    let totals = process_stream_until(
        engine.as_mut(),
        &w.updates,
        &w.source,
        args.batch,
        strictness,
        deadline,
        |i, chunk, r| {
            watchdog.update(|t| {
                t.add(chunk.len(), r);
                if json {
                    output::json_line(&batch_json(i, chunk, r));
                }
            });
            pb.inc(chunk.len() as u64);
        },
    );
    watchdog.finish();
    pb.finish_and_clear();
    let listed = list.as_ref().map(ListFile::finish).transpose();
    let totals = totals?;
    let listed = listed?;
    // (unknown when a count overflowed 64 bits)
    let overflow = [totals.positive, totals.negative]
        .into_iter()
        .chain(initial)
        .any(count::saturated);
    let final_count = initial
        .filter(|_| !overflow)
        .map(|c| count::add(c, totals.positive).checked_sub(totals.negative));

    if json {
        let mut o = meta.json(&totals);
        if let Some(c) = initial {
            o["initial_count"] = output::count_json(c);
            o["final_count"] = json!(final_count.flatten());
        }
        if overflow {
            o["overflow"] = json!(true);
        }
        if let Some(n) = listed {
            o["listed"] = json!(n);
        }
        output::json_line(&o);
    } else {
        println!(
            "{} on {}: {} updates from {} in {} batches of {}",
            engine_name,
            q.name,
            output::group(totals.updates as u64),
            w.source,
            output::group(totals.batches as u64),
            args.batch
        );
        let mut t = output::Table::new(["", "value"]);
        if let Some(c) = initial {
            t.row(["initial count |M(G0)|".to_string(), output::count_text(c)]);
        }
        t.row([
            "positive (new matches)".to_string(),
            format!("+{}", output::count_text(totals.positive)),
        ]);
        t.row([
            "negative (lost matches)".to_string(),
            format!("-{}", output::count_text(totals.negative)),
        ]);
        if let Some(Some(c)) = final_count {
            t.row(["final count".to_string(), output::group(c)]);
        }
        if totals.skipped > 0 {
            t.row(["skipped updates".to_string(), output::group(totals.skipped as u64)]);
        }
        if let (Some(n), Some(path)) = (listed, &args.list) {
            t.row([
                "embeddings listed".to_string(),
                format!("{} in {}", output::group(n), input::output_name(path)),
            ]);
        }
        if w.unreadable > 0 {
            t.row([
                "unreadable update lines".to_string(),
                output::group(w.unreadable as u64),
            ]);
        }
        if totals.timed_out {
            t.row([
                "time limit".to_string(),
                format!("reached after {} batches", output::group(totals.batches as u64)),
            ]);
        }
        t.row(["matching time".to_string(), output::secs(totals.seconds)]);
        t.row(["graph update time".to_string(), output::secs(totals.update_seconds)]);
        t.row([
            "throughput".to_string(),
            format!(
                "{} updates/s",
                output::per_sec(totals.updates_per_second()).trim_end_matches("/s")
            ),
        ]);
        print!("{}", t.render());
    }
    if let Some(None) = final_count {
        bail!("inconsistent counts: initial count + positive < negative");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use csm_engine::EngineError;
    use csm_graph::Update;

    use super::*;

    /// An engine that takes 2 ms per update and finds nothing.
    struct Slow;

    impl ContinuousMatcher for Slow {
        fn name(&self) -> &str {
            "slow"
        }
        fn init(&mut self, _: &GraphData, _: &QueryGraph) -> Result<(), EngineError> {
            Ok(())
        }
        fn process(&mut self, b: Batch<'_>) -> Result<BatchResult, EngineError> {
            std::thread::sleep(Duration::from_millis(2) * b.updates.len() as u32);
            Ok(BatchResult::default())
        }
    }

    fn updates(n: usize) -> Vec<LocatedUpdate> {
        (0..n)
            .map(|i| LocatedUpdate {
                line: i + 1,
                update: Update::AddVertex { id: i as u32, label: 0 },
            })
            .collect()
    }

    #[test]
    fn single_updates_stop_near_the_deadline() {
        // a fixed run of EACH_RUN updates would take 8 s before the first check
        let ups = updates(EACH_RUN);
        let deadline = Instant::now() + Duration::from_millis(100);
        let mut seen = Vec::new();
        let t = process_stream_until(
            &mut Slow,
            &ups,
            "s",
            1,
            Strictness::Strict,
            Some(deadline),
            |i, u, _| seen.push((i, u[0].line)),
        )
        .unwrap();
        assert!(t.timed_out);
        assert!(t.updates < EACH_RUN / 4, "{} updates ran", t.updates);
        assert_eq!(t.updates, seen.len());
        // indices and updates stay in step across runs of different lengths
        assert!(seen.iter().enumerate().all(|(k, &(i, line))| i == k && line == k + 1));
    }

    #[test]
    fn single_updates_without_deadline_all_run() {
        let ups = updates(40);
        let t = process_stream_until(&mut Slow, &ups, "s", 1, Strictness::Strict, None, |_, _, _| {}).unwrap();
        assert!(!t.timed_out);
        assert_eq!((t.updates, t.batches), (40, 40));
    }
}
