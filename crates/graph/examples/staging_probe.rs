//! Times the graph side of batch processing on its own: validation
//! (`check`), `stage` (validation plus marks and appends) and `commit` (the
//! reorganisation of Sec. V-A step 4). `cargo run --release -p csm-graph
//! --example staging_probe -- GRAPH [BATCH] [FRACTION]`: a mixed stream of
//! FRACTION = 10% of the edges (seed 1) in batches of BATCH = 4096 updates;
//! best of 5 passes, each on a fresh copy of G_0. Also prints the store's
//! memory against the CSR of the same graph, before and after the stream.
//! GRAPH `rmat:SCALE` generates an R-MAT of 16 edges a vertex (the GPU
//! bench's shape, 8 labels) instead of reading a file; the 4th argument is
//! the thread count (default 1).

use std::time::Instant;

use csm_graph::format::{read_graph_file, ReadOptions};
use csm_graph::gen::{assign_labels, graph_from_pairs, make_stream, rmat, Labeller, StreamAmount, RMAT_STANDARD};
use csm_graph::{CsrGraph, DynamicGraph, GraphView, Strictness, Version};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: staging_probe GRAPH [BATCH] [FRACTION]")?;
    let batch: usize = args.get(1).map_or(Ok(4096), |s| s.parse())?;
    let fraction: f64 = args.get(2).map_or(Ok(0.1), |s| s.parse())?;
    let threads: usize = args.get(3).map_or(Ok(1), |s| s.parse())?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let g = match path.strip_prefix("rmat:") {
        Some(scale) => {
            let scale: u32 = scale.parse()?;
            let n = 1usize << scale;
            let (a, b, c) = RMAT_STANDARD;
            let labels = assign_labels(n, &Labeller::Uniform { num_labels: 8, seed: 7 });
            graph_from_pairs(n, &rmat(scale, 16 * n, a, b, c, 7), labels, None)
        }
        None => read_graph_file(path, None, &ReadOptions::default())?.0,
    };
    let (g0, updates) = make_stream(&g, StreamAmount::Fraction(fraction), 0.5, 1);
    let base = DynamicGraph::from_data(&g0)?;
    let csr_bytes = CsrGraph::from_data(&g0)?.memory_bytes() as f64;
    let mut after = 0.0;
    let mut peak: f64 = 0.0;
    let mut best = [f64::MAX; 3];
    for _ in 0..5 {
        let mut dg = base.clone();
        let mut sums = [0.0; 3];
        for chunk in updates.chunks(batch) {
            let t0 = Instant::now();
            pool.install(|| dg.check(chunk, "stream"))?;
            let t1 = Instant::now();
            pool.install(|| dg.stage(chunk, "stream", Strictness::Strict).map(drop))?;
            let t2 = Instant::now();
            pool.install(|| dg.commit());
            let t3 = Instant::now();
            sums[0] += (t1 - t0).as_secs_f64();
            sums[1] += (t2 - t1).as_secs_f64();
            sums[2] += (t3 - t2).as_secs_f64();
            // the CSR of the graph as it stands (CsrGraph::memory_bytes's
            // formula): labels, offsets, both directions of every edge
            let per_entry = if dg.edge_labelled() { 8 } else { 4 };
            let csr = 12 * dg.num_vertices() + 8 + 2 * per_entry * dg.num_edges();
            peak = peak.max(dg.memory_bytes() as f64 / csr as f64);
        }
        after = dg.memory_bytes() as f64 / dg.to_csr(Version::Old).memory_bytes() as f64;
        for (b, s) in best.iter_mut().zip(sums) {
            *b = b.min(s);
        }
    }
    println!(
        "{} updates in batches of {batch}, {threads} threads, ms for all batches (best of 5): check {:.2} stage {:.2} commit {:.2}",
        updates.len(),
        best[0] * 1e3,
        best[1] * 1e3,
        best[2] * 1e3
    );
    println!(
        "DynamicGraph memory: {:.2}x the CSR of G_0 when built, {:.2}x the CSR of the final graph after the stream, \
         at most {:.2}x the CSR of the current graph after any batch",
        base.memory_bytes() as f64 / csr_bytes,
        after,
        peak
    );
    Ok(())
}
