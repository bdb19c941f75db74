//! `stage_parallel` / `check_parallel` / `commit_parallel` against the
//! sequential `stage` / `check` / `commit` (themselves checked against a set
//! model in dynamic_graph.rs) on batches big enough to take the parallel
//! path: the same delta in the same order, the same error or skipped errors,
//! the same three views while pending and the same lists after commit.

use std::collections::BTreeMap;

use csm_graph::dynamic::PARALLEL_MIN_UPDATES;
use csm_graph::{DynamicGraph, Edge, GraphData, GraphView, LocatedUpdate, Strictness, Update, Version};
use proptest::prelude::*;

fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap()
}

fn graph(n: u32, init: &[(u32, u32, u32)], labelled: bool) -> DynamicGraph {
    let mut edges: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for &(u, v, l) in init {
        let (u, v) = (u % n, v % n);
        if u != v {
            edges.insert((u.min(v), u.max(v)), if labelled { l } else { 0 });
        }
    }
    let data = GraphData {
        labels: (0..n).map(|v| v % 3).collect(),
        edges: edges.iter().map(|(&(u, v), &l)| Edge::new(u, v, l)).collect(),
        edge_labelled: labelled,
    };
    DynamicGraph::from_data(&data).unwrap()
}

/// Every list in every version, for comparing two stores.
fn lists(g: &DynamicGraph, versions: &[Version]) -> Vec<Vec<(u32, u32)>> {
    let mut out = Vec::new();
    for v in 0..g.num_vertices() as u32 {
        for &ver in versions {
            out.push(g.nbrs(v, ver).to_vec());
        }
    }
    out
}

/// A batch from raw ops: `valid` keeps only updates that are valid in batch
/// order (so strict staging succeeds); otherwise duplicates, missing edges,
/// self-loops and unknown vertices (ids ≥ n) stay in.
fn batch(g: &DynamicGraph, n: u32, ops: &[(u32, u32, u32, bool)], valid: bool, labelled: bool) -> Vec<LocatedUpdate> {
    let mut state: BTreeMap<(u32, u32), bool> = BTreeMap::new();
    let mut out = Vec::new();
    for (k, &(u, v, l, ins)) in ops.iter().enumerate() {
        // a few ids beyond the graph and a few self-loops when not `valid`
        let (u, v) = if valid {
            (u % n, v % n)
        } else {
            (u % (n + 2), v % (n + 1))
        };
        let e = Edge::new(u, v, if labelled { l } else { 0 });
        let update = if ins { Update::AddEdge(e) } else { Update::RemoveEdge(e) };
        if valid {
            if u == v {
                continue;
            }
            let key = (u.min(v), u.max(v));
            let present = *state.entry(key).or_insert_with(|| g.edge_label(key.0, key.1).is_some());
            if present == ins {
                continue;
            }
            state.insert(key, ins);
        }
        out.push(LocatedUpdate { line: k + 1, update });
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn parallel_staging_equals_sequential(n in prop_oneof![8u32..60, 700u32..1200],
                                          init in prop::collection::vec((0u32..1300, 0u32..1300, 0u32..3), 0..3000),
                                          ops in prop::collection::vec((0u32..1300, 0u32..1300, 0u32..3, any::<bool>()), 1500..2500),
                                          labelled in any::<bool>(),
                                          valid in any::<bool>(),
                                          lenient in any::<bool>(),
                                          add_vertex in prop::bool::weighted(0.1),
                                          rounds in 1usize..3) {
        let pool = pool();
        let strictness = if lenient { Strictness::Lenient } else { Strictness::Strict };
        let mut seq = graph(n, &init, labelled);
        let mut par = seq.clone();
        for round in 0..rounds {
            let rotated: Vec<_> = ops.iter().map(|&(u, v, l, i)| (u + round as u32, v, l, i)).collect();
            let mut updates = batch(&seq, n, &rotated, valid, labelled);
            if add_vertex {
                // a vertex update sends validation down the sequential path
                updates.push(LocatedUpdate { line: 0, update: Update::AddVertex { id: n + 5 + round as u32, label: 1 } });
            }
            prop_assume!(updates.len() >= PARALLEL_MIN_UPDATES);
            let checked_seq = seq.check(&updates, "b");
            let checked_par = pool.install(|| par.check_parallel(&updates, "b"));
            prop_assert_eq!(checked_seq, checked_par);
            let staged_seq = seq.stage(&updates, "b", strictness).cloned();
            let staged_par = pool.install(|| par.stage_parallel(&updates, "b", strictness).cloned());
            prop_assert_eq!(&staged_seq, &staged_par);
            if staged_seq.is_err() {
                // nothing changed on either side
                prop_assert!(!seq.is_pending() && !par.is_pending());
                prop_assert_eq!(lists(&seq, &[Version::Old]), lists(&par, &[Version::Old]));
                continue;
            }
            prop_assert_eq!(seq.touched(), par.touched());
            prop_assert_eq!(seq.max_degree(), par.max_degree());
            let all = [Version::Old, Version::Common, Version::New];
            prop_assert_eq!(lists(&seq, &all), lists(&par, &all));
            let committed_seq = seq.commit();
            let committed_par = pool.install(|| par.commit_parallel());
            prop_assert_eq!(committed_seq, committed_par);
            prop_assert_eq!(lists(&seq, &all), lists(&par, &all));
            prop_assert_eq!(seq.num_edges(), par.num_edges());
            prop_assert_eq!(seq.max_degree(), par.max_degree());
        }
    }
}

/// Large enough that the commit's parallel path runs too (≥ 512 touched
/// lists), with list growth and deletions of old edges.
#[test]
fn big_batches_take_every_parallel_path() {
    let pool = pool();
    for labelled in [false, true] {
        let n = 5000u32;
        let init: Vec<(u32, u32, u32)> = (0..20000u32).map(|i| (i * 7 % n, i * 13 % n + 1, i % 3)).collect();
        let mut seq = graph(n, &init, labelled);
        let mut par = seq.clone();
        for round in 0..3u32 {
            // every third update deletes an initial edge, the others insert
            let ops: Vec<(u32, u32, u32, bool)> = (0..6000u32)
                .map(|i| match i % 3 {
                    0 => ((i + round * 6000) * 7 % n, (i + round * 6000) * 13 % n + 1, 0, false),
                    _ => ((i * 7 + round * 11) % n, (i * 13 + 5) % n, i % 3, true),
                })
                .collect();
            let updates = batch(&seq, n, &ops, true, labelled);
            let staged_seq = seq.stage(&updates, "b", Strictness::Strict).cloned().unwrap();
            let staged_par = pool.install(|| par.stage_parallel(&updates, "b", Strictness::Strict).cloned().unwrap());
            assert!(!staged_seq.deleted.is_empty() && !staged_seq.inserted.is_empty());
            assert_eq!(staged_seq, staged_par);
            assert!(par.touched().len() >= PARALLEL_MIN_UPDATES);
            let all = [Version::Old, Version::Common, Version::New];
            assert_eq!(lists(&seq, &all), lists(&par, &all));
            assert_eq!(seq.commit(), pool.install(|| par.commit_parallel()));
            assert_eq!(lists(&seq, &all), lists(&par, &all));
            assert_eq!((seq.num_edges(), seq.max_degree()), (par.num_edges(), par.max_degree()));
        }
    }
}
