//! Overlapping splits ([`csm_planner::Split`]) may nest: a merged query's
//! plan may split with overlaps again. One delta plan holds at most
//! [`MAX_OVERLAP_PLANS`] overlap plans over all its splits, so planning a
//! large query with few labels stays cheap (without the bound a 32-vertex
//! query with 4 labels took minutes and gigabytes to plan). The counts of
//! such plans are checked against brute force and VF2 in csm-baselines'
//! oracle tests (`overlapping_split*`).

use csm_graph::gen::{erdos_renyi, graph_from_pairs};
use csm_graph::CsrGraph;
use csm_planner::{delta_plans, CostOrder, GraphStats, QueryGraph, MAX_OVERLAPS, MAX_OVERLAP_PLANS, MAX_PLAN_LEVELS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random tree of `k` vertices (each vertex hangs off one of the few
/// before it, so branches are short and many) with `labels` vertex labels.
fn bushy_tree(r: &mut ChaCha8Rng, k: usize, labels: u32) -> QueryGraph {
    let edges: Vec<(usize, usize, u32)> = (1..k).map(|v| (r.random_range(v.saturating_sub(4)..v), v, 0)).collect();
    let vl = (0..k).map(|_| r.random_range(0..labels)).collect();
    QueryGraph::new(vl, &edges, false).expect("valid query")
}

#[test]
fn nested_overlap_plans_stay_within_their_bound() {
    let mut r = ChaCha8Rng::seed_from_u64(5);
    let mut most = 0;
    for seed in 0..12u64 {
        let labels = r.random_range(2..=4u32);
        let n = 60;
        let pairs = erdos_renyi(n, 150, seed);
        let vl = (0..n).map(|_| r.random_range(0..labels)).collect();
        let g = CsrGraph::from_data(&graph_from_pairs(n, &pairs, vl, None)).expect("valid graph");
        let k = r.random_range(18..=32usize);
        let q = bushy_tree(&mut r, k, labels);
        for p in delta_plans(&q, &CostOrder, &GraphStats::of(&g)) {
            let splits = p.plan.splits();
            let all: usize = splits.iter().map(|s| s.overlaps.len()).sum();
            let one = splits.iter().map(|s| s.overlaps.len()).max().unwrap_or(0);
            assert!(
                all <= MAX_OVERLAP_PLANS,
                "seed {seed}: {all} overlap plans in one delta plan"
            );
            assert!(one <= MAX_OVERLAPS, "seed {seed}: {one} overlaps in one split");
            most = most.max(all);
        }
    }
    // the bound binds: some plans would hold more without it
    assert!(
        most > MAX_OVERLAP_PLANS / 2,
        "at most {most} overlap plans in a delta plan"
    );
}

/// A connected query of `k` vertices and about `m` edges (a random tree,
/// then random chords) with vertex labels drawn from `labels`.
fn dense_query(r: &mut ChaCha8Rng, k: usize, m: usize, labels: u32) -> QueryGraph {
    let mut edges: Vec<(usize, usize, u32)> = (1..k).map(|v| (r.random_range(0..v), v, 0)).collect();
    while edges.len() < m {
        let (a, b) = (r.random_range(0..k), r.random_range(0..k));
        if a != b && !edges.iter().any(|&(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a)) {
            edges.push((a, b, 0));
        }
    }
    let vl = (0..k).map(|_| r.random_range(0..labels)).collect();
    QueryGraph::new(vl, &edges, false).expect("valid query")
}

#[test]
fn the_delta_plans_of_a_large_dense_query_share_a_level_bound() {
    let mut r = ChaCha8Rng::seed_from_u64(7);
    let n = 60;
    let pairs = erdos_renyi(n, 400, 3);
    let vl = (0..n).map(|_| r.random_range(0..5u32)).collect();
    let g = CsrGraph::from_data(&graph_from_pairs(n, &pairs, vl, None)).expect("valid graph");
    let mut most = 0;
    for _ in 0..3 {
        let q = dense_query(&mut r, 32, 119, 5);
        let plans = delta_plans(&q, &CostOrder, &GraphStats::of(&g));
        let levels: usize = plans.iter().flat_map(|p| p.plan.plans()).map(|p| p.levels.len()).sum();
        // (each delta plan may overshoot its share by the plans of one split)
        assert!(
            levels <= 2 * MAX_PLAN_LEVELS,
            "{levels} levels in {} delta plans",
            plans.len()
        );
        most = most.max(levels);
    }
    assert!(
        most > MAX_PLAN_LEVELS / 2,
        "at most {most} levels: the bound never binds"
    );
}
