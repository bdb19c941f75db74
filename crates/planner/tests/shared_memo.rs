//! A node split into strided parts counted by different executors that
//! share one last-level memo ([`csm_planner::SharedMemo`]) counts what one
//! executor counts alone, for every plan with a memo, restricted by
//! symmetry or not, on random graphs (the plain counts are checked against
//! brute force in csm-baselines' oracle tests).

use std::sync::Arc;

use csm_graph::gen::{erdos_renyi, graph_from_pairs, rmat, standard_query, with_labels, STANDARD_QUERIES};
use csm_graph::{CsrGraph, GraphView, Version, VertexId};
use csm_planner::{
    automorphisms, break_symmetry, static_plan, CostOrder, Executor, GcsmOrder, GraphStats, MemoScope, NoVisitor,
    OrderStrategy, Plan, QueryGraph, SharedMemo, MAX_AUTOMORPHISMS,
};

/// Every prefix of `len` vertices that `plan` can bind.
fn prefixes(g: &CsrGraph, plan: &Plan, len: usize) -> Vec<Vec<VertexId>> {
    let mut ex = Executor::new();
    let mut out: Vec<Vec<VertexId>> = (0..g.num_vertices() as VertexId)
        .filter(|&v| g.label(v) == plan.levels[0].label)
        .map(|v| vec![v])
        .collect();
    let mut cands = Vec::new();
    for _ in 1..len {
        out = out
            .into_iter()
            .flat_map(|p| {
                ex.candidates(g, plan, &p, &mut cands);
                cands.iter().map(move |&c| [&p[..], &[c]].concat()).collect::<Vec<_>>()
            })
            .collect();
    }
    out
}

fn graphs() -> Vec<CsrGraph> {
    let n = 1 << 7;
    let skewed = rmat(7, 600, 0.55, 0.2, 0.2, 3);
    let flat = erdos_renyi(40, 250, 4);
    // the skewed graph again with its ids scattered at random over a
    // thousand times as many, so that the memo keys of a small table
    // collide (the hash spreads evenly spaced ids without collisions)
    let m = n * 1000;
    let mix = |x: u64| {
        let x = (x ^ x >> 30).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let x = (x ^ x >> 27).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ x >> 31
    };
    let mut ids: Vec<VertexId> = (0..m as VertexId).collect();
    ids.sort_by_key(|&x| mix(x as u64));
    let spread: Vec<(VertexId, VertexId)> = skewed
        .iter()
        .map(|&(u, v)| (ids[u as usize], ids[v as usize]))
        .collect();
    vec![
        CsrGraph::from_data(&graph_from_pairs(n, &skewed, vec![0; n], None)).unwrap(),
        CsrGraph::from_data(&graph_from_pairs(40, &flat, (0..40).map(|v| v % 2).collect(), None)).unwrap(),
        CsrGraph::from_data(&graph_from_pairs(m, &spread, vec![0; m], None)).unwrap(),
    ]
}

#[test]
fn parts_sharing_a_memo_count_what_one_executor_counts() {
    let mut planned_with_memo = 0;
    for g in graphs() {
        let stats = GraphStats::of(&g);
        for &name in STANDARD_QUERIES {
            let q = standard_query(name).unwrap();
            let labels: Vec<u32> = (0..q.labels.len() as u32).map(|i| i % 2).collect();
            for q in [q.clone(), with_labels(&q, &labels)] {
                let q = QueryGraph::from_data(&q).unwrap();
                let orders: [&dyn OrderStrategy; 2] = [&GcsmOrder, &CostOrder];
                for order in orders {
                    let plain = static_plan(&q, order, &stats, Version::New);
                    let auts = automorphisms(&q, MAX_AUTOMORPHISMS).unwrap_or_default();
                    let restricted = break_symmetry(&plain, &auts, 0).0;
                    for plan in [plain, restricted] {
                        let Some(f) = plan.memo_from else { continue };
                        planned_with_memo += 1;
                        let len = (f as usize).max(1);
                        if len + 1 >= plan.depth() {
                            continue;
                        }
                        let mut alone = Executor::new();
                        let mut parts: Vec<Executor> = (0..3).map(|_| Executor::new()).collect();
                        let mut cands = Vec::new();
                        // the heaviest prefixes first: the memo matters most there
                        let mut ps = prefixes(&g, &plan, len);
                        ps.sort_by_key(|p| std::cmp::Reverse(g.nbrs(p[0], Version::New).len()));
                        for p in ps.into_iter().take(40) {
                            let want = alone.count(&g, &plan, &p, &mut NoVisitor);
                            alone.candidates(&g, &plan, &p, &mut cands);
                            // the full table, and the smallest (most collisions)
                            for memo in [SharedMemo::new(), SharedMemo::with_capacity(1)] {
                                let memo = Arc::new(memo);
                                let got: u64 = parts
                                    .iter_mut()
                                    .enumerate()
                                    .map(|(k, ex)| {
                                        ex.share_memo(Some(memo.clone()));
                                        let n = ex.count_strided(MemoScope::new(), &g, &plan, &p, &cands, k, 3);
                                        ex.share_memo(None);
                                        n
                                    })
                                    .sum();
                                assert_eq!(got, want, "{name}, prefix {p:?}");
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(planned_with_memo > 0, "no plan with a memo: the test checks nothing");
}
