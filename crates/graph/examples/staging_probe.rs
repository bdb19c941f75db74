//! Times the graph side of batch processing (validation, staging, commit)
//! on its own, sequential against parallel, for the thread-scaling figures
//! of the README: `cargo run --release -p csm-graph --example staging_probe
//! -- GRAPH [BATCH] [THREADS...]` (10% mixed stream, seed 1, batches of
//! BATCH = 4096 updates; each row is the best of 3 passes; one thread runs
//! the sequential `check` / `stage` / `commit`).

use std::time::Instant;

use csm_graph::format::{read_graph_file, ReadOptions};
use csm_graph::gen::{make_stream, StreamAmount};
use csm_graph::{DynamicGraph, Strictness};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: staging_probe GRAPH [BATCH] [THREADS...]")?;
    let batch: usize = args.get(1).map_or(Ok(4096), |s| s.parse())?;
    let threads: Vec<usize> = match args.get(2..) {
        Some(t) if !t.is_empty() => t.iter().map(|s| s.parse()).collect::<Result<_, _>>()?,
        _ => vec![1, 2, 4, 8, 16],
    };
    let (g, _) = read_graph_file(path, None, &ReadOptions::default())?;
    let (g0, updates) = make_stream(&g, StreamAmount::Fraction(0.1), 0.5, 1);
    let base = DynamicGraph::from_data(&g0)?;
    println!(
        "{} updates in batches of {batch}; ms for all batches (best of 3)",
        updates.len()
    );
    println!("threads  check  stage  commit  stage+commit");
    for &t in &threads {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build()?;
        let mut best = [f64::MAX; 4];
        for _ in 0..3 {
            let mut dg = base.clone();
            let mut sums = [0.0; 4];
            for chunk in updates.chunks(batch) {
                let t0 = Instant::now();
                if t == 1 {
                    dg.check(chunk, "s")?;
                } else {
                    pool.install(|| dg.check_parallel(chunk, "s"))?;
                }
                let t1 = Instant::now();
                if t == 1 {
                    dg.stage(chunk, "s", Strictness::Strict)?;
                } else {
                    pool.install(|| dg.stage_parallel(chunk, "s", Strictness::Strict).map(drop))?;
                }
                let t2 = Instant::now();
                if t == 1 {
                    dg.commit();
                } else {
                    pool.install(|| dg.commit_parallel());
                }
                let t3 = Instant::now();
                sums[0] += (t1 - t0).as_secs_f64();
                sums[1] += (t2 - t1).as_secs_f64();
                sums[2] += (t3 - t2).as_secs_f64();
                sums[3] += (t3 - t1).as_secs_f64();
            }
            for (b, s) in best.iter_mut().zip(sums) {
                *b = b.min(s);
            }
        }
        println!(
            "{t:>7} {:>6.2} {:>6.2} {:>7.2} {:>13.2}",
            best[0] * 1e3,
            best[1] * 1e3,
            best[2] * 1e3,
            best[3] * 1e3
        );
    }
    Ok(())
}
