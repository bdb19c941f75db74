//! Batches counted on `BATCH_SHARED_SUFFIX_THREADS` threads or more share
//! one suffix-memo table ([`csm_planner::SharedSuffixMemo`]): per batch
//! positive and negative equal the brute-force set differences and a
//! one-thread engine's (its own table), and the shared table is used.
//! Alone in its test binary, so that no other test stores into the
//! process's table first.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::*;
use csm_baselines::cpu::BATCH_SHARED_SUFFIX_THREADS;
use csm_baselines::oracle::embeddings;
use csm_baselines::CpuEngine;
use csm_engine::{Batch, ContinuousMatcher};
use csm_graph::{Strictness, VertexId};
use csm_planner::{CostOrder, GcsmOrder, OrderStrategy, SharedSuffixMemo};
use rand::Rng;

/// Tree-like queries of 7 vertices on 2 labels over random graphs of 120
/// vertices (memoised subtrees worth sharing), mixed batches of 40 edge
/// updates. Fails if the table is never stored to.
#[test]
fn batches_sharing_the_suffix_memo_equal_brute_force() {
    assert!(!SharedSuffixMemo::global().used());
    for seed in 0..4u64 {
        let mut r = rng(7300 + seed);
        let mut model = random_graph(&mut r, 120, 0.06, 2, None);
        let q = random_query(&mut r, 7, 0.0, 2, None);
        let order: Arc<dyn OrderStrategy> = if seed % 2 == 0 {
            Arc::new(GcsmOrder)
        } else {
            Arc::new(CostOrder)
        };
        let mut shared = CpuEngine::new(BATCH_SHARED_SUFFIX_THREADS, order.clone())
            .expect("pool")
            .min_parallel_work(0);
        let mut own = CpuEngine::new(1, order).expect("pool");
        shared.init(&model.to_data(), &q).expect("init");
        own.init(&model.to_data(), &q).expect("init");
        for b in 0..3 {
            let before: BTreeSet<Vec<VertexId>> = embeddings(&model.to_data(), &q);
            let len = r.random_range(30..50);
            let batch = random_batch(&mut r, &mut model, len, 2, None, false);
            let after = embeddings(&model.to_data(), &q);
            let want = (
                after.difference(&before).count() as u64,
                before.difference(&after).count() as u64,
            );
            let run = |e: &mut CpuEngine| {
                let r = e
                    .process(Batch {
                        updates: &batch,
                        source: "t",
                        strictness: Strictness::Strict,
                    })
                    .expect("valid batch");
                (r.positive, r.negative)
            };
            assert_eq!(run(&mut shared), want, "seed {seed} batch {b}: shared table");
            assert_eq!(run(&mut own), want, "seed {seed} batch {b}: one thread");
        }
    }
    assert!(SharedSuffixMemo::global().used(), "no batch stored to the shared table");
}
