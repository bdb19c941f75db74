//! The cpu engine keeps the edges no query edge can use apart from its
//! graph (`csm_graph::relevant`). Against the brute-force oracle lifted by
//! recounting, which validates every update on the whole graph: per batch
//! the same positive, negative and skipped counts in lenient mode, and the
//! same error (line and reason) in strict mode, after which both go on
//! from an unchanged graph; the same for one update at a time, where a
//! failing update leaves the results of those before it.

mod common;

use std::sync::Arc;

use common::*;
use csm_baselines::oracle::BruteForce;
use csm_baselines::CpuEngine;
use csm_engine::{Batch, BatchResult, ContinuousMatcher, EngineError, Recount};
use csm_graph::{Edge, LocatedUpdate, Strictness, Update};
use csm_planner::CostOrder;
use proptest::prelude::*;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A batch of valid updates with invalid ones of every kind mixed in:
/// duplicate insertions (with another edge label too), deletions of absent
/// edges or naming another label, self-loops, unknown endpoints; vertex
/// removals (valid ones, and invalid ones naming another label) only when
/// asked.
fn noisy_batch(
    r: &mut ChaCha8Rng,
    m: &mut Model,
    vl: u32,
    el: Option<u32>,
    removals: bool,
    noise: f64,
) -> Vec<LocatedUpdate> {
    let len = r.random_range(1..14);
    let mut valid = random_batch(r, m, len, vl, el, true);
    if !removals {
        valid.retain(|u| !matches!(u.update, Update::RemoveVertex { .. }));
    }
    let n = m.labels.keys().max().map_or(0, |&x| x + 1);
    let mut out = Vec::new();
    for u in valid {
        if r.random_bool(noise) {
            let a = r.random_range(0..n.max(1));
            let b = r.random_range(0..n.max(1));
            let l = el.map_or(0, |k| r.random_range(0..k));
            let bad = match r.random_range(0..4 + u32::from(removals)) {
                0 => Update::AddEdge(Edge::new(a, a, l)),
                1 => Update::AddEdge(Edge::new(a, n + 5, l)),
                // present or absent: a duplicate or a new edge
                2 => Update::AddEdge(Edge::new(a, b, l)),
                // absent, or present under this label or (with edge labels)
                // another: valid or rejected
                3 => Update::RemoveEdge(Edge::new(a, b, l)),
                // a removal naming another label than the vertex's
                _ => Update::RemoveVertex {
                    id: a,
                    label: Some(m.labels.get(&a).map_or(0, |&x| x + 1)),
                },
            };
            out.push(bad);
        }
        out.push(u.update);
    }
    located(out)
}

fn run(eng: &mut dyn ContinuousMatcher, b: &[LocatedUpdate], s: Strictness) -> Result<BatchResult, EngineError> {
    eng.process(Batch {
        updates: b,
        source: "t",
        strictness: s,
    })
}

/// What must agree between engines: counts and skipped, or the error.
fn outcome(r: &Result<BatchResult, EngineError>) -> Result<(u64, u64, usize), String> {
    match r {
        Ok(b) => Ok((b.positive, b.negative, b.skipped)),
        Err(e) => Err(e.to_string()),
    }
}

