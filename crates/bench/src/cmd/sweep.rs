//! `csm sweep`: throughput over a grid of queries × batch sizes × thread
//! counts × engines; writes `sweep.csv` and `sweep.svg`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use csm_baselines::registry;
use csm_engine::EngineError;
use csm_graph::Strictness;
use plotters::prelude::*;
use serde::Serialize;
use serde_json::json;

use crate::cmd::stream::{process_stream_until, Totals};
use crate::cmd::verify::engine_list;
use crate::input::{self, GraphArgs, LoadedQuery, StreamArgs};
use crate::limit;
use crate::output;

/// Stream fraction used when no stream option is given.
pub const DEFAULT_SWEEP_FRACTION: f64 = 0.02;

/// Arguments of `csm sweep`.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Comma-separated queries (files or standard names).
    #[arg(long, value_name = "LIST")]
    pub queries: String,
    /// Comma-separated batch sizes.
    #[arg(long, value_name = "LIST", default_value = "64,256,1024")]
    pub batches: String,
    /// Comma-separated thread counts (0 = all cores).
    #[arg(long, short = 't', value_name = "LIST", default_value = "1")]
    pub threads: String,
    /// Comma-separated engine names, or `all`.
    #[arg(long, short = 'e', value_name = "LIST", default_value = "cpu")]
    pub engine: String,
    /// Matching order: auto (the default), cost or gcsm.
    #[arg(long, value_name = "ORDER", default_value = "auto")]
    pub order: String,
    /// The stream (default: --stream-fraction 0.02).
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Give each run (one cell of the grid) this many seconds of processing:
    /// no batch starts after it, and the row says `timed_out` (its updates,
    /// counts and times cover the batches that ran).
    #[arg(long, value_name = "SECONDS", value_parser = crate::limit::parse_limit)]
    pub time_limit: Option<f64>,
    /// Output directory (created if missing).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Also print one JSON line per run on stdout.
    #[arg(long)]
    pub json: bool,
}

/// One run of the grid (a `sweep.csv` row).
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    pub engine: String,
    pub query: String,
    pub batch: usize,
    pub threads: usize,
    pub updates: usize,
    pub positive: u64,
    pub negative: u64,
    /// Matching time, seconds.
    pub seconds: f64,
    /// Updates per second of matching + graph update time.
    pub updates_per_second: f64,
    pub update_seconds: f64,
    /// The run stopped at `--time-limit` before the end of the stream.
    pub timed_out: bool,
}

pub const CSV_HEADER: &str =
    "engine,query,batch,threads,updates,positive,negative,seconds,updates_per_second,update_seconds,timed_out";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes the rows as CSV (via a temporary file, renamed into place).
pub fn write_csv(path: &Path, rows: &[SweepRow]) -> Result<()> {
    let tmp = path.with_extension("csv.tmp");
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("{}: cannot create", tmp.display()))?,
    );
    writeln!(f, "{CSV_HEADER}")?;
    for r in rows {
        writeln!(
            f,
            "{},{},{},{},{},{},{},{:.6},{:.1},{:.6},{}",
            csv_field(&r.engine),
            csv_field(&r.query),
            r.batch,
            r.threads,
            r.updates,
            r.positive,
            r.negative,
            r.seconds,
            r.updates_per_second,
            r.update_seconds,
            r.timed_out
        )?;
    }
    f.flush()?;
    drop(f);
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(())
}

