//! Batches counted on `BATCH_SHARED_SUFFIX_THREADS` threads or more share
//! one suffix-memo table ([`csm_planner::SharedSuffixMemo`]): per batch
//! positive and negative equal the brute-force set differences and a
//! one-thread engine's (its own table), and the shared table is used.
//! Alone in its test binary, so that no other test stores into the
//! process's table first.

mod common;

use std::sync::Arc;

use common::*;
use csm_baselines::cpu::{BATCH_SHARED_SUFFIX_THREADS, BATCH_SHARED_SUFFIX_VERTICES};
use csm_baselines::oracle::BruteForce;
use csm_baselines::CpuEngine;
use csm_engine::{Batch, ContinuousMatcher, Recount};
use csm_graph::Strictness;
use csm_planner::{CostOrder, GcsmOrder, OrderStrategy, SharedSuffixMemo};
use rand::Rng;

/// Tree-like queries of `BATCH_SHARED_SUFFIX_VERTICES` vertices on 2
/// labels over sparse random graphs (memoised subtrees worth sharing),
/// mixed batches of 30-50 edge updates, against the brute-force recount
/// (|M(G')| − |M(G ∩ G')| and |M(G)| − |M(G ∩ G')|). Fails if the table is
/// never stored to.
#[test]
fn batches_sharing_the_suffix_memo_equal_brute_force() {
    assert!(!SharedSuffixMemo::global().used());
    for seed in 0..4u64 {
        let mut r = rng(7300 + seed);
        let mut model = random_graph(&mut r, 70, 0.05, 2, None);
        let q = random_query(&mut r, BATCH_SHARED_SUFFIX_VERTICES, 0.0, 2, None);
        let order: Arc<dyn OrderStrategy> = if seed % 2 == 0 {
            Arc::new(GcsmOrder)
        } else {
            Arc::new(CostOrder)
        };
        let mut shared = CpuEngine::new(BATCH_SHARED_SUFFIX_THREADS, order.clone())
            .expect("pool")
            .min_parallel_work(0);
        let mut own = CpuEngine::new(1, order).expect("pool");
        let mut oracle = Recount::new(BruteForce);
        for e in [&mut shared as &mut dyn ContinuousMatcher, &mut own, &mut oracle] {
            e.init(&model.to_data(), &q).expect("init");
        }
        for b in 0..3 {
            let len = r.random_range(30..50);
            let batch = random_batch(&mut r, &mut model, len, 2, None, false);
            let run = |e: &mut dyn ContinuousMatcher| {
                let r = e
                    .process(Batch {
                        updates: &batch,
                        source: "t",
                        strictness: Strictness::Strict,
                    })
                    .expect("valid batch");
                (r.positive, r.negative)
            };
            let want = run(&mut oracle);
            assert_eq!(run(&mut shared), want, "seed {seed} batch {b}: shared table");
            assert_eq!(run(&mut own), want, "seed {seed} batch {b}: one thread");
        }
    }
    assert!(SharedSuffixMemo::global().used(), "no batch stored to the shared table");
}
