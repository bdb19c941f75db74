//! Quick probe of the one-update-at-a-time workload of the README's
//! performance table: `cargo run --release -p csm-baselines --example
//! delta_probe -- GRAPH THREADS QUERY...` (SNAP edge list, unlabelled,
//! 2% mixed stream with seed 1). The `csm stream` command is the full tool.
//! `CSM_MIN_PARALLEL_WORK=W` sets [`CpuEngine::min_parallel_work`].
//! The stream goes through `process_each` (with several threads, runs of
//! updates are matched concurrently); `CSM_NO_OVERLAP=1` makes one
//! `process` call per update instead.

use std::sync::Arc;
use std::time::Instant;

use csm_baselines::CpuEngine;
use csm_engine::{Batch, ContinuousMatcher};
use csm_graph::format::{read_graph_file, ReadOptions};
use csm_graph::gen::{make_stream, standard_query, StreamAmount};
use csm_graph::Strictness;
use csm_planner::{GcsmOrder, QueryGraph};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: delta_probe GRAPH THREADS QUERY...")?;
    let threads: usize = args.get(1).map_or(Ok(1), |s| s.parse())?;
    let (g, _) = read_graph_file(path, None, &ReadOptions::default())?;
    let (g0, stream) = make_stream(&g, StreamAmount::Fraction(0.02), 0.5, 1);
    println!(
        "graph {} vertices {} edges; stream {} updates; threads {}",
        g.num_vertices(),
        g.num_edges(),
        stream.len(),
        threads
    );
    let overlap = std::env::var("CSM_NO_OVERLAP").map_or(true, |v| v.is_empty());
    for name in &args[2..] {
        let q = QueryGraph::from_data(&standard_query(name).ok_or("unknown query")?)?;
        let mut eng = CpuEngine::new(threads, Arc::new(GcsmOrder))?;
        if let Some(w) = std::env::var("CSM_MIN_PARALLEL_WORK").ok().and_then(|s| s.parse().ok()) {
            eng = eng.min_parallel_work(w);
        }
        eng.init(&g0, &q)?;
        let (mut pos, mut neg, mut secs, mut upd) = (0u64, 0u64, 0f64, 0f64);
        let t = Instant::now();
        let mut results = Vec::with_capacity(stream.len());
        if overlap {
            eng.process_each(
                Batch {
                    updates: &stream,
                    source: "stream",
                    strictness: Strictness::Strict,
                },
                &mut results,
            )?;
        } else {
            for u in &stream {
                results.push(eng.process(Batch {
                    updates: std::slice::from_ref(u),
                    source: "stream",
                    strictness: Strictness::Strict,
                })?);
            }
        }
        for r in &results {
            pos += r.positive;
            neg += r.negative;
            secs += r.seconds;
            upd += r.update_seconds;
        }
        println!(
            "{name:>10}: results {:>12} (+{pos} -{neg})  match {secs:.3}s  update {upd:.3}s  wall {:.3}s  pool from {}",
            pos + neg,
            t.elapsed().as_secs_f64(),
            eng.parallel_bound()
        );
    }
    Ok(())
}
