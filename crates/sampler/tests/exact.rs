//! The exact access counter against an independent traversal of the tree.

mod common;

use std::collections::HashMap;

use csm_graph::{DynamicGraph, Edge, GraphData, GraphView, LocatedUpdate, Strictness, Update, VertexId};
use csm_planner::{count_batch, delta_plans, Executor, GcsmOrder, GraphStats, NoVisitor, QueryGraph};
use csm_sampler::{exact_access_counts, exact_access_counts_par, ExecutionTree};

/// Walks the whole tree with `Executor::candidates` (no visitor), counting
/// reads per vertex and leaves.
fn naive<G: GraphView + ?Sized>(tree: &ExecutionTree<'_, G>) -> (HashMap<VertexId, f64>, u64, u64) {
    fn rec<G: GraphView + ?Sized>(
        tree: &ExecutionTree<'_, G>,
        plan: &csm_planner::Plan,
        emb: &mut Vec<VertexId>,
        ex: &mut Executor,
        out: &mut (HashMap<VertexId, f64>, u64, u64),
    ) {
        let d = emb.len();
        if d == plan.depth() {
            out.2 += 1; // a leaf: reads nothing
            return;
        }
        out.1 += 1;
        for r in &plan.levels[d].reads {
            *out.0.entry(emb[r.pos as usize]).or_insert(0.0) += 1.0;
        }
        let mut c = Vec::new();
        ex.candidates(tree.graph, plan, emb, &mut c);
        for v in c {
            emb.push(v);
            rec(tree, plan, emb, ex, out);
            emb.pop();
        }
    }
    let mut out = (HashMap::new(), 0, 0);
    let mut ex = Executor::new();
    for root in &tree.roots {
        let plan = &tree.plans[root.plan as usize].plan;
        rec(tree, plan, &mut vec![root.x, root.y], &mut ex, &mut out);
    }
    out
}

#[test]
fn hand_computed_triangle() {
    // triangle 0-1-2 plus 2-3; the batch inserts 1-3 (closing triangle 1-2-3)
    let data = GraphData {
        labels: vec![0; 4],
        edges: vec![
            Edge::new(0, 1, 0),
            Edge::new(1, 2, 0),
            Edge::new(0, 2, 0),
            Edge::new(2, 3, 0),
        ],
        edge_labelled: false,
    };
    let mut g = DynamicGraph::from_data(&data).unwrap();
    let q = QueryGraph::from_data(&csm_graph::gen::standard_query("triangle").unwrap()).unwrap();
    let plans = delta_plans(&q, &GcsmOrder, &GraphStats::of(&g));
    let up = [LocatedUpdate {
        line: 1,
        update: Update::AddEdge(Edge::new(1, 3, 0)),
    }];
    let delta = g.stage(&up, "<t>", Strictness::Strict).unwrap().clone();
    let tree = ExecutionTree::new(&g, &plans, &delta);
    // 3 positive plans x 2 orientations; no deletions, so no negative seeds
    assert_eq!(tree.num_roots(), 6);
    let ex = exact_access_counts(&tree);
    // each root reads N'(x) and N'(y) once; its children are leaves
    assert_eq!(ex.counts.ranked(), vec![(1, 6.0), (3, 6.0)]);
    assert_eq!(ex.nodes, 6);
}

#[test]
fn matches_independent_traversal() {
    for (labels, query, ql, seed) in [
        (1, "diamond", None, 3u64),
        (1, "house", None, 4),
        (3, "square", Some(&[0u32, 1, 0, 2][..]), 5),
        (2, "4-clique", Some(&[0u32, 0, 1, 1][..]), 6),
    ] {
        let s = common::staged(120, 900, labels, 60, 60, query, ql, seed);
        let tree = ExecutionTree::new(&s.g, &s.plans, &s.delta);
        assert!(tree.num_roots() > 0);
        let (want, inner, leaves) = naive(&tree);
        let got = exact_access_counts(&tree);
        let got_map = got.counts.to_map();
        assert_eq!(got_map.len(), want.len(), "{query}: accessed vertices");
        for (v, c) in &want {
            assert_eq!(got_map.get(v), Some(c), "{query}: vertex {v}");
        }
        assert_eq!(got.nodes, inner, "{query}: reading nodes");
        // the leaves are the matches
        let counts = count_batch(&s.g, &s.plans, &s.delta, &mut Executor::new(), &mut NoVisitor);
        assert_eq!(leaves, counts.positive + counts.negative, "{query}: leaves");
        let par = exact_access_counts_par(&tree);
        assert_eq!(par.counts.ranked(), got.counts.ranked(), "{query}: parallel");
        assert_eq!(par.nodes, got.nodes);
    }
}