/// Plots updates/s against batch size (log scale), one line per
/// (engine, query, threads), as SVG.
pub fn write_svg(path: &Path, rows: &[SweepRow]) -> Result<()> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let engines: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.engine.as_str()).collect();
    for r in rows {
        let mut name = format!(
            "{}, {} thread{}",
            r.query,
            r.threads,
            if r.threads == 1 { "" } else { "s" }
        );
        if r.threads == 0 {
            name = format!("{}, all threads", r.query);
        }
        if engines.len() > 1 {
            name = format!("{}: {name}", r.engine);
        }
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push((r.batch as f64, r.updates_per_second)),
            None => series.push((name, vec![(r.batch as f64, r.updates_per_second)])),
        }
    }
    for (_, pts) in &mut series {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let xmin = rows.iter().map(|r| r.batch).min().unwrap_or(1).max(1) as f64;
    let xmax = rows.iter().map(|r| r.batch).max().unwrap_or(1).max(1) as f64;
    let (xmin, xmax) = if xmin == xmax {
        (xmin / 2.0, xmax * 2.0)
    } else {
        (xmin / 1.2, xmax * 1.2)
    };
    let mut keys: Vec<f64> = rows.iter().map(|r| r.batch as f64).collect();
    keys.sort_by(f64::total_cmp);
    keys.dedup();
    let ymax = rows.iter().map(|r| r.updates_per_second).fold(0.0, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };

    let err = |e: &dyn std::fmt::Display| anyhow!("{}: cannot draw the plot: {e}", path.display());
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("csm sweep: throughput vs batch size", ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d((xmin..xmax).log_scale().with_key_points(keys), 0f64..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("batch size (updates)")
        .y_desc("updates / s")
        .x_label_formatter(&|x| format!("{}", x.round() as u64))
        .y_label_formatter(&|y| output::per_sec(*y).trim_end_matches("/s").to_string())
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

pub fn run(args: SweepArgs) -> Result<()> {
    let engines = engine_list(&args.engine)?;
    let batches: Vec<usize> = input::parse_list("--batches", &args.batches)?;
    if batches.contains(&0) {
        bail!("--batches: batch sizes must be at least 1");
    }
    let threads: Vec<usize> = input::parse_list("--threads", &args.threads)?;
    let query_specs = input::split_list(&args.queries);
    if query_specs.is_empty() {
        bail!("--queries: no query named");
    }
    let mut queries: Vec<LoadedQuery> = query_specs
        .iter()
        .map(|s| input::load_query(s, None))
        .collect::<Result<_>>()?;
    input::order_strategy(&args.order)?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("{}: cannot create directory", args.out.display()))?;

    let mut g = args.graph.load()?;
    let mut w = g.workload(&args.stream, Some(DEFAULT_SWEEP_FRACTION))?;
    for q in &mut queries {
        input::drop_zero_edge_labels(&mut w.g0, &w.updates, &mut q.query);
    }
    if w.updates.is_empty() {
        bail!("the stream is empty; nothing to sweep");
    }
    let strictness = if args.graph.read.lenient {
        Strictness::Lenient
    } else {
        Strictness::Strict
    };
    let total = engines.len() * queries.len() * threads.len() * batches.len();
    let pb = output::progress_bar(total as u64, !args.json, "runs");
    let mut rows = Vec::with_capacity(total);
    for engine in &engines {
        for q in &queries {
            for &t in &threads {
                let opts = input::engine_options(t, &args.order)?;
                for &b in &batches {
                    pb.set_message(format!("{engine} {} t={t} b={b}", q.name));
                    let run = || -> Result<Totals> {
                        let mut e = registry::continuous_engine(engine, &opts)?;
                        e.init(&w.g0, &q.query)?;
                        let deadline = limit::deadline(args.time_limit)?;
                        process_stream_until(e.as_mut(), &w.updates, &w.source, b, strictness, deadline, |_, _, _| {})
                    };
                    let tot = match run() {
                        Ok(tot) => tot,
                        Err(err) if matches!(err.downcast_ref(), Some(EngineError::Unsupported { .. })) => {
                            pb.suspend(|| {
                                eprintln!("note: {engine} skipped for {} (threads {t}, batch {b}): {err}", q.name)
                            });
                            pb.inc(1);
                            continue;
                        }
                        Err(err) => return Err(err),
                    };
                    let row = SweepRow {
                        engine: engine.clone(),
                        query: q.name.clone(),
                        batch: b,
                        threads: t,
                        updates: tot.updates,
                        positive: tot.positive,
                        negative: tot.negative,
                        seconds: tot.seconds,
                        updates_per_second: tot.updates_per_second(),
                        update_seconds: tot.update_seconds,
                        timed_out: tot.timed_out,
                    };
                    if args.json {
                        output::json_line(&json!(row));
                    }
                    rows.push(row);
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    if rows.is_empty() {
        bail!("every run was skipped; nothing to write");
    }
    let csv = args.out.join("sweep.csv");
    let svg = args.out.join("sweep.svg");
    write_csv(&csv, &rows)?;
    write_svg(&svg, &rows)?;
    if !args.json {
        let mut t = output::Table::new([
            "engine",
            "query",
            "batch",
            "threads",
            "positive",
            "negative",
            "seconds",
            "updates/s",
        ]);
        for r in &rows {
            t.row([
                r.engine.clone(),
                r.query.clone(),
                r.batch.to_string(),
                r.threads.to_string(),
                r.positive.to_string(),
                r.negative.to_string(),
                format!("{:.4}", r.seconds),
                if r.timed_out {
                    format!("{:.0} (time limit)", r.updates_per_second)
                } else {
                    format!("{:.0}", r.updates_per_second)
                },
            ]);
        }
        print!("{}", t.render());
    }
    eprintln!("wrote {} and {}", csv.display(), svg.display());
    Ok(())
}
