//! The GPU engine's host work before a kernel, timed without a GPU: a
//! batch's seeds ([`QueryPlans::seeds`], grouped by endpoint labels,
//! side by side with the per-plan loop of `csm_planner::for_each_seed`)
//! and their split into kernel tasks with match v6's options, on an R-MAT
//! graph of 16 edges a vertex and 8 labels, 5 batches each of 64, 1,024
//! and 8,192 updates, the bench's five queries. Each figure is the fastest
//! of 7 repeats (warm caches).
//!
//! `cargo run --release -p csm-gpu --example host_prep [SCALE]` (default
//! 20; the bench's 500 M-edge graph is scale 25; scale 23 needs about
//! 8 GB).

use csm_gpu::plan::{write_task_words, TaskOptions, TASK_WORDS};
use csm_gpu::shares::LabelShares;
use csm_gpu::QueryPlans;
use csm_graph::gen::{
    assign_labels, graph_from_pairs, make_stream, rmat, standard_query, with_labels, Labeller, StreamAmount,
    RMAT_STANDARD,
};
use csm_graph::{DynamicGraph, Label, Strictness};
use csm_planner::{GcsmOrder, GraphStats, QueryGraph};
use std::time::Instant;

/// Milliseconds of the fastest of 7 runs of `f`, and its last result.
fn fastest(f: &mut dyn FnMut() -> usize) -> (f64, usize) {
    let (mut best, mut n) = (f64::MAX, 0);
    for _ in 0..7 {
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best * 1e3, n)
}

fn main() -> Result<(), String> {
    let scale: u32 = match std::env::args().nth(1) {
        None => 20,
        Some(s) => s
            .parse()
            .ok()
            .filter(|s| (8..=28).contains(s))
            .ok_or_else(|| format!("SCALE must be an integer from 8 to 28, not {s:?}"))?,
    };
    let n = 1usize << scale;
    let (a, b, c) = RMAT_STANDARD;
    let labels = assign_labels(n, &Labeller::Uniform { num_labels: 8, seed: 7 });
    let g = graph_from_pairs(n, &rmat(scale, n * 16, a, b, c, 7), labels, None);
    let sizes = [64usize, 1024, 8192];
    let total: usize = sizes.iter().map(|s| s * 5).sum();
    let (g0, stream) = make_stream(&g, StreamAmount::Count(total), 0.5, 1);
    let mut graph = DynamicGraph::from_data(&g0).map_err(|e| e.to_string())?;
    let stats = GraphStats::of(&graph);
    let shares = LabelShares::of(&graph);
    let mut queries = Vec::new();
    for name in ["house", "5-cycle", "prism", "hexagon-2chords", "7-wheel"] {
        let q = standard_query(name).ok_or("a standard query")?;
        let l: Vec<Label> = (0..q.labels.len() as u32).map(|i| i % 8).collect();
        let q = QueryGraph::from_data(&with_labels(&q, &l)).map_err(|e| e.to_string())?;
        let mut qp = QueryPlans::new(&q, &GcsmOrder, &stats, true).map_err(|e| e.to_string())?;
        qp.set_label_shares(&shares);
        queries.push((name, qp));
    }
    let mut opts = TaskOptions::v6();
    // about what an H100's or H200's grid asks for
    opts.target_tasks = 4224;
    println!("updates query            seeds grouped_ms per_plan_ms  tasks split_ms +words_ms");
    let mut off = 0;
    for &size in &sizes {
        for _ in 0..5 {
            let b = &stream[off..off + size];
            off += size;
            let t = Instant::now();
            graph
                .stage(b, "stream", Strictness::Strict)
                .map_err(|e| e.to_string())?;
            let stage_ms = t.elapsed().as_secs_f64() * 1e3;
            let delta = graph.pending_delta().cloned().unwrap_or_default();
            // what HostGraph::sync writes after staging (every touched list
            // whole) against the appended parts and marks alone
            let (whole, appended): (usize, usize) = graph
                .touched()
                .iter()
                .map(|&v| {
                    let (base, add) = graph.raw_list(v);
                    (base.len() + add.len(), add.len())
                })
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            let marks = graph.pending_marks().len();
            println!(
                "{size:7} mirror after staging: {} touched lists, {whole} words whole, {appended} appended + {marks} marks",
                graph.touched().len()
            );
            for (name, qp) in &queries {
                let (grouped, n) = fastest(&mut || qp.seeds(&graph, &delta).len());
                let (per_plan, _) = fastest(&mut || {
                    let mut n = 0;
                    for p in &qp.plans {
                        csm_planner::for_each_seed(&graph, p, &delta, |_, _| n += 1);
                    }
                    n
                });
                let seeds = qp.seeds(&graph, &delta);
                let (split, tasks) = fastest(&mut || qp.tasks(&graph, &seeds, &opts).len());
                let (words, _) = fastest(&mut || {
                    let t = qp.tasks(&graph, &seeds, &opts);
                    let mut w = vec![0u32; t.len() * TASK_WORDS];
                    write_task_words(&t, &mut w);
                    w.len()
                });
                println!("{size:7} {name:16} {n:5} {grouped:11.3} {per_plan:11.3} {tasks:6} {split:8.3} {words:9.3}");
            }
            let t = Instant::now();
            graph.commit();
            let commit_ms = t.elapsed().as_secs_f64() * 1e3;
            println!("{size:7} staged in {stage_ms:.3} ms, committed in {commit_ms:.3} ms");
        }
    }
    Ok(())
}
