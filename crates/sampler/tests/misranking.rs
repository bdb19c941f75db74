//! Theorem 1 / Eq. (5): with M walks from Eq. (5), the empirical rate of
//! ranking y at or above x (C_x = (1+α) C_y) stays below 1 - δ; with far
//! fewer walks it does not (so the check can fail). Also the refinement loop.

mod common;

use csm_graph::VertexId;
use csm_sampler::cache::SelectionContext;
use csm_sampler::{
    eq5_walks, estimate_with_confidence, exact_access_counts, merged_walk, misrank_bound, Confidence, Estimate,
    ExecutionTree, Splitting, WalkOptions,
};

const TRIALS: u64 = 300;

fn misrank_rate(tree: &ExecutionTree<'_, csm_graph::DynamicGraph>, x: VertexId, y: VertexId, walks: u64) -> f64 {
    let bad = (0..TRIALS)
        .filter(|&seed| {
            let e = merged_walk(tree, walks, seed, Splitting::Multinomial);
            e.get(x) <= e.get(y)
        })
        .count();
    bad as f64 / TRIALS as f64
}

#[test]
fn eq5_walks_rank_correctly() {
    let s = common::small();
    let tree = ExecutionTree::new(&s.g, &s.plans, &s.delta);
    let ranked = exact_access_counts(&tree).counts.ranked();
    let (x, cx) = ranked[0];
    // the closest competitor at least 30% below x
    let &(y, cy) = ranked.iter().find(|r| r.1 * 1.3 <= cx).expect("a smaller vertex");
    let alpha = cx / cy - 1.0;
    let n = tree.query_size();
    for delta in [0.9, 0.99] {
        let m = eq5_walks(n, alpha, delta, tree.num_roots(), tree.max_degree, cy);
        assert!(misrank_bound(n, alpha, tree.num_roots(), tree.max_degree, m, cy) <= 1.0 - delta + 1e-12);
        let rate = misrank_rate(&tree, x, y, m);
        eprintln!("C_x {cx}, C_y {cy}, alpha {alpha:.2}, delta {delta}: M = {m}, misranked {rate:.3}");
        assert!(
            rate <= 1.0 - delta,
            "misranking rate {rate} above {} at M = {m}",
            1.0 - delta
        );
    }
    // sensitivity: with a handful of walks the same check fails
    let few = 4;
    let rate = misrank_rate(&tree, x, y, few);
    eprintln!("M = {few}: misranked {rate:.3}");
    assert!(
        rate > 0.1,
        "only {rate} misranked with {few} walks: the check cannot fail"
    );
}

#[test]
fn refinement_reaches_eq5_or_reports_the_cap() {
    let s = common::small();
    let ctx = SelectionContext {
        graph: &s.g,
        delta: &s.delta,
        plans: &s.plans,
        budget_bytes: usize::MAX,
        seed: 0,
    };
    let tree = ctx.tree();
    let n = tree.query_size();
    let boundary = |e: &Estimate| csm_sampler::cache::confidence_boundary(&ctx, e, 0.1);
    let conf = Confidence {
        alpha: 1.0,
        delta: 0.5,
        initial: 64,
        max_walks: 1 << 30,
        focus: 0.1,
        max_rounds: 12,
    };
    let (est, r) = estimate_with_confidence(&tree, &conf, WalkOptions::default(), 3, boundary);
    eprintln!("{r:?}");
    assert!(!r.capped, "{r:?}");
    assert!(r.rounds >= 2, "the initial 64 walks should not suffice: {r:?}");
    assert_eq!(est.walks, r.walks);
    assert!(r.walks >= r.required);
    assert_eq!(
        r.required,
        eq5_walks(n, 1.0, 0.5, tree.num_roots(), tree.max_degree, r.c_y)
    );
    assert_eq!(Some(r.c_y), boundary(&est));

    let capped = Confidence { max_walks: 100, ..conf };
    let (est, r) = estimate_with_confidence(&tree, &capped, WalkOptions::default(), 3, boundary);
    assert!(r.capped && r.walks == 100 && est.walks == 100, "{r:?}");
}
