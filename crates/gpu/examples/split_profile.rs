//! Times the host part of a GPU batch that needs no GPU: the seeds and the
//! task split ([`QueryPlans::tasks`]) under four [`TaskOptions`] settings, on
//! an R-MAT graph built here (the bench's stream and queries, smaller).
//!
//! ```text
//! cargo run --release -p csm-gpu --example split_profile -- [SCALE] [EDGES] [BATCHES] [WARPS]
//! ```
//!
//! Defaults: scale 21, 30 M edges, 3 batches per size, 4,224 kernel warps
//! (the H100's grid: 1,056 blocks of 4 warps). Prints, per batch size and
//! query, the median seeds and split time and the task count of match v4's
//! and v5's options, of the current defaults (match v6: batches of many
//! seeds only sliced) and of v6 with small batches only sliced too
//! ("noexp").

use std::time::Instant;

use csm_gpu::plan::{QueryPlans, TaskOptions};
use csm_gpu::MatcherConfig;
use csm_graph::gen::{assign_labels, graph_from_pairs, make_stream, rmat, standard_query, with_labels};
use csm_graph::gen::{Labeller, StreamAmount};
use csm_graph::{DynamicGraph, Label, Strictness};
use csm_planner::{GcsmOrder, GraphStats, QueryGraph};

/// One batch of one query: seeds, seed seconds, and per setting (tasks,
/// split seconds).
type Run = (usize, f64, Vec<(usize, f64)>);

fn arg(i: usize, default: f64) -> f64 {
    std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let scale = arg(1, 21.0) as u32;
    let edges = arg(2, 30e6) as usize;
    let batches = arg(3, 3.0) as usize;
    let warps = arg(4, 4224.0) as usize;
    let t = Instant::now();
    let pairs = rmat(scale, edges, 0.45, 0.22, 0.22, 2024);
    let n = 1usize << scale;
    let labels = assign_labels(n, &Labeller::Uniform { num_labels: 8, seed: 7 });
    let g = graph_from_pairs(n, &pairs, labels, None);
    drop(pairs);
    let sizes = [64usize, 1024, 8192];
    let total: usize = sizes.iter().map(|s| s * batches).sum();
    let (g0, stream) = make_stream(&g, StreamAmount::Count(total), 0.5, 2025);
    drop(g);
    let mut graph = DynamicGraph::from_data(&g0).expect("graph");
    drop(g0);
    println!(
        "R-MAT scale {scale}, {} edges, max degree {}, built in {:.1} s",
        edges,
        csm_graph::GraphView::max_degree(&graph),
        t.elapsed().as_secs_f64()
    );
    let stats = GraphStats::of(&graph);
    let names = ["house", "5-cycle", "prism", "hexagon-2chords", "7-wheel"];
    let queries: Vec<QueryPlans> = names
        .iter()
        .map(|name| {
            let q = standard_query(name).expect("query");
            let l: Vec<Label> = (0..q.labels.len() as u32).map(|i| i % 8).collect();
            let q = QueryGraph::from_data(&with_labels(&q, &l)).expect("query");
            QueryPlans::new(&q, &GcsmOrder, &stats, true).expect("plans")
        })
        .collect();
    let resolve = |mut o: TaskOptions| {
        if o.target_tasks == TaskOptions::AUTO {
            o.target_tasks = 2 * warps;
        }
        o
    };
    let now = resolve(MatcherConfig::default().tasks);
    let settings = [
        ("v4", resolve(TaskOptions::v4())),
        ("v5", resolve(TaskOptions::v5())),
        ("now", now),
        (
            "noexp",
            TaskOptions {
                expand_few: false,
                ..now
            },
        ),
    ];
    // With EMULATE=1, each task runs through the kernel's CPU model and the
    // table gets a load-balance proxy: max(longest task, total / warps).
    let emulate = std::env::var_os("EMULATE").is_some();
    println!("| batch | query | seeds | seeds ms | {} |", {
        let h: Vec<String> = settings
            .iter()
            .map(|(s, _)| format!("{s} tasks | {s} split ms"))
            .collect();
        h.join(" | ")
    });
    let mut offset = 0;
    for &size in &sizes {
        let mut acc: Vec<Vec<Run>> = vec![Vec::new(); queries.len()];
        for _ in 0..batches {
            let ups = &stream[offset..offset + size];
            offset += size;
            graph.stage(ups, "stream", Strictness::Strict).expect("stage");
            let delta = graph.pending_delta().expect("staged").clone();
            for (qi, qp) in queries.iter().enumerate() {
                let t = Instant::now();
                let seeds = qp.seeds(&graph, &delta);
                let seed_s = t.elapsed().as_secs_f64();
                let per: Vec<(usize, f64)> = settings
                    .iter()
                    .map(|(_, o)| {
                        let t = Instant::now();
                        let tasks = qp.tasks(&graph, &seeds, o);
                        let split = t.elapsed().as_secs_f64();
                        if emulate && size <= 1024 {
                            let (mut sum, mut max) = (0f64, 0f64);
                            for t in &tasks {
                                let t0 = Instant::now();
                                csm_gpu::emulate::emulate(&graph, None, &qp.encoded, Some(std::slice::from_ref(t)), 1024);
                                let x = t0.elapsed().as_secs_f64();
                                sum += x;
                                max = max.max(x);
                            }
                            println!(
                                "   size {size} query {qi} tasks {}: emulated total {:.1} ms, longest {:.2} ms, proxy {:.2} ms",
                                tasks.len(),
                                sum * 1e3,
                                max * 1e3,
                                max.max(sum / warps as f64) * 1e3
                            );
                        }
                        (tasks.len(), split)
                    })
                    .collect();
                acc[qi].push((seeds.len(), seed_s, per));
            }
            graph.commit();
        }
        for (qi, runs) in acc.iter().enumerate() {
            let seeds = median(runs.iter().map(|r| r.0 as f64).collect());
            let seed_ms = median(runs.iter().map(|r| r.1).collect()) * 1e3;
            let cols: Vec<String> = (0..settings.len())
                .map(|k| {
                    let tasks = median(runs.iter().map(|r| r.2[k].0 as f64).collect());
                    let ms = median(runs.iter().map(|r| r.2[k].1).collect()) * 1e3;
                    format!("{tasks:.0} | {ms:.3}")
                })
                .collect();
            println!(
                "| {size} | {} | {seeds:.0} | {seed_ms:.3} | {} |",
                names[qi],
                cols.join(" | ")
            );
        }
    }
}
