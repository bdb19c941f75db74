//! One-update-at-a-time continuous matching (batch size 1) of a 2% mixed
//! stream (seed 1, GCSM protocol) with the `cpu` engine, on 1 thread and on
//! all threads, for triangle, 4-clique, 4-cycle, diamond and house.
//!
//! Data: `shared/data/email-Enron.txt` next to the workspace (unlabelled:
//! every vertex label 0) when it exists, else an R-MAT graph of similar size
//! (2^15 vertices, 183,831 edges, unlabelled). The benchmark id names which:
//! `delta/enron/<query>/threads-1` or `delta/rmat-synthetic/<query>/threads-1`.
//!
//! Each criterion iteration is one update, with its own result: a sample's
//! updates go through `process_each`, which on several threads matches runs
//! of them concurrently. The stream is replayed from a freshly initialised
//! engine when it runs out (re-initialisation is not timed). Throughput is
//! reported in updates/s.
//!
//! Run one query, e.g.:
//! `cargo bench -p csm-bench --bench delta -- 'enron/triangle/threads-1$'`

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use csm_baselines::registry::{self, EngineOptions};
use csm_engine::{Batch, ContinuousMatcher};
use csm_graph::format::{read_graph_file, Format, Labeller, ReadOptions};
use csm_graph::gen::{self, StreamAmount, DEFAULT_INSERT_PROB, RMAT_STANDARD};
use csm_graph::{GraphData, LocatedUpdate, Strictness};
use csm_planner::QueryGraph;

const ENRON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/email-Enron.txt");
const QUERIES: &[&str] = &["triangle", "4-clique", "4-cycle", "diamond", "house"];
const STREAM_FRACTION: f64 = 0.02;
const STREAM_SEED: u64 = 1;

/// The data graph and its name in the benchmark ids.
fn data() -> (&'static str, GraphData) {
    if Path::new(ENRON).exists() {
        let opts = ReadOptions {
            lenient: false,
            labeller: Labeller::Constant,
            ..ReadOptions::default()
        };
        match read_graph_file(ENRON, Some(Format::Snap), &opts) {
            Ok((g, _)) => return ("enron", g),
            Err(e) => eprintln!("cannot read {ENRON} ({e}); using a synthetic R-MAT graph"),
        }
    }
    // Similar size to email-Enron (36,692 vertices, 183,831 edges).
    let (a, b, c) = RMAT_STANDARD;
    let n = 1usize << 15;
    let pairs = gen::rmat(15, 183_831, a, b, c, 7);
    ("rmat-synthetic", gen::graph_from_pairs(n, &pairs, vec![0; n], None))
}

struct Replay<'a> {
    g0: &'a GraphData,
    q: &'a QueryGraph,
    updates: &'a [LocatedUpdate],
    opts: EngineOptions,
    engine: Box<dyn ContinuousMatcher>,
    pos: usize,
}

impl<'a> Replay<'a> {
    fn fresh(g0: &GraphData, q: &QueryGraph, opts: &EngineOptions) -> Box<dyn ContinuousMatcher> {
        let mut e = registry::continuous_engine("cpu", opts).expect("cpu engine");
        e.init(g0, q).expect("init");
        e
    }

    fn new(g0: &'a GraphData, q: &'a QueryGraph, updates: &'a [LocatedUpdate], opts: EngineOptions) -> Self {
        let engine = Self::fresh(g0, q, &opts);
        Replay {
            g0,
            q,
            updates,
            opts,
            engine,
            pos: 0,
        }
    }

    /// Processes the next `iters` updates one at a time (through
    /// `process_each`, which overlaps them on several threads; results per
    /// update); returns the time spent in it.
    fn run(&mut self, iters: u64) -> Duration {
        let mut total = Duration::ZERO;
        let mut left = iters as usize;
        let mut results = Vec::new();
        while left > 0 {
            if self.pos == self.updates.len() {
                self.engine = Self::fresh(self.g0, self.q, &self.opts);
                self.pos = 0;
            }
            let n = left.min(self.updates.len() - self.pos);
            let batch = Batch {
                updates: &self.updates[self.pos..self.pos + n],
                source: "<generated>",
                strictness: Strictness::Strict,
            };
            results.clear();
            let t = Instant::now();
            self.engine.process_each(batch, &mut results).expect("valid stream");
            total += t.elapsed();
            black_box(&results);
            self.pos += n;
            left -= n;
        }
        total
    }
}

fn bench(c: &mut Criterion) {
    let (name, g) = data();
    let (g0, updates) = gen::make_stream(
        &g,
        StreamAmount::Fraction(STREAM_FRACTION),
        DEFAULT_INSERT_PROB,
        STREAM_SEED,
    );
    eprintln!(
        "delta: {name}: {} vertices, {} edges, {} updates (2% mixed, seed {STREAM_SEED})",
        g.num_vertices(),
        g.num_edges(),
        updates.len()
    );
    let mut group = c.benchmark_group(format!("delta/{name}"));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    for &qname in QUERIES {
        let q = QueryGraph::from_data(&gen::standard_query(qname).expect("standard query")).expect("valid query");
        for (tname, threads) in [("threads-1", 1), ("threads-all", 0)] {
            let opts = EngineOptions {
                threads,
                ..EngineOptions::default()
            };
            let mut replay = Replay::new(&g0, &q, &updates, opts);
            group.bench_function(format!("{qname}/{tname}"), |b| b.iter_custom(|iters| replay.run(iters)));
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
