//! Component timings of the estimator on a generated R-MAT graph (no files
//! needed): `cargo bench -p csm-sampler --bench study`.
//!
//! For each query: one batch is staged, then the bench times exact
//! incremental matching (sequential, the planner's executor), the exact
//! access counter, and the merged walk (paper rule, sequential and rayon),
//! and reports coverage of the resulting unlimited cache. Environment:
//! `SAMPLER_SCALE` (17), `SAMPLER_EDGES` (1000000), `SAMPLER_LABELS` (8),
//! `SAMPLER_BATCH` (4096), `SAMPLER_QUERIES` (comma-separated standard
//! queries with labels, `;`-separated), `SAMPLER_REPS` (3).

use std::time::Instant;

use csm_graph::gen::{self, Labeller, StreamAmount, RMAT_STANDARD};
use csm_graph::{DynamicGraph, Strictness};
use csm_planner::{delta_plans, GcsmOrder, GraphStats, QueryGraph};
use csm_sampler::{
    cache_metrics, exact_access_counts, merged_walk, merged_walk_par, paper_walks, sequential_exact_match,
    ExecutionTree, Splitting,
};

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d)
}

/// Best of `reps` runs, seconds.
fn best<R>(reps: usize, mut f: impl FnMut() -> R) -> (f64, R) {
    let mut out = None;
    let mut t = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let s = Instant::now();
        let r = f();
        t = t.min(s.elapsed().as_secs_f64());
        out = Some(r);
    }
    (t, out.expect("ran"))
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments
    let scale: u32 = env("SAMPLER_SCALE", 17);
    let edges: usize = env("SAMPLER_EDGES", 1_000_000);
    let labels: u32 = env("SAMPLER_LABELS", 8);
    let batch: usize = env("SAMPLER_BATCH", 4096);
    let reps: usize = env("SAMPLER_REPS", 3);
    let queries: String = env(
        "SAMPLER_QUERIES",
        "triangle:0,1,2;diamond:0,1,2,3;house:0,1,2,3,4".to_string(),
    );

    let n = 1usize << scale;
    let (a, b, c) = RMAT_STANDARD;
    let pairs = gen::rmat(scale, edges, a, b, c, 1);
    let lab = if labels <= 1 {
        Labeller::Constant
    } else {
        Labeller::Uniform {
            num_labels: labels,
            seed: 1,
        }
    };
    let data = gen::graph_from_pairs(n, &pairs, gen::assign_labels(n, &lab), None);
    let (g0, stream) = gen::make_stream(&data, StreamAmount::Count(batch), 0.5, 2);
    let mut g = DynamicGraph::from_data(&g0).expect("valid graph");
    let delta = g
        .stage(&stream, "<bench>", Strictness::Strict)
        .expect("valid batch")
        .clone();
    println!("R-MAT scale {scale}, {edges} edges, {labels} labels, batch {batch}, best of {reps}");
    println!(
        "| query | R | D | walks | tree nodes | exact match (1 thr) | exact count | walk (1 thr) | walk (rayon) | FE (1 thr) | cov top1 | cov top5 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for spec in queries.split(';').filter(|s| !s.is_empty()) {
        let (name, ls) = spec.split_once(':').unwrap_or((spec, ""));
        let mut qd = gen::standard_query(name).expect("standard query");
        if !ls.is_empty() {
            let l: Vec<u32> = ls.split(',').map(|x| x.trim().parse().expect("label")).collect();
            qd = gen::with_labels(&qd, &l);
        }
        let q = QueryGraph::from_data(&qd).expect("valid query");
        let plans = delta_plans(&q, &GcsmOrder, &GraphStats::of(&g));
        let tree = ExecutionTree::new(&g, &plans, &delta);
        let m = paper_walks(
            delta.inserted.len() + delta.deleted.len(),
            tree.max_degree,
            tree.query_size(),
        );
        let (t_match, _) = best(reps, || sequential_exact_match(&g, &plans, &delta));
        let (t_count, exact) = best(reps, || exact_access_counts(&tree));
        let (t_walk, est) = best(reps, || merged_walk(&tree, m, 7, Splitting::Multinomial));
        let (t_par, _) = best(reps, || merged_walk_par(&tree, m, 7, Splitting::Multinomial));
        let cached: Vec<u32> = est.ranked().into_iter().map(|x| x.0).collect();
        let met = cache_metrics(&exact.counts, &cached);
        println!(
            "| {spec} | {} | {} | {m} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.1}% | {:.1}% | {:.1}% |",
            tree.num_roots(),
            tree.max_degree,
            exact.nodes,
            t_match * 1e3,
            t_count * 1e3,
            t_walk * 1e3,
            t_par * 1e3,
            100.0 * t_walk / t_match,
            100.0 * met.coverage_top1,
            100.0 * met.coverage_top5
        );
    }
}
