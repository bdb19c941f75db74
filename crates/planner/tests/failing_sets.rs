//! Failing sets ([`csm_planner::exec`]'s module docs) skip siblings that
//! must fail, and only those: a counting run (a visitor that does not
//! observe) counts what a run under an observing visitor counts, which
//! walks the whole tree, on random labelled graphs and tree-like queries
//! (whose dead branches are what the sets find), and on a graph built so
//! that one dead branch cuts the search to a small fraction of its nodes.
//! The plain counts are checked against brute force and VF2 in
//! csm-baselines' oracle tests.

use csm_graph::gen::{erdos_renyi, graph_from_pairs};
use csm_graph::{CsrGraph, GraphView, Version, VertexId};
use csm_planner::{static_plan, CostOrder, Executor, GcsmOrder, GraphStats, Level, OrderStrategy, QueryGraph, Visitor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Counts the nodes entered; `OBS` says whether it observes (an observing
/// visitor sees the whole tree, so no sibling is skipped for it).
struct Nodes<const OBS: bool>(u64);

impl<const OBS: bool> Visitor for Nodes<OBS> {
    const OBSERVES: bool = OBS;
    fn enter(&mut self, _: usize, _: &[VertexId], _: &Level) -> bool {
        self.0 += 1;
        true
    }
}

/// Static counts and nodes entered, pruning (`OBS` false) or not, summed
/// over every start vertex of the plan's first level.
fn run<const OBS: bool>(g: &CsrGraph, q: &QueryGraph, order: &dyn OrderStrategy) -> (u64, u64) {
    let plan = static_plan(q, order, &GraphStats::of(g), Version::New);
    let mut ex = Executor::new();
    let mut vis = Nodes::<OBS>(0);
    let count = (0..g.num_vertices() as VertexId)
        .filter(|&v| g.label(v) == plan.levels[0].label)
        .map(|v| ex.count(g, &plan, &[v], &mut vis))
        .sum();
    (count, vis.0)
}

/// A random tree of `k` vertices (each vertex hangs off an earlier one),
/// plus a chord now and then, with `labels` vertex labels.
fn tree_query(r: &mut ChaCha8Rng, k: usize, labels: u32) -> QueryGraph {
    let mut edges: Vec<(usize, usize, u32)> = (1..k).map(|v| (r.random_range(0..v), v, 0)).collect();
    if r.random_bool(0.3) {
        let (a, b) = (r.random_range(0..k), r.random_range(0..k));
        if a != b && !edges.iter().any(|&(x, y, _)| (x, y) == (a.min(b), a.max(b))) {
            edges.push((a.min(b), a.max(b), 0));
        }
    }
    let vl = (0..k).map(|_| r.random_range(0..labels)).collect();
    QueryGraph::new(vl, &edges, false).expect("valid query")
}

#[test]
fn pruned_counts_equal_the_whole_trees_counts() {
    let mut r = ChaCha8Rng::seed_from_u64(11);
    let (mut pruned, mut whole) = (0u64, 0u64);
    for seed in 0..600u64 {
        let labels = r.random_range(1..=4u32);
        let n = r.random_range(6..40usize);
        let m = r.random_range(n..(2 * n).min(n * (n - 1) / 2));
        let pairs = erdos_renyi(n, m, seed);
        let vl = (0..n).map(|_| r.random_range(0..labels)).collect();
        let g = CsrGraph::from_data(&graph_from_pairs(n, &pairs, vl, None)).expect("valid graph");
        let k = r.random_range(3..=7usize);
        let q = tree_query(&mut r, k, labels);
        let orders: [&dyn OrderStrategy; 2] = [&GcsmOrder, &CostOrder];
        for order in orders {
            let (want, all) = run::<true>(&g, &q, order);
            let (got, some) = run::<false>(&g, &q, order);
            assert_eq!(got, want, "seed {seed}, order {}", order.name());
            pruned += some;
            whole += all;
        }
    }
    assert!(pruned < whole, "no node was skipped: {pruned} of {whole}");
}

/// A spider: centre 0 (label 0) with legs 0-1-2 (labels 1, 2) and 0-3-4
/// (labels 3, 4). The data centre has 20 label-1 neighbours with 20
/// label-2 neighbours each, and 5 label-3 neighbours with no label-4
/// neighbour: every leg-3 binding fails whatever leg 1 binds, so the
/// search stops after the first binding of vertex 1 (and of 2, when the
/// order binds it before leg 3) instead of trying them all.
#[test]
fn a_dead_leg_is_found_once() {
    let q = QueryGraph::new(
        vec![0, 1, 2, 3, 4],
        &[(0, 1, 0), (1, 2, 0), (0, 3, 0), (3, 4, 0)],
        false,
    )
    .expect("query");
    let mut labels = vec![0u32];
    let mut pairs = Vec::new();
    let add = |labels: &mut Vec<u32>, l: u32| {
        labels.push(l);
        (labels.len() - 1) as u32
    };
    for _ in 0..20 {
        let a = add(&mut labels, 1);
        pairs.push((0, a));
        for _ in 0..20 {
            let b = add(&mut labels, 2);
            pairs.push((a, b));
        }
    }
    for _ in 0..5 {
        let c = add(&mut labels, 3);
        pairs.push((0, c));
        // a label-4 vertex two hops away, so that the label exists
        let d = add(&mut labels, 2);
        let e = add(&mut labels, 4);
        pairs.push((c, d));
        pairs.push((d, e));
    }
    let n = labels.len();
    let g = CsrGraph::from_data(&graph_from_pairs(n, &pairs, labels, None)).expect("valid graph");
    let plan = static_plan(&q, &GcsmOrder, &GraphStats::of(&g), Version::New);
    let at = |u| plan.order.iter().position(|&x| x == u).expect("bound");
    assert!(at(1) < at(4), "the test needs vertex 1 bound before the dead leg ends");
    let (want, all) = run::<true>(&g, &q, &GcsmOrder);
    let (got, some) = run::<false>(&g, &q, &GcsmOrder);
    assert_eq!((got, want), (0, 0));
    // whole: every binding of vertex 1 (and 2) tries the 5 dead legs
    assert!(all >= 100, "the whole tree has {all} nodes");
    assert!(some <= 10, "pruned search entered {some} nodes (whole tree {all})");
}
