//! `csm demo`: a self-contained run on generated data — a labelled R-MAT
//! graph, a 2% mixed update stream and the standard queries of up to five
//! vertices on the cpu engine — checking |M(G0)| + Σpositive − Σnegative
//! against a static count on the final graph.

use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use csm_baselines::registry::{self, EngineOptions};
use csm_graph::gen::{self, Labeller, StreamAmount, DEFAULT_INSERT_PROB, RMAT_STANDARD, STANDARD_QUERIES};
use csm_graph::{CsrGraph, DynamicGraph, Strictness, Version};
use csm_planner::QueryGraph;
use serde::Serialize;
use serde_json::json;

use crate::cmd::stream::process_stream;
use crate::output;

/// Arguments of `csm demo` (all optional).
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// 2^SCALE vertices.
    #[arg(long, value_name = "SCALE", default_value_t = DemoConfig::default().scale)]
    pub scale: u32,
    /// Number of edges.
    #[arg(long, value_name = "M", default_value_t = DemoConfig::default().edges)]
    pub edges: usize,
    /// Worker threads (0 = all cores).
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    pub threads: usize,
    /// Print one JSON object per query, then a summary.
    #[arg(long)]
    pub json: bool,
}

/// What the demo generates and runs.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoConfig {
    pub scale: u32,
    pub edges: usize,
    pub labels: u32,
    pub seed: u64,
    pub stream_fraction: f64,
    pub batch: usize,
    /// Standard queries with at most this many vertices are run.
    pub max_query_size: usize,
    pub threads: usize,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            scale: 15,
            edges: 100_000,
            labels: 4,
            seed: 42,
            stream_fraction: 0.02,
            batch: 256,
            max_query_size: 5,
            threads: 0,
        }
    }
}

/// One query's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct DemoRow {
    pub query: String,
    /// |M(G0)| (static count).
    pub initial_count: u64,
    pub positive: u64,
    pub negative: u64,
    /// Static count on the final graph.
    pub final_count: u64,
    /// initial + positive − negative == final.
    pub ok: bool,
    /// Matching time over the stream, seconds.
    pub seconds: f64,
    pub update_seconds: f64,
    pub updates_per_second: f64,
}

/// The demo's data and results.
#[derive(Clone, Debug, Serialize)]
pub struct DemoReport {
    pub vertices: usize,
    pub edges: usize,
    pub updates: usize,
    pub batches: usize,
    pub threads: usize,
    pub rows: Vec<DemoRow>,
}

impl DemoReport {
    pub fn ok(&self) -> bool {
        self.rows.iter().all(|r| r.ok)
    }
}

