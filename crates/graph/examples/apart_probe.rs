//! Memory of a graph split by a query's label triples
//! ([`EdgeFilter::split`]): the matcher's `DynamicGraph` plus the set of the
//! other edges, against the CSR of the whole graph of the moment, over a
//! mixed stream. `cargo run --release -p csm-graph --example apart_probe --
//! GRAPH [LABELS] [FRACTION] [BATCH] [THREADS]`: SNAP or csm formats, LABELS = 8
//! uniform labels (seed 1) for a graph without them, a stream of FRACTION
//! = 10% of the edges (seed 1) in batches of BATCH = 4096; the filter keeps
//! the triples of a query with labels 0 and 1 on its edges (0-0 and 0-1).
//! Also prints the time spent routing the batches and applying them to
//! each store; with THREADS (default 1) above 1, routing and applying to
//! the set run inside a rayon pool of that many threads (on it for batches
//! of [`OtherEdges::PARALLEL_MIN_UPDATES`] or more).

use std::time::Instant;

use csm_graph::format::{read_graph_file, ReadOptions};
use csm_graph::gen::{make_stream, Labeller, StreamAmount};
use csm_graph::{DynamicGraph, EdgeFilter, GraphView, OtherEdges, Strictness, Update};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or("usage: apart_probe GRAPH [LABELS] [FRACTION] [BATCH] [THREADS]")?;
    let num_labels: u32 = args.get(1).map_or(Ok(8), |s| s.parse())?;
    let fraction: f64 = args.get(2).map_or(Ok(0.1), |s| s.parse())?;
    let batch: usize = args.get(3).map_or(Ok(4096), |s| s.parse())?;
    let threads: usize = args.get(4).map_or(Ok(1), |s| s.parse())?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let on_pool = |f: &mut (dyn FnMut() + Send)| if threads > 1 { pool.install(f) } else { f() };
    let options = ReadOptions {
        labeller: Labeller::Uniform { num_labels, seed: 1 },
        ..ReadOptions::default()
    };
    let (g, _) = read_graph_file(path, None, &options)?;
    let (g0, updates) = make_stream(&g, StreamAmount::Fraction(fraction), 0.5, 1);
    let filter = EdgeFilter::new([(0, 0, 0), (0, 1, 0)], false);
    let (kept, mut other) = filter.split(&g0).ok_or("an invalid graph")?;
    let mut dg = DynamicGraph::from_data(&kept)?;
    let per_entry = if g0.edge_labelled { 8 } else { 4 };
    let mut edges = g0.edges.len();
    let ratio = |dg: &DynamicGraph, other: &OtherEdges, edges: usize| {
        let csr = 12 * dg.num_vertices() + 8 + 2 * per_entry * edges;
        (dg.memory_bytes() + other.memory_bytes()) as f64 / csr as f64
    };
    let built = ratio(&dg, &other, edges);
    let mut peak: f64 = built;
    // seconds routing, applying to the graph, applying to the set
    let mut secs = [0.0f64; 3];
    for chunk in updates.chunks(batch) {
        let t0 = Instant::now();
        let mut routed = None;
        on_pool(&mut || routed = Some(other.route(&dg, &filter, chunk, "stream", Strictness::Strict)));
        let routed = routed.expect("routed");
        if let Some(e) = routed.error {
            return Err(e.into());
        }
        let t1 = Instant::now();
        dg.apply(&routed.graph, "stream", Strictness::Strict)?;
        let t2 = Instant::now();
        on_pool(&mut || other.apply(&routed));
        let t3 = Instant::now();
        secs[0] += (t1 - t0).as_secs_f64();
        secs[1] += (t2 - t1).as_secs_f64();
        secs[2] += (t3 - t2).as_secs_f64();
        for lu in chunk {
            match lu.update {
                Update::AddEdge(_) => edges += 1,
                Update::RemoveEdge(_) => edges -= 1,
                _ => {}
            }
        }
        peak = peak.max(ratio(&dg, &other, edges));
    }
    println!(
        "{} edges, {} kept; graph + other edges: {built:.2}x the whole graph's CSR when built, at most {peak:.2}x \
         after any batch ({} updates in batches of {batch})",
        g0.edges.len(),
        kept.edges.len(),
        updates.len()
    );
    println!(
        "ms for all batches: route {:.2}, graph {:.2}, other edges {:.2}",
        secs[0] * 1e3,
        secs[1] * 1e3,
        secs[2] * 1e3
    );
    Ok(())
}
