//! How well a resident set chosen by one rule would serve later batches,
//! without a GPU: exact list accesses (`csm_sampler::exact`) of each batch
//! on an R-MAT graph like the bench's (kept triples of one query), and, per
//! ranking, the share of lookups and bytes the set serves and a zero-copy
//! cost model of the rest (a random 128-byte line per list read, then
//! sequential lines; the device's measured 6 and 51 GB/s).
//!
//! ```text
//! cargo run --release -p csm-gpu --example resident_rank -- [SCALE] [EDGES] [QUERY] [BATCH]
//! ```

use csm_engine::EdgesApart;
use csm_gpu::cache::top_degree;
use csm_graph::gen::{assign_labels, graph_from_pairs, make_stream, rmat, standard_query, with_labels};
use csm_graph::gen::{Labeller, StreamAmount};
use csm_graph::{DynamicGraph, GraphView, Label, Strictness, Version, VertexId};
use csm_planner::{delta_plans, GcsmOrder, GraphStats, QueryGraph};
use csm_sampler::exact::exact_access_counts_par;
use csm_sampler::tree::ExecutionTree;

fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Modelled zero-copy time (ns) of one read of a list of `len` entries.
fn read_ns(len: usize) -> f64 {
    let lines = (4 * len).div_ceil(128).max(1) as f64;
    128.0 / 6.0 + (lines - 1.0) * 128.0 / 51.0
}

fn main() {
    let scale: u32 = arg(1, 21);
    let edges: usize = arg(2, 16_000_000);
    let name: String = arg(3, "house".to_string());
    let batch: usize = arg(4, 8192);
    let pairs = rmat(scale, edges, 0.45, 0.22, 0.22, 2024);
    let n = 1usize << scale;
    let labels = assign_labels(n, &Labeller::Uniform { num_labels: 8, seed: 7 });
    let g = graph_from_pairs(n, &pairs, labels, None);
    drop(pairs);
    let q = standard_query(&name).expect("query");
    let l: Vec<Label> = (0..q.labels.len() as u32).map(|i| i % 8).collect();
    let q = QueryGraph::from_data(&with_labels(&q, &l)).expect("query");
    let kept = EdgesApart::kept(&g, &q).expect("split");
    drop(g);
    let total_bytes = 4 * 2 * kept.edges.len() + 16 * n;
    let budget = total_bytes / 20;
    let (g0, stream) = make_stream(&kept, StreamAmount::Count(batch * 6), 0.5, 2025);
    drop(kept);
    let mut graph = DynamicGraph::from_data(&g0).expect("graph");
    drop(g0);
    let plans = delta_plans(&q, &GcsmOrder, &GraphStats::of(&graph));
    let mut per_batch = Vec::new();
    let mut ends_of: Vec<Vec<VertexId>> = Vec::new();
    for b in 0..6 {
        graph
            .stage(&stream[b * batch..(b + 1) * batch], "s", Strictness::Strict)
            .unwrap();
        let delta = graph.pending_delta().unwrap().clone();
        let mut ends: Vec<VertexId> = delta
            .inserted
            .iter()
            .chain(&delta.deleted)
            .flat_map(|e| [e.u, e.v])
            .collect();
        ends.sort_unstable();
        ends.dedup();
        ends_of.push(ends);
        let tree = ExecutionTree::new(&graph, &plans, &delta);
        let c = exact_access_counts_par(&tree);
        let mut v: Vec<(VertexId, f64)> = Vec::new();
        c.counts.for_each_nonzero(|x, w| v.push((x, w)));
        per_batch.push(v);
        graph.commit();
    }
    let len = |v: VertexId| graph.nbrs(v, Version::New).len();
    let take = |ranked: &[VertexId]| -> Vec<bool> {
        let mut inset = vec![false; n];
        let mut used = 0;
        for &v in ranked {
            let need = 16 + 4 * len(v);
            if used + need > budget {
                break;
            }
            used += need;
            inset[v as usize] = true;
        }
        inset
    };
    let by_score = |counts: &[(VertexId, f64)], score: &dyn Fn(f64, usize) -> f64| -> Vec<VertexId> {
        let mut s: Vec<(f64, VertexId)> = counts.iter().map(|&(v, c)| (score(c, len(v)), v)).collect();
        s.sort_by(|a, b| b.0.total_cmp(&a.0));
        s.into_iter().map(|x| x.1).collect()
    };
    // Train on batches 0-1, judge on 2-5.
    let mut train: std::collections::HashMap<VertexId, f64> = Default::default();
    for v in &per_batch[..2] {
        for &(x, c) in v {
            *train.entry(x).or_default() += c;
        }
    }
    let train: Vec<(VertexId, f64)> = train.into_iter().collect();
    // The judged batches' own accesses (what a per-batch sampler aims at).
    let mut own: std::collections::HashMap<VertexId, f64> = Default::default();
    for v in &per_batch[2..] {
        for &(x, c) in v {
            *own.entry(x).or_default() += c;
        }
    }
    let own: Vec<(VertexId, f64)> = own.into_iter().collect();
    let rankings: Vec<(&str, Vec<VertexId>)> = vec![
        ("degree", top_degree(&graph, 1 << 22)),
        ("accesses", by_score(&train, &|c, _| c)),
        ("accesses/byte", by_score(&train, &|c, l| c / (16.0 + 4.0 * l as f64))),
        (
            "accesses*cost/byte",
            by_score(&train, &|c, l| c * read_ns(l) / (16.0 + 4.0 * l as f64)),
        ),
        ("own accesses", by_score(&own, &|c, _| c)),
        (
            "own acc*cost/byte",
            by_score(&own, &|c, l| c * read_ns(l) / (16.0 + 4.0 * l as f64)),
        ),
    ];
    println!(
        "{name}, scale {scale}, {} edges kept, budget {} MB, batches of {batch}",
        graph.num_edges(),
        budget >> 20
    );
    for (b, ends) in ends_of.iter().enumerate().skip(2) {
        let mut is_end = vec![false; n];
        let mut eb = 0;
        for &v in ends {
            is_end[v as usize] = true;
            eb += 16 + 4 * len(v);
        }
        let (mut all, mut at_ends) = (0.0, 0.0);
        for &(x, c) in &per_batch[b] {
            all += c * read_ns(len(x));
            if is_end[x as usize] {
                at_ends += c * read_ns(len(x));
            }
        }
        println!(
            "batch {b}: {} endpoints, {} KB of lists, {:.1}% of the modelled host time",
            ends.len(),
            eb >> 10,
            100.0 * at_ends / all
        );
    }
    for (rname, ranked) in &rankings {
        let inset = take(ranked);
        let lists = inset.iter().filter(|&&x| x).count();
        let (mut look, mut hit, mut bytes, mut hbytes, mut cost, mut hcost) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for v in &per_batch[2..] {
            for &(x, c) in v {
                let l = len(x);
                look += c;
                bytes += c * 4.0 * l as f64;
                cost += c * read_ns(l);
                if inset[x as usize] {
                    hit += c;
                    hbytes += c * 4.0 * l as f64;
                    hcost += c * read_ns(l);
                }
            }
        }
        println!(
            "{rname:>20}: {lists:>8} lists, lookups {:5.1}%, bytes {:5.1}%, modelled host time left {:5.1}%",
            100.0 * hit / look,
            100.0 * hbytes / bytes,
            100.0 * (cost - hcost) / cost
        );
    }
}