/// Generates the data and runs every query; never fails on a mismatch
/// (see [`DemoRow::ok`]).
pub fn run_demo(cfg: &DemoConfig) -> Result<DemoReport> {
    if cfg.scale > 30 {
        bail!("--scale {} is too large (at most 30)", cfg.scale);
    }
    if cfg.batch == 0 {
        bail!("batch size must be at least 1");
    }
    let n = 1usize << cfg.scale;
    let (a, b, c) = RMAT_STANDARD;
    let pairs = gen::rmat(cfg.scale, cfg.edges, a, b, c, cfg.seed);
    let labeller = Labeller::Uniform {
        num_labels: cfg.labels.max(1),
        seed: cfg.seed,
    };
    let g = gen::graph_from_pairs(n, &pairs, gen::assign_labels(n, &labeller), None);
    let (g0, updates) = gen::make_stream(
        &g,
        StreamAmount::Fraction(cfg.stream_fraction),
        DEFAULT_INSERT_PROB,
        cfg.seed,
    );

    let opts = EngineOptions {
        threads: cfg.threads,
        ..EngineOptions::default()
    };
    let stat = registry::static_engine("cpu", &opts)?;
    let csr0 = CsrGraph::from_data(&g0)?;
    let mut last = DynamicGraph::from_data(&g0)?;
    for chunk in updates.chunks(cfg.batch) {
        last.apply(chunk, "<generated>", Strictness::Strict)?;
    }
    let csr1 = last.to_csr(Version::New);

    let mut rows = Vec::new();
    for &name in STANDARD_QUERIES {
        let Some(data) = gen::standard_query(name) else {
            continue;
        };
        if data.num_vertices() > cfg.max_query_size {
            continue;
        }
        let q = QueryGraph::from_data(&data)?;
        let initial_count = stat.count(&csr0, &q)?;
        let mut engine = registry::continuous_engine("cpu", &opts)?;
        engine.init(&g0, &q)?;
        let t0 = Instant::now();
        let tot = process_stream(
            engine.as_mut(),
            &updates,
            "<generated>",
            cfg.batch,
            Strictness::Strict,
            |_, _, _| {},
        )?;
        tracing::debug!("{name}: stream processed in {:.3} s wall", t0.elapsed().as_secs_f64());
        let final_count = stat.count(&csr1, &q)?;
        let ok = (initial_count + tot.positive).checked_sub(tot.negative) == Some(final_count);
        rows.push(DemoRow {
            query: name.to_string(),
            initial_count,
            positive: tot.positive,
            negative: tot.negative,
            final_count,
            ok,
            seconds: tot.seconds,
            update_seconds: tot.update_seconds,
            updates_per_second: tot.updates_per_second(),
        });
    }
    let threads = if cfg.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        cfg.threads
    };
    Ok(DemoReport {
        vertices: n,
        edges: g.num_edges(),
        updates: updates.len(),
        batches: updates.len().div_ceil(cfg.batch),
        threads,
        rows,
    })
}

pub fn run(args: DemoArgs) -> Result<()> {
    let cfg = DemoConfig {
        scale: args.scale,
        edges: args.edges,
        threads: args.threads,
        ..DemoConfig::default()
    };
    if !args.json {
        println!(
            "csm demo: R-MAT graph with 2^{} = {} vertices, {} edges, {} uniform vertex labels (seed {});",
            cfg.scale,
            1u64 << cfg.scale.min(30),
            cfg.edges,
            cfg.labels,
            cfg.seed
        );
        println!(
            "a {}% mixed stream (half insertions, GCSM protocol) in batches of {}; cpu engine; queries labelled 0.",
            cfg.stream_fraction * 100.0,
            cfg.batch
        );
    }
    let t0 = Instant::now();
    let report = run_demo(&cfg)?;
    let wall = t0.elapsed().as_secs_f64();
    if args.json {
        for r in &report.rows {
            output::json_line(&json!(r));
        }
        output::json_line(&json!({
            "summary": true,
            "ok": report.ok(),
            "vertices": report.vertices,
            "edges": report.edges,
            "updates": report.updates,
            "batches": report.batches,
            "threads": report.threads,
            "wall_seconds": wall,
        }));
    } else {
        println!(
            "{} updates in {} batches, {} thread(s)\n",
            report.updates, report.batches, report.threads
        );
        let mut t = output::Table::new([
            "query",
            "|M(G0)|",
            "positive",
            "negative",
            "|M(G_end)|",
            "check",
            "matching",
            "updates/s",
        ]);
        for r in &report.rows {
            t.row([
                r.query.clone(),
                output::group(r.initial_count),
                format!("+{}", output::group(r.positive)),
                format!("-{}", output::group(r.negative)),
                output::group(r.final_count),
                if r.ok { "ok".into() } else { "MISMATCH".into() },
                output::secs(r.seconds),
                output::per_sec(r.updates_per_second),
            ]);
        }
        print!("{}", t.render());
        println!(
            "\ncheck: |M(G0)| + positive - negative = |M(G_end)| (static recount); total {:.1} s",
            wall
        );
    }
    if !report.ok() {
        let bad: Vec<&str> = report.rows.iter().filter(|r| !r.ok).map(|r| r.query.as_str()).collect();
        bail!(
            "MISMATCH: continuous counts disagree with the static recount for {}",
            bad.join(", ")
        );
    }
    Ok(())
}
