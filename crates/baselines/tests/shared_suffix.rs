//! Static counts on several threads share one suffix-memo table
//! ([`csm_planner::SharedSuffixMemo`]): counts equal the brute-force oracle's, and the table
//! is used. Alone in its test binary, so that no other test stores into
//! the process's table first.

mod common;

use common::*;
use csm_baselines::oracle::BruteForce;
use csm_baselines::CpuEngine;
use csm_engine::StaticMatcher;
use csm_graph::CsrGraph;
use csm_planner::{CostOrder, GcsmOrder, OrderStrategy, SampledOrder, SharedSuffixMemo};
use std::sync::Arc;

/// Tree-like queries of 7 vertices on 2 labels over random graphs of 150
/// vertices: memoised subtrees are large enough to be shared, and the
/// threads' counts agree with VF2. Fails if the table is never stored to.
#[test]
fn static_counts_sharing_the_suffix_memo_equal_brute_force() {
    assert!(!SharedSuffixMemo::global().used());
    for seed in 0..6 {
        let mut r = rng(7100 + seed);
        let model = random_graph(&mut r, 150, 0.06, 2, None);
        let k = 7;
        let q = random_query(&mut r, k, 0.0, 2, None);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let want = BruteForce.count(&g, &q).expect("small");
        let orders: [Arc<dyn OrderStrategy>; 3] = [
            Arc::new(GcsmOrder),
            Arc::new(CostOrder),
            Arc::new(SampledOrder::default()),
        ];
        for (k, order) in orders.into_iter().enumerate() {
            let threads = 2 + seed as usize % 3;
            let eng = CpuEngine::new(threads, order.clone()).expect("pool");
            assert_eq!(
                eng.count(&g, &q).expect("count"),
                want,
                "seed {seed} order {k} threads {threads}"
            );
        }
    }
    assert!(SharedSuffixMemo::global().used(), "no count stored to the shared table");
}
