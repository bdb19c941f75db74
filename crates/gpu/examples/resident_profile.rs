//! Times the host bookkeeping of the resident cache (match v7) without a
//! GPU: [`ResidentLayout::refresh`] and [`Patch::pack`] per batch, on an
//! R-MAT graph built here (the bench's stream, smaller).
//!
//! ```text
//! cargo run --release -p csm-gpu --example resident_profile -- [SCALE] [EDGES] [BUDGET_FRACTION]
//! ```

use std::time::Instant;

use csm_gpu::cache::top_degree;
use csm_gpu::resident::{ResidentCache, ResidentLayout, Slack};
use csm_graph::gen::{assign_labels, graph_from_pairs, make_stream, rmat, Labeller, StreamAmount};
use csm_graph::{DynamicGraph, Strictness};

fn arg(i: usize, default: f64) -> f64 {
    std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn main() {
    let scale = arg(1, 21.0) as u32;
    let edges = arg(2, 30e6) as usize;
    let frac = arg(3, 0.05);
    let pairs = rmat(scale, edges, 0.45, 0.22, 0.22, 2024);
    let n = 1usize << scale;
    let labels = assign_labels(n, &Labeller::Uniform { num_labels: 8, seed: 7 });
    let g = graph_from_pairs(n, &pairs, labels, None);
    drop(pairs);
    let sizes = [64usize, 1024, 8192];
    let (g0, stream) = make_stream(&g, StreamAmount::Count(sizes.iter().sum::<usize>() * 3), 0.5, 2025);
    drop(g);
    let mut graph = DynamicGraph::from_data(&g0).expect("graph");
    drop(g0);
    let bytes = 4 * edges * 2;
    let ranked = top_degree(&graph, 1 << 20);
    let t = Instant::now();
    let (mut layout, patch) = ResidentLayout::build(
        &graph,
        &ranked,
        (bytes as f64 * frac) as usize,
        ResidentCache::FILL,
        Slack::default(),
    );
    // RESIDENT_SERIAL_BELOW=n: ResidentLayout::serial_below (match v8).
    if let Some(n) = std::env::var("RESIDENT_SERIAL_BELOW").ok().and_then(|s| s.parse().ok()) {
        layout.serial_below = n;
    }
    let mut buf = vec![0u32; patch.packed_words()];
    patch.pack(&graph, &mut buf);
    println!(
        "scale {scale}, {edges} edges: {} lists, {} MB, fill {:.1} ms",
        layout.live(),
        layout.bytes() >> 20,
        t.elapsed().as_secs_f64() * 1e3
    );
    let mut off = 0;
    for &size in &sizes {
        for b in 0..3 {
            graph.stage(&stream[off..off + size], "s", Strictness::Strict).unwrap();
            off += size;
            let changed = csm_gpu::engine::changed_vertices(&graph);
            let marks = graph.pending_marks().to_vec();
            // RESIDENT_REPEAT=n: time n refreshes of clones of the layout
            // (a steadier figure, and samples for a profiler).
            let repeat: usize = std::env::var("RESIDENT_REPEAT")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            if repeat > 0 {
                let mut clones = vec![layout.clone(); repeat];
                let t = Instant::now();
                for c in clones.iter_mut() {
                    std::hint::black_box(c.refresh_with(&graph, &changed, Some(&marks)));
                }
                println!(
                    "  {repeat} repeats: {:.3} ms each",
                    t.elapsed().as_secs_f64() * 1e3 / repeat as f64
                );
            }
            let t = Instant::now();
            let p = layout.refresh_with(&graph, &changed, Some(&marks));
            let t_ref = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut buf = vec![0u32; p.packed_words()];
            p.pack(&graph, &mut buf);
            println!(
                "size {size:5} batch {b}: {} changed, {} patched, {} whole, {} words; refresh {:.3} ms, pack {:.3} ms",
                changed.len(),
                p.patched,
                p.whole,
                p.packed_words(),
                t_ref * 1e3,
                t.elapsed().as_secs_f64() * 1e3
            );
            graph.commit();
            // Match v9: the merge is queued right after the commit.
            let t = Instant::now();
            let c = layout.commit_patch();
            println!(
                "             commit: {} merged, {} words, {:.3} ms",
                c.patched,
                c.packed_words(),
                t.elapsed().as_secs_f64() * 1e3
            );
        }
    }
}
