//! Times the parts of the kept-edges pass of a static count (keeping the
//! query's label triples, dropping isolated vertices, the CSR build) on a
//! pool of THREADS threads, ROUNDS times over one loaded graph.
//!
//! `cargo run --release -p csm-bench --example keep_probe -- GRAPH QUERY[:labels] THREADS ROUNDS`

use std::time::Instant;

use csm_bench::input::standard_query_data;
use csm_engine::EdgesApart;
use csm_graph::format::{read_graph_file, ReadOptions};
use csm_graph::{compact, CsrGraph, GraphView};
use csm_planner::QueryGraph;

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [graph, query, threads, rounds] = &args[..] else {
        return Err("usage: keep_probe GRAPH QUERY[:l0,l1,..] THREADS ROUNDS".into());
    };
    let (g, _) = read_graph_file(graph, None, &ReadOptions::default())?;
    let qd = standard_query_data(query)?.ok_or("unknown standard query")?;
    let q = QueryGraph::from_data(&qd)?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.parse()?).build()?;
    pool.install(|| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        for r in 0..rounds.parse::<usize>()? {
            let t0 = Instant::now();
            let kept = EdgesApart::kept(&g, &q).ok_or("nothing to keep apart")?;
            let t1 = Instant::now();
            let counted = compact::without_isolated(&kept, 0.5).unwrap_or(kept);
            let t2 = Instant::now();
            let csr = CsrGraph::from_data(&counted)?;
            let t3 = Instant::now();
            println!(
                "round {r}: keep {:.4} s, isolated {:.4} s, csr {:.4} s ({} vertices, {} edges)",
                (t1 - t0).as_secs_f64(),
                (t2 - t1).as_secs_f64(),
                (t3 - t2).as_secs_f64(),
                csr.num_vertices(),
                csr.num_edges()
            );
        }
        Ok(())
    })
}
