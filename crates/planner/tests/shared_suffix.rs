//! Executors sharing one suffix-memo table ([`csm_planner::SharedSuffixMemo`])
//! count what an executor alone counts: a second executor, with an empty
//! table of its own, takes the first one's shared completions (the plain
//! counts are checked against brute force in csm-baselines' oracle tests).

use csm_graph::gen::{graph_from_pairs, random_walk_query, rmat};
use csm_graph::{CsrGraph, GraphView, Version, VertexId};
use csm_planner::{static_plan, CostOrder, Executor, GraphStats, MemoScope, NoVisitor, QueryGraph, SharedSuffixMemo};

#[test]
fn executors_sharing_a_suffix_table_count_what_one_counts_alone() {
    let table: &'static SharedSuffixMemo = Box::leak(Box::new(SharedSuffixMemo::new(1 << 12)));
    let mut memoised = 0;
    for seed in 0..6u64 {
        let n = 1 << 9;
        let pairs = rmat(9, 3000, 0.55, 0.2, 0.2, seed);
        let data = graph_from_pairs(n, &pairs, (0..n as u32).map(|v| v % 3).collect(), None);
        let g = CsrGraph::from_data(&data).unwrap();
        let Some(qd) = random_walk_query(&data, 7 + seed as usize % 2, seed, false) else {
            continue;
        };
        let q = QueryGraph::from_data(&qd).unwrap();
        let plan = static_plan(&q, &CostOrder, &GraphStats::of(&g), Version::New);
        if plan.plans().iter().all(|p| p.suffix_memo == 0) {
            continue;
        }
        memoised += 1;
        let scope = MemoScope::new();
        let (mut first, mut second, mut alone) = (Executor::new(), Executor::new(), Executor::new());
        first.share_suffix(Some(table));
        second.share_suffix(Some(table));
        let starts = (0..n as VertexId).filter(|&v| g.label(v) == plan.levels[0].label);
        for v in starts {
            let want = alone.count(&g, &plan, &[v], &mut NoVisitor);
            assert_eq!(
                first.count_within(scope, &g, &plan, &[v], &mut NoVisitor),
                want,
                "seed {seed} start {v}"
            );
            assert_eq!(
                second.count_within(scope, &g, &plan, &[v], &mut NoVisitor),
                want,
                "seed {seed} start {v}"
            );
        }
    }
    assert!(memoised >= 3, "only {memoised} plans cache completions");
    assert!(table.used(), "no subtree was large enough to be shared");
}