fn check_case(seed: u64) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let el = seed.is_multiple_of(3).then_some(2);
    let vl = r.random_range(2..=3u32);
    let n = r.random_range(6..12u32);
    let p = r.random_range(0.2..0.6);
    let mut model = random_graph(&mut r, n, p, vl, el);
    let k = r.random_range(2..=4usize);
    let q = random_query(&mut r, k, 0.3, vl, el);
    let strictness = if seed.is_multiple_of(2) {
        Strictness::Strict
    } else {
        Strictness::Lenient
    };
    let removals = seed % 4 < 2;
    // strict batches stop at their first error: fewer of them
    let noise = if strictness == Strictness::Strict { 0.06 } else { 0.25 };
    let mut apart = CpuEngine::new(1, Arc::new(CostOrder)).expect("pool");
    let mut each = CpuEngine::new(2, Arc::new(CostOrder)).expect("pool");
    // batches of edge updates routed on the pool
    let mut pooled = CpuEngine::new(2, Arc::new(CostOrder))
        .expect("pool")
        .route_parallel_min(0);
    let mut oracle = Recount::new(BruteForce);
    let mut oracle_each = Recount::new(BruteForce);
    let g0 = model.to_data();
    apart.init(&g0, &q).expect("init");
    each.init(&g0, &q).expect("init");
    pooled.init(&g0, &q).expect("init");
    oracle.init(&g0, &q).expect("init");
    oracle_each.init(&g0, &q).expect("init");
    // the case must exercise the split
    prop_assume!(apart.edges_apart() > 0);
    for i in 0..4 {
        let batch = noisy_batch(&mut r, &mut model, vl, el, removals, noise);
        let want = run(&mut oracle, &batch, strictness);
        let got = run(&mut apart, &batch, strictness);
        prop_assert_eq!(outcome(&got), outcome(&want), "seed {} batch {}: {:?}", seed, i, batch);
        let pooled_got = run(&mut pooled, &batch, strictness);
        prop_assert_eq!(
            outcome(&pooled_got),
            outcome(&want),
            "pooled: seed {} batch {}: {:?}",
            seed,
            i,
            batch
        );
        // one at a time
        let (mut want_each, mut got_each) = (Vec::new(), Vec::new());
        let b = Batch {
            updates: &batch,
            source: "t",
            strictness,
        };
        let we = oracle_each.process_each(b, &mut want_each);
        let ge = each.process_each(b, &mut got_each);
        prop_assert_eq!(
            we.map_err(|e| e.to_string()),
            ge.map_err(|e| e.to_string()),
            "seed {} batch {}",
            seed,
            i
        );
        let counts = |v: &[BatchResult]| {
            v.iter()
                .map(|b| (b.positive, b.negative, b.skipped))
                .collect::<Vec<_>>()
        };
        prop_assert_eq!(counts(&got_each), counts(&want_each), "seed {} batch {}", seed, i);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn edges_kept_apart_match_the_oracle(seed in any::<u64>()) {
        check_case(seed)?;
    }
}

