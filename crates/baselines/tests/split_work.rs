//! Counts on several threads spread nodes over the pool without listing
//! what one thread's search counts once. Alone in its test binary: it
//! reads the process-wide counter of spread nodes
//! ([`csm_baselines::cpu::spread_nodes`]).

mod common;

use common::stars::{per_center, process_joins, star_query, stars, take_joins};
use csm_baselines::cpu::spread_nodes;
use csm_baselines::registry::{continuous_engine, EngineOptions};
use csm_planner::{CostOrder, OrderStrategy};
use std::sync::Arc;

/// A batch joining center 0 to every leaf of label 1 of two centers'
/// stars, counted on two threads: positive and negative equal the closed
/// form, and the count spreads a few hundred nodes over the pool. Splitting
/// every child of the delta plans' narrow levels again (each estimated
/// heavy by its depth) listed the tuples of those levels that one thread's
/// suffix memo counts once: the first case (found by
/// `count_overflow::batch_counts_saturate`) ran for minutes on two threads
/// and a millisecond on one, spreading over 10^5 nodes a second.
#[test]
fn batches_on_two_threads_count_twin_leaves_without_listing_them() {
    let cases: [(Vec<u32>, Vec<u32>); 2] = [
        (vec![59, 15, 21], vec![1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3]),
        (vec![60; 4], [1, 2, 3, 4].iter().flat_map(|&l| [l; 5]).collect()),
    ];
    for (m, leaves) in cases {
        let h = 2;
        let q = star_query(&leaves, Some(m.len() as u32 + 1));
        let want = u64::try_from(u128::from(h).saturating_mul(per_center(&m, &leaves))).unwrap_or(u64::MAX);
        let mut g = stars(2, &m, h);
        let joins = take_joins(&mut g);
        let orders: [Arc<dyn OrderStrategy>; 2] = [EngineOptions::default().order, Arc::new(CostOrder)];
        for (k, order) in orders.into_iter().enumerate() {
            for name in ["cpu", "cpu-whole"] {
                let opts = EngineOptions {
                    threads: 2,
                    order: order.clone(),
                    ..EngineOptions::default()
                };
                let mut eng = continuous_engine(name, &opts).unwrap();
                eng.init(&g, &q).unwrap();
                let before = spread_nodes();
                for insert in [true, false] {
                    let want = if insert { (want, 0) } else { (0, want) };
                    let got = process_joins(eng.as_mut(), &joins, insert);
                    assert_eq!(got, want, "{name}, order {k}, m = {m:?}");
                }
                let spread = spread_nodes() - before;
                assert!(spread < 5_000, "{name}, order {k}, m = {m:?}: {spread} nodes spread");
                eprintln!("{name}, order {k}, m = {m:?}: {spread} nodes spread");
            }
        }
    }
}
