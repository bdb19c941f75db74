//! Symmetry breaking ([`csm_planner::break_symmetry`]) is count-preserving:
//! a restricted plan's count times its factor equals the plain plan's count,
//! for static plans (nothing fixed) and for delta plans with the seed edge
//! bound (two vertices fixed), over every standard query, with and without
//! vertex labels, on random graphs. The plain counts are themselves checked
//! against brute force in csm-baselines' oracle tests.

use csm_graph::gen::{erdos_renyi, graph_from_pairs, standard_query, with_labels, STANDARD_QUERIES};
use csm_graph::{CsrGraph, GraphView, Version};
use csm_planner::{
    automorphisms, break_symmetry, delta_plans, static_plan, Executor, GcsmOrder, GraphStats, NoVisitor, QueryGraph,
    MAX_AUTOMORPHISMS,
};

fn queries() -> Vec<(String, QueryGraph)> {
    let mut out = Vec::new();
    for &name in STANDARD_QUERIES {
        let q = standard_query(name).unwrap();
        out.push((name.to_string(), QueryGraph::from_data(&q).unwrap()));
        // alternate labels keep part of the symmetry
        let labels: Vec<u32> = (0..q.labels.len() as u32).map(|i| i % 2).collect();
        out.push((
            format!("{name}/alt"),
            QueryGraph::from_data(&with_labels(&q, &labels)).unwrap(),
        ));
    }
    out
}

fn graph(n: usize, m: usize, seed: u64, labels: u32) -> CsrGraph {
    let pairs = erdos_renyi(n, m, seed);
    let l = (0..n as u32).map(|v| (v * v / 3 + seed as u32) % labels).collect();
    CsrGraph::from_data(&graph_from_pairs(n, &pairs, l, None)).unwrap()
}

#[test]
fn static_restricted_count_times_factor_is_the_plain_count() {
    let mut ex = Executor::new();
    let mut restricted_some = false;
    for (seed, labels) in [(1, 1), (2, 2)] {
        let g = graph(28, 160, seed, labels);
        let stats = GraphStats::of(&g);
        for (name, q) in queries() {
            let plan = static_plan(&q, &GcsmOrder, &stats, Version::New);
            let auts = automorphisms(&q, MAX_AUTOMORPHISMS).unwrap();
            let (rp, factor) = break_symmetry(&plan, &auts, 0);
            assert_eq!(
                auts.len() % factor as usize,
                0,
                "{name}: the chain's factor divides |Aut(Q)|"
            );
            restricted_some |= factor > 1;
            let mut count = |p| -> u64 {
                (0..g.num_vertices() as u32)
                    .filter(|&v| g.labels()[v as usize] == plan.levels[0].label)
                    .map(|v| ex.count(&g, p, &[v], &mut NoVisitor))
                    .sum()
            };
            let plain = count(&plan);
            let cut = count(&rp);
            assert_eq!(
                cut * factor,
                plain,
                "{name} on graph {seed}: restricted {cut} x {factor}"
            );
        }
    }
    assert!(restricted_some);
}

#[test]
fn delta_restricted_count_times_factor_is_the_plain_count_per_seed() {
    let mut ex = Executor::new();
    for (name, q, g) in queries()
        .into_iter()
        .flat_map(|(n, q)| [1, 2].map(|l| (n.clone(), q.clone(), graph(24, 130, 3, l))))
    {
        let stats = GraphStats::of(&g);
        let auts = automorphisms(&q, MAX_AUTOMORPHISMS).unwrap();
        for dp in delta_plans(&q, &GcsmOrder, &stats) {
            let (rp, factor) = break_symmetry(&dp.plan, &auts, 2);
            let (a, b) = (dp.plan.order[0], dp.plan.order[1]);
            for x in 0..g.num_vertices() as u32 {
                for &y in g.nbrs(x, Version::New).base {
                    if g.labels()[x as usize] != q.label(a) || g.labels()[y as usize] != q.label(b) {
                        continue;
                    }
                    let plain = ex.count(&g, &dp.plan, &[x, y], &mut NoVisitor);
                    let cut = ex.count(&g, &rp, &[x, y], &mut NoVisitor);
                    assert_eq!(cut * factor, plain, "{name}, edge {}, seed ({x}, {y})", dp.edge_index);
                }
            }
        }
    }
}
