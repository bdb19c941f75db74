//! Times [`CsrGraph::from_data`] on a pool of THREADS threads, ROUNDS
//! times over one loaded graph (the whole graph, every edge).
//!
//! `cargo run --release -p csm-graph --example csr_probe -- GRAPH THREADS ROUNDS`

use std::time::Instant;

use csm_graph::format::{read_graph_file, ReadOptions};
use csm_graph::{CsrGraph, GraphView};

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [graph, threads, rounds] = &args[..] else {
        return Err("usage: csr_probe GRAPH THREADS ROUNDS".into());
    };
    let (g, _) = read_graph_file(graph, None, &ReadOptions::default())?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.parse()?).build()?;
    for r in 0..rounds.parse::<usize>()? {
        let t0 = Instant::now();
        let csr = pool.install(|| CsrGraph::from_data(&g))?;
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "round {r}: csr {secs:.4} s ({} vertices, {} edges)",
            csr.num_vertices(),
            csr.num_edges()
        );
        drop(csr);
    }
    Ok(())
}