/// The edge-labelled cases that matter most: a pair whose edge holds a
/// kept label in the graph, inserted again with a dropped one, and the
/// reverse, in one batch and across batches.
#[test]
fn a_pair_changes_store_when_its_edge_label_does() {
    let g = csm_graph::GraphData {
        labels: vec![0, 1, 0, 1],
        edges: vec![Edge::new(0, 1, 0), Edge::new(1, 2, 1), Edge::new(2, 3, 0)],
        edge_labelled: true,
    };
    // a path 0-1-0 with edge label 0: edges (1, 2, 1) are dropped
    let q = csm_planner::QueryGraph::new(vec![0, 1, 0], &[(0, 1, 0), (1, 2, 0)], true).unwrap();
    let ups = |v: &[(bool, u32, u32, u32)]| {
        located(v.iter().map(|&(ins, a, b, l)| {
            let e = Edge::new(a, b, l);
            if ins {
                Update::AddEdge(e)
            } else {
                Update::RemoveEdge(e)
            }
        }))
    };
    let batches = [
        ups(&[(true, 1, 0, 1)]),                                     // duplicate of a kept edge
        ups(&[(true, 2, 1, 0)]),                                     // duplicate of a dropped edge
        ups(&[(false, 2, 1, 0), (true, 2, 1, 0)]),                   // dropped -> kept
        ups(&[(false, 0, 1, 7), (true, 0, 1, 1), (false, 0, 1, 1)]), // kept -> dropped -> gone
        ups(&[(true, 0, 1, 0), (true, 2, 1, 1)]),                    // kept again; a duplicate
        ups(&[(true, 3, 0, 1), (false, 3, 0, 0), (true, 3, 0, 0)]),  // dropped, removed, kept
    ];
    for strictness in [Strictness::Strict, Strictness::Lenient] {
        let mut apart = CpuEngine::new(1, Arc::new(CostOrder)).unwrap();
        let mut oracle = Recount::new(BruteForce);
        apart.init(&g, &q).unwrap();
        oracle.init(&g, &q).unwrap();
        assert_eq!(apart.edges_apart(), 1);
        for b in &batches {
            let want = run(&mut oracle, b, strictness);
            let got = run(&mut apart, b, strictness);
            assert_eq!(outcome(&got), outcome(&want), "{strictness:?} {b:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// `csm match` counts on the edges of the query's triples, without
    /// the vertices they leave isolated where those are half or more,
    /// renumbered (`EdgesApart::counted_csr`): the cpu engine there equals
    /// VF2 or brute force on the whole graph. Every other case spreads the
    /// vertices over thrice the ids first, so that the renumbering runs.
    #[test]
    fn static_counts_on_kept_edges_equal_the_whole_graphs(seed in any::<u64>()) {
        let (whole, data, q) = random_case(seed, seed % 3 == 0, 5);
        let want = vf2_or_brute_force(&whole, &q);
        let data = if seed % 2 == 0 { spread(&data, seed) } else { data };
        let csr = csm_engine::EdgesApart::counted_csr(&data, &q, true).expect("valid");
        prop_assert!(seed % 2 == 1 || csm_graph::GraphView::num_vertices(&csr) < data.num_vertices());
        let cpu = CpuEngine::new(1, Arc::new(CostOrder)).expect("pool");
        prop_assert_eq!(csm_engine::StaticMatcher::count(&cpu, &csr, &q).unwrap(), want, "seed {}", seed);
    }
}

/// `g` with vertex `v` renamed `3v + 1 + seed % 2` among thrice the ids, the
/// new ids isolated with labels of their own or the graph's.
fn spread(g: &csm_graph::GraphData, seed: u64) -> csm_graph::GraphData {
    let at = |v: u32| 3 * v + 1 + (seed % 2) as u32;
    let mut labels: Vec<u32> = (0..3 * g.labels.len() as u32 + 2).map(|x| x % 4).collect();
    for (v, &l) in g.labels.iter().enumerate() {
        labels[at(v as u32) as usize] = l;
    }
    let edges = g.edges.iter().map(|e| Edge::new(at(e.u), at(e.v), e.label)).collect();
    csm_graph::GraphData {
        labels,
        edges,
        edge_labelled: g.edge_labelled,
    }
}

/// A repeated pair in a caller's graph is named by the whole graph's ids
/// and position, also when the counted graph dropped vertices and edges.
#[test]
fn a_counted_graphs_build_error_names_the_whole_graphs_ids() {
    let mut labels = vec![2u32; 20];
    (labels[10], labels[12]) = (0, 1);
    let g = csm_graph::GraphData {
        labels,
        edges: vec![
            Edge::new(0, 1, 0), // dropped (labels 2-2)
            Edge::new(10, 12, 0),
            Edge::new(3, 4, 0),
            Edge::new(12, 10, 0), // the repeat, fourth edge
        ],
        edge_labelled: false,
    };
    let q = csm_planner::QueryGraph::new(vec![0, 1], &[(0, 1, 0)], false).unwrap();
    let err = csm_engine::EdgesApart::counted_csr(&g, &q, true).unwrap_err();
    assert_eq!(err.kind, csm_graph::ErrorKind::DuplicateEdge(10, 12), "{err}");
    assert_eq!(err.line, 4, "{err}");
}

/// A vertex with edges in both stores removed, added again (same label,
/// then, in a later batch, another), and given edges of kept and dropped
/// triples in the same batch; then those edges deleted and duplicated.
#[test]
fn a_removed_vertex_leaves_both_stores_and_may_come_back() {
    let g = csm_graph::GraphData {
        labels: vec![0, 1, 0, 1, 2],
        edges: vec![
            Edge::new(0, 1, 0),
            Edge::new(0, 2, 0),
            Edge::new(1, 2, 0),
            Edge::new(0, 3, 0),
            Edge::new(0, 4, 0),
        ],
        edge_labelled: false,
    };
    // a path 0-1-0: edges 0-1 kept, 0-0 and 0-2 (labels) dropped
    let q = csm_planner::QueryGraph::new(vec![0, 1, 0], &[(0, 1, 0), (1, 2, 0)], false).unwrap();
    let e = |a, b| Edge::new(a, b, 0);
    let batches = [
        located([
            Update::RemoveVertex { id: 0, label: None },
            Update::AddEdge(e(0, 2)), // unknown vertex
            Update::AddVertex { id: 0, label: 0 },
            Update::AddEdge(e(0, 2)), // dropped triple, new
            Update::AddEdge(e(0, 1)), // kept triple, new
            Update::AddEdge(e(4, 0)), // dropped, new
            Update::AddEdge(e(0, 2)), // duplicate in the map
        ]),
        located([Update::RemoveEdge(e(2, 0)), Update::AddEdge(e(0, 4))]), // the second a duplicate
        located([Update::RemoveVertex { id: 0, label: None }, Update::RemoveEdge(e(0, 4))]), // gone with the vertex
        located([
            Update::AddVertex { id: 0, label: 1 }, // back with another label
            Update::AddEdge(e(0, 2)),              // now kept (1-0)
            Update::AddEdge(e(0, 3)),              // now dropped (1-1)
            Update::RemoveVertex { id: 3, label: None },
            Update::AddEdge(e(0, 3)), // unknown vertex
        ]),
        located([Update::AddVertex { id: 3, label: 1 }, Update::AddEdge(e(3, 0))]),
        located([Update::AddEdge(e(3, 0))]), // duplicate
        // edges touched, their vertex removed and added again, touched again
        located([
            Update::AddEdge(e(2, 4)),    // dropped (0-2), new
            Update::RemoveEdge(e(0, 2)), // kept, present
            Update::RemoveVertex { id: 2, label: None },
            Update::AddVertex { id: 2, label: 0 },
            Update::AddEdge(e(4, 2)), // new again
            Update::AddEdge(e(2, 0)), // new again
            Update::RemoveVertex { id: 4, label: None },
            Update::AddVertex { id: 4, label: 1 }, // another label (a relabelling)
            Update::AddEdge(e(4, 1)),              // now dropped (1-1)
            Update::AddEdge(e(2, 4)),              // now kept (0-1)
        ]),
        located([Update::AddVertex { id: 4, label: 1 }, Update::AddEdge(e(4, 1))]), // duplicates
        located([Update::AddEdge(e(1, 4)), Update::RemoveEdge(e(4, 2))]),           // a duplicate; kept, present
    ];
    for strictness in [Strictness::Strict, Strictness::Lenient] {
        let mut apart = CpuEngine::new(1, Arc::new(CostOrder)).unwrap();
        let mut oracle = Recount::new(BruteForce);
        // one update at a time, where a relabelled vertex's edges are routed
        // by its new label
        let mut each = CpuEngine::new(2, Arc::new(CostOrder)).unwrap();
        let mut oracle_each = Recount::new(BruteForce);
        for e in [
            &mut apart as &mut dyn ContinuousMatcher,
            &mut oracle,
            &mut each,
            &mut oracle_each,
        ] {
            e.init(&g, &q).unwrap();
        }
        assert!(apart.edges_apart() > 0);
        for b in &batches {
            let want = run(&mut oracle, b, strictness);
            let got = run(&mut apart, b, strictness);
            assert_eq!(outcome(&got), outcome(&want), "{strictness:?} {b:?}");
            let batch = Batch {
                updates: b,
                source: "t",
                strictness,
            };
            let (mut want_each, mut got_each) = (Vec::new(), Vec::new());
            let we = oracle_each
                .process_each(batch, &mut want_each)
                .map_err(|e| e.to_string());
            let ge = each.process_each(batch, &mut got_each).map_err(|e| e.to_string());
            assert_eq!(ge, we, "{strictness:?} {b:?}");
            let counts = |v: &[BatchResult]| {
                v.iter()
                    .map(|r| (r.positive, r.negative, r.skipped))
                    .collect::<Vec<_>>()
            };
            assert_eq!(counts(&got_each), counts(&want_each), "{strictness:?} {b:?}");
        }
    }
}
