//! Batches decomposed into their net deletions, then their net insertions,
//! one single-edge update at a time (the `cpu` engine's `decompose`, forced
//! here for every batch of edge updates) against the brute-force set
//! differences |M(G')\M(G)| and |M(G)\M(G')| of each whole batch: mixed
//! batches with edges inserted and deleted again, deleted and inserted
//! again (also under another edge label), lenient batches with an invalid
//! update skipped, batches with vertex additions and removals, on one
//! thread and on runs overlapped on three, with queries that have
//! automorphisms (the only ones decomposed).

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::{random_batch, random_stream_graph, rng, symmetric_query, with_lenient_duplicate};
use csm_baselines::oracle::embeddings;
use csm_baselines::CpuEngine;
use csm_engine::{Batch, ContinuousMatcher};
use csm_graph::{Edge, LocatedUpdate, Strictness, Update, VertexId};
use csm_planner::{CostOrder, GcsmOrder, OrderStrategy};
use proptest::prelude::*;
use rand::Rng;

fn check(seed: u64) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let el = seed.is_multiple_of(3).then_some(2);
    let (vl, mut model) = random_stream_graph(&mut r, el);
    let q = symmetric_query(&mut r, vl, el, 7);
    let order: Arc<dyn OrderStrategy> = if seed.is_multiple_of(2) {
        Arc::new(CostOrder)
    } else {
        Arc::new(GcsmOrder)
    };
    let threads = if seed % 4 < 2 { 1 } else { 3 };
    let mut eng = CpuEngine::new(threads, order).unwrap().decompose_batches(Some(true));
    eng.init(&model.to_data(), &q).unwrap();
    for b in 0..5 {
        let before: BTreeSet<Vec<VertexId>> = embeddings(&model.to_data(), &q);
        let len = r.random_range(2..20);
        // (vertex updates in the last batch: decomposed too, vertices added
        // first and removed last)
        let mut batch = random_batch(&mut r, &mut model, len, vl, el, b == 4);
        let strictness = with_lenient_duplicate(&model, &mut batch, seed % 3 == 1);
        let lenient = strictness == Strictness::Lenient;
        let after = embeddings(&model.to_data(), &q);
        let res = eng
            .process(Batch {
                updates: &batch,
                source: "t",
                strictness,
            })
            .map_err(|e| TestCaseError::fail(format!("seed {seed} batch {b}: {e}")))?;
        let want = (
            after.difference(&before).count() as u64,
            before.difference(&after).count() as u64,
        );
        prop_assert_eq!(
            (res.positive, res.negative),
            want,
            "seed {} batch {}: {:?}; query {:?}",
            seed,
            b,
            batch,
            q
        );
        prop_assert_eq!(res.skipped, usize::from(lenient));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn decomposed_batches_give_the_set_differences(seed in any::<u64>()) {
        check(seed)?;
    }
}

/// An invalid batch is rejected with its own error (file and line) and
/// leaves the graph unchanged, decomposed or not: the next batch counts
/// against the graph before it.
#[test]
fn an_invalid_decomposed_batch_changes_nothing() {
    let g = csm_graph::GraphData {
        labels: vec![0; 5],
        edges: vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0), Edge::new(2, 3, 0)],
        edge_labelled: false,
    };
    let q =
        csm_planner::QueryGraph::new(vec![0, 0, 0, 0], &[(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 0, 0)], false).unwrap();
    let mut eng = CpuEngine::new(1, Arc::new(CostOrder))
        .unwrap()
        .decompose_batches(Some(true));
    eng.init(&g, &q).unwrap();
    let batch = |u: &[Update]| -> Vec<LocatedUpdate> {
        u.iter()
            .enumerate()
            .map(|(i, &update)| LocatedUpdate { line: i + 7, update })
            .collect()
    };
    // closes the square 0-1-2-3, then deletes an edge that is not there
    let bad = batch(&[
        Update::AddEdge(Edge::new(0, 3, 0)),
        Update::RemoveEdge(Edge::new(0, 2, 0)),
    ]);
    let err = eng
        .process(Batch {
            updates: &bad,
            source: "u.txt",
            strictness: Strictness::Strict,
        })
        .unwrap_err();
    assert!(err.to_string().contains("u.txt:8"), "{err}");
    // the square closes now: its 8 embeddings, none before
    let ok = batch(&[Update::AddEdge(Edge::new(3, 0, 0)), Update::AddEdge(Edge::new(1, 4, 0))]);
    let r = eng
        .process(Batch {
            updates: &ok,
            source: "u.txt",
            strictness: Strictness::Strict,
        })
        .unwrap();
    assert_eq!((r.positive, r.negative), (8, 0));
}
