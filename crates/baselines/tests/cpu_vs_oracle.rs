//! The cpu engine against independent oracles: per-batch positive/negative
//! equal the brute-force set differences |M(G')\M(G)| and |M(G)\M(G')|;
//! static counts equal petgraph's VF2; batches equal one-update-at-a-time.

mod common;

use std::sync::Arc;

use common::*;
use csm_baselines::oracle::{BruteForce, Vf2};
use csm_baselines::{CpuEngine, HubRule};
use csm_engine::{Batch, ContinuousMatcher, StaticMatcher};
use csm_graph::{CsrGraph, Strictness};
use csm_planner::{drop_trivial_edge_labels, CostOrder, GcsmOrder, OrderStrategy, SampledOrder};
use proptest::prelude::*;
use rand::Rng;

fn engine(threads: usize, cost: bool) -> CpuEngine {
    engine_with(threads, if cost { 1 } else { 0 })
}

/// 0: gcsm, 1: cost, 2: auto sampling every query (not only those of 6
/// vertices or more), so that its chosen orders meet the oracles.
fn engine_with(threads: usize, order: u8) -> CpuEngine {
    let order: Arc<dyn OrderStrategy> = match order {
        0 => Arc::new(GcsmOrder),
        1 => Arc::new(CostOrder),
        _ => Arc::new(SampledOrder {
            min_query: 2,
            delta: true,
            min_work: 0.0,
            probes: 16,
            ..SampledOrder::default()
        }),
    };
    CpuEngine::new(threads, order).expect("pool")
}

fn check_case(seed: u64, edge_labels: bool, vertex_ops: bool, threads: usize, order: u8) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let el = edge_labels.then_some(2);
    let (vl, mut model) = random_stream_graph(&mut r, el);
    let k = r.random_range(2..=5usize);
    let q = random_query(&mut r, k, 0.3, vl, el);
    // group the lists of vertices of degree 1-4 by label in every batch
    // (HubLabelGroups; in batches touching many lists, of degree 1-6), or,
    // for a quarter of the seeds, never
    let rule = HubRule {
        min_degree: 1 + (seed % 4) as usize,
        batch_min_degree: 1 + (seed % 4 + seed / 4 % 3) as usize,
        min_query: if seed % 4 == 3 { usize::MAX } else { 2 },
    };
    let mut eng = engine_with(threads, order).hub_rule(rule);
    eng.init(&model.to_data(), &q).expect("init");
    let spec = StreamSpec {
        batches: 3,
        max_len: 12,
        vlabels: vl,
        elabels: el,
        vertex_ops,
    };
    check_set_differences(&mut eng, &mut r, &mut model, &q, spec)
        .map_err(|e| TestCaseError::fail(format!("seed {seed}: {e}")))?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn mixed_batches_match_set_differences(seed in any::<u64>()) {
        check_case(seed, false, false, 1, (seed % 2) as u8 * 2)?;
    }

    #[test]
    fn edge_labels_and_vertex_updates_match(seed in any::<u64>()) {
        check_case(seed, true, true, 1, 1 + (seed % 2) as u8)?;
    }

    #[test]
    fn parallel_engine_matches(seed in any::<u64>()) {
        check_case(seed, seed % 2 == 0, true, 3, (seed % 3) as u8)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, .. ProptestConfig::default() })]

    /// CSM-study files spell `e u v 0` on every edge. With edge labels that
    /// are all zero dropped from graph and query (`drop_trivial_edge_labels`,
    /// as the `csm` commands do), counts equal the oracle's on the labelled
    /// inputs; a query edge with another label still matches nothing.
    #[test]
    fn dropped_zero_edge_labels_match(seed in any::<u64>()) {
        let mut r = rng(seed);
        let (vl, mut model) = random_stream_graph(&mut r, Some(1));
        let k = r.random_range(2..=5usize);
        let q = random_query(&mut r, k, 0.3, vl, Some(if seed % 4 == 0 { 2 } else { 1 }));
        let (mut g, mut dropped) = (model.to_data(), q.clone());
        prop_assert!(g.edge_labelled && q.edge_labelled());
        // the stream below inserts label 0 only (`elabels: Some(1)`)
        drop_trivial_edge_labels(&mut g, &[], &mut dropped);
        prop_assert!(!g.edge_labelled);
        prop_assert_eq!(dropped.edge_labelled(), !q.edge_labels_all_zero());
        let mut eng = engine_with(1 + (seed % 2) as usize * 2, (seed % 3) as u8);
        eng.init(&g, &dropped).expect("init");
        let spec = StreamSpec {
            batches: 3,
            max_len: 12,
            vlabels: vl,
            elabels: Some(1),
            vertex_ops: true,
        };
        check_set_differences(&mut eng, &mut r, &mut model, &q, spec)
            .map_err(|e| TestCaseError::fail(format!("seed {seed}: {e}")))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, .. ProptestConfig::default() })]

    /// Vertices removed in one batch come back in a later one under a
    /// random label (possibly new to the graph), with edges to random
    /// vertices; the random batches only ever add fresh ids. Every batch
    /// against the brute-force set differences.
    #[test]
    fn removed_vertices_return_under_other_labels(seed in any::<u64>()) {
        use csm_baselines::oracle::embeddings;
        use csm_graph::{Edge, LocatedUpdate, Update};
        let mut r = rng(seed);
        let el = (seed % 2 == 0).then_some(2);
        let (vl, mut model) = random_stream_graph(&mut r, el);
        let k = r.random_range(2..=4usize);
        let q = random_query(&mut r, k, 0.3, vl, el);
        let mut eng = engine_with(1 + (seed % 3 == 0) as usize * 2, (seed % 3) as u8);
        eng.init(&model.to_data(), &q).expect("init");
        let mut gone: Vec<u32> = Vec::new();
        for b in 0..6 {
            let before = embeddings(&model.to_data(), &q);
            let batch: Vec<LocatedUpdate> = if b % 2 == 0 {
                let before: Vec<u32> = model.labels.keys().copied().collect();
                let len = r.random_range(1..10);
                let batch = random_batch(&mut r, &mut model, len, vl, el, true);
                gone.extend(before.into_iter().filter(|v| !model.labels.contains_key(v)));
                batch
            } else {
                // back under a label drawn from one more than the graph had
                let mut ups = Vec::new();
                for &v in gone.iter().filter(|v| !model.labels.contains_key(v)) {
                    ups.push(Update::AddVertex { id: v, label: r.random_range(0..=vl) });
                    let others: Vec<u32> = model.labels.keys().copied().filter(|&w| w != v).collect();
                    for &w in others.iter().take(3) {
                        ups.push(Update::AddEdge(Edge::new(v, w, el.map_or(0, |k| r.random_range(0..k)))));
                    }
                }
                gone.clear();
                ups.iter().for_each(|u| model.apply(u));
                located(ups)
            };
            check_batch(&mut eng, b, &before, &model, &q, &batch)
                .map_err(|e| TestCaseError::fail(format!("seed {seed}: {e}")))?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn static_counts_equal_vf2_and_brute_force(seed in any::<u64>()) {
        let mut r = rng(seed);
        let vl = r.random_range(1..=3u32);
        let el = (seed % 2 == 0).then_some(2);
        let (n, p) = (r.random_range(4..12u32), r.random_range(0.2..0.7));
        let model = random_graph(&mut r, n, p, vl, el);
        let k = r.random_range(2..=5usize);
        let q = random_query(&mut r, k, 0.3, vl, el);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let vf2 = Vf2.count(&g, &q).expect("small");
        let brute = BruteForce.count(&g, &q).expect("small");
        prop_assert_eq!(vf2, brute, "oracles disagree on {:?}", q);
        for threads in [1, 2] {
            for order in 0..3 {
                prop_assert_eq!(engine_with(threads, order).count(&g, &q).expect("count"), vf2);
            }
        }
    }

    /// A count capped at a limit is `min(VF2's count, limit)`, for limits
    /// below, at and above the count, on one thread and on several; also
    /// when the race of the cost order and `auto` starts from a zero time
    /// slice, so that runs are cut and started again until a slice suffices.
    #[test]
    fn capped_static_counts_equal_the_capped_vf2_count(seed in any::<u64>()) {
        let mut r = rng(seed);
        let vl = r.random_range(1..=2u32);
        let el = (seed % 3 == 0).then_some(2);
        let (n, p) = (r.random_range(5..14u32), r.random_range(0.3..0.8));
        let model = random_graph(&mut r, n, p, vl, el);
        let k = r.random_range(2..=5usize);
        let q = random_query(&mut r, k, 0.3, vl, el);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let vf2 = Vf2.count(&g, &q).expect("small");
        let limits = [1, vf2 / 3 + 1, vf2.max(1), vf2 + 1, r.random_range(1..=vf2 + 2)];
        for limit in limits {
            for threads in [1, 3] {
                let order = r.random_range(0..3);
                let capped = engine_with(threads, order).count_at_most(&g, &q, limit).expect("count");
                prop_assert_eq!(capped, vf2.min(limit), "limit {} threads {} order {}", limit, threads, order);
                let raced = engine_with(threads, 2).first_slice(std::time::Duration::ZERO);
                let capped = raced.count_at_most(&g, &q, limit).expect("count");
                prop_assert_eq!(capped, vf2.min(limit), "limit {} threads {} raced from a zero slice", limit, threads);
            }
        }
    }

    /// A batch equals its updates applied one at a time: always in the net
    /// change, and in both counts when the batch only inserts or only deletes.
    #[test]
    fn batch_equals_one_update_at_a_time(seed in any::<u64>()) {
        let mut r = rng(seed);
        let vl = r.random_range(1..=2u32);
        let n = r.random_range(5..10u32);
        let mut model = random_graph(&mut r, n, 0.4, vl, None);
        let k = r.random_range(3..=4usize);
        let q = random_query(&mut r, k, 0.4, vl, None);
        let g0 = model.to_data();
        let batch = match seed % 3 {
            0 => random_batch(&mut r, &mut model, 10, vl, None, false),
            k => one_kind_batch(&mut r, &mut model, 8, k == 2),
        };
        let mut whole = engine(1, false);
        whole.init(&g0, &q).unwrap();
        let b = whole.process(Batch { updates: &batch, source: "t", strictness: Strictness::Strict }).unwrap();
        let mut single = engine(1, false);
        single.init(&g0, &q).unwrap();
        let (mut p, mut n) = (0u64, 0u64);
        for u in &batch {
            let s = single.process(Batch { updates: std::slice::from_ref(u), source: "t", strictness: Strictness::Strict }).unwrap();
            p += s.positive;
            n += s.negative;
        }
        prop_assert_eq!(b.positive as i64 - b.negative as i64, p as i64 - n as i64);
        // With only insertions (or only deletions) no match can appear and
        // vanish inside the batch, so the split is exact too.
        let inserts = batch.iter().filter(|u| matches!(u.update, csm_graph::Update::AddEdge(_))).count();
        if inserts == 0 || inserts == batch.len() {
            prop_assert_eq!((b.positive, b.negative), (p, n));
        }
    }
}

#[test]
fn triangle_on_a_4_clique() {
    // K4 has 4 triangles, 24 embeddings each counted as 6 automorphic images.
    let model = {
        let mut m = random_graph(&mut rng(1), 4, 1.0, 1, None);
        m.edge_labelled = false;
        m
    };
    let q = csm_planner::QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
    let g = CsrGraph::from_data(&model.to_data()).unwrap();
    assert_eq!(engine(1, false).count(&g, &q).unwrap(), 24);
    assert_eq!(Vf2.count(&g, &q).unwrap(), 24);
}

/// Size-5 to size-7 queries on dense graphs, where the last-level memo
/// (`Plan::memo_from`) is reused across many siblings and must be dropped
/// whenever a binding above it changes (the 7-wheel's plans cache below
/// depths 2 to 4), statically and per batch.
#[test]
fn larger_queries_on_dense_graphs_equal_brute_force() {
    let named =
        |n: &str| csm_planner::QueryGraph::from_data(&csm_graph::gen::standard_query(n).expect("known")).unwrap();
    for seed in 0..6u64 {
        let mut r = rng(seed);
        let mut model = random_graph(&mut r, 10, 0.55, 1, None);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let mut queries: Vec<_> = ["house", "5-cycle", "prism", "hexagon-2chords", "7-wheel"]
            .iter()
            .map(|n| named(n))
            .collect();
        queries.push(random_query(&mut r, 6, 0.2, 1, None));
        for q in &queries {
            let want = BruteForce.count(&g, q).expect("small");
            for order in 0..3 {
                assert_eq!(
                    engine_with(1, order).count(&g, q).expect("count"),
                    want,
                    "seed {seed} {q:?}"
                );
            }
        }
        let q = named("7-wheel");
        let mut eng = engine_with(1, (seed % 3) as u8);
        eng.init(&model.to_data(), &q).expect("init");
        let spec = StreamSpec {
            batches: 3,
            max_len: 5,
            vlabels: 1,
            elabels: None,
            vertex_ops: false,
        };
        if let Err(e) = check_set_differences(&mut eng, &mut r, &mut model, &q, spec) {
            panic!("seed {seed}: {e}");
        }
    }
}

/// Static counts that read label groups (`CsrByLabel`) on graphs large
/// enough for the executor's pinned lists, memo and hoisted levels, with
/// labelled standard and random queries (vertex and edge labels), equal
/// VF2's, and equal the counts that filter whole lists by label.
#[test]
fn label_grouped_static_counts_equal_vf2() {
    let named = |n: &str| csm_graph::gen::standard_query(n).expect("known");
    for seed in 0..8u64 {
        let mut r = rng(100 + seed);
        let vl = r.random_range(2..=4u32);
        let el = (seed % 3 == 0).then_some(2);
        let model = random_graph(&mut r, 36, 0.3, vl, el);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let mut queries = Vec::new();
        for name in ["triangle", "4-cycle", "diamond", "house", "5-cycle", "prism"] {
            let shape = named(name);
            let labels: Vec<u32> = (0..shape.labels.len()).map(|_| r.random_range(0..vl)).collect();
            let mut q = csm_graph::gen::with_labels(&shape, &labels);
            if el.is_some() {
                // edge label 0 on every query edge: half the data edges fit
                q.edge_labelled = true;
            }
            queries.push(csm_planner::QueryGraph::from_data(&q).expect("query"));
        }
        queries.push(random_query(&mut r, 5, 0.3, vl, el));
        for q in &queries {
            let want = Vf2.count(&g, q).expect("vf2");
            for order in 0..3 {
                let grouped = engine_with(2, order).count(&g, q).expect("count");
                let filtered = engine_with(1, order)
                    .without_label_groups()
                    .count(&g, q)
                    .expect("count");
                assert_eq!((grouped, filtered), (want, want), "seed {seed} order {order} {q:?}");
            }
        }
    }
}

/// Labels anywhere in u32 (here near 4·10^9 and above 2^16, where label
/// groups fall back from 16-bit keys): static counts and batches equal
/// the oracles', and nothing sizes a table by the largest label.
#[test]
fn labels_near_the_top_of_u32_match_the_oracles() {
    let big = |l: u32| 4_000_000_000 - 70_001 * l;
    for seed in 0..4u64 {
        let mut r = rng(500 + seed);
        let model = random_graph(&mut r, 30, 0.3, 3, None);
        let mut data = model.to_data();
        for l in &mut data.labels {
            if *l != csm_graph::ABSENT {
                *l = big(*l);
            }
        }
        let g = CsrGraph::from_data(&data).expect("valid");
        for name in ["triangle", "4-cycle", "house", "5-cycle"] {
            let shape = csm_graph::gen::standard_query(name).expect("known");
            let labels: Vec<u32> = (0..shape.labels.len()).map(|_| big(r.random_range(0..3))).collect();
            let q = csm_planner::QueryGraph::from_data(&csm_graph::gen::with_labels(&shape, &labels)).expect("query");
            let want = Vf2.count(&g, &q).expect("vf2");
            for order in 0..3 {
                assert_eq!(
                    engine_with(2, order).count(&g, &q).expect("count"),
                    want,
                    "seed {seed} {name}"
                );
            }
        }
    }
}

/// Plans made on a graph whose vertices all carry the query's one label
/// skip label checks; a batch that adds a vertex of another label must not
/// let it match (found by `dropped_zero_edge_labels_match`: a 3-path query
/// counted a path through a new vertex labelled 1). Every registered
/// continuous engine, against the brute-force set differences.
#[test]
fn vertices_of_a_new_label_do_not_match_plans_of_one_label() {
    use csm_baselines::oracle::embeddings;
    use csm_baselines::registry::{continuous_engine, EngineOptions, ENGINES};
    use csm_graph::{Edge, Update};
    let e = |u, v| Edge::new(u, v, 0);
    let g0 = Model {
        labels: (0..5).map(|v| (v, 0)).collect(),
        edges: [(0, 1), (0, 4), (1, 2), (1, 3), (2, 3), (3, 4)]
            .into_iter()
            .map(|k| (k, 0))
            .collect(),
        edge_labelled: false,
    };
    let batches = [
        vec![
            Update::AddEdge(e(0, 2)),
            Update::RemoveEdge(e(2, 1)),
            Update::AddVertex { id: 5, label: 1 },
            Update::RemoveEdge(e(1, 0)),
            Update::AddEdge(e(5, 3)),
        ],
        vec![
            Update::RemoveVertex { id: 1, label: None },
            Update::AddEdge(e(4, 5)),
            Update::RemoveEdge(e(3, 5)),
            Update::AddVertex { id: 6, label: 1 },
        ],
        vec![
            Update::AddEdge(e(6, 4)),
            Update::AddEdge(e(6, 0)),
            Update::AddEdge(e(5, 0)),
        ],
    ];
    let queries = [
        csm_planner::QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (0, 2, 0)], false).unwrap(),
        csm_planner::QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap(),
    ];
    for q in &queries {
        for &name in ENGINES {
            for threads in [1, 3] {
                let opts = EngineOptions {
                    threads,
                    ..EngineOptions::default()
                };
                let mut eng = continuous_engine(name, &opts).expect("registered engine");
                let mut model = g0.clone();
                eng.init(&model.to_data(), q).expect("init");
                for (b, ups) in batches.iter().enumerate() {
                    let before = embeddings(&model.to_data(), q);
                    ups.iter().for_each(|u| model.apply(u));
                    if let Err(e) = check_batch(eng.as_mut(), b, &before, &model, q, &located(ups.clone())) {
                        panic!("{threads} threads: {e}");
                    }
                }
            }
        }
    }
}

/// Dense 6- and 7-vertex queries, whose plans intersect a level's early
/// lists once per node above it ([`csm_planner::Level::partial`]): static
/// counts equal VF2's (or brute force), and mixed batches on 1 and 2
/// threads (with label groups of every list) equal the brute-force set
/// differences. Fails unless some plans carry partial intersections.
#[test]
fn dense_queries_with_partial_intersections_match_the_oracles() {
    let n = six_and_seven_vertex_queries_match_the_oracles(1000, 0.5, |p| p.levels.iter().any(|l| l.partial.is_some()));
    assert!(n > 20, "only {n} delta plans with partial intersections");
}

/// Sparse 6- and 7-vertex queries (trees and a few chords), whose plans end
/// in three or more independent levels counted by inclusion–exclusion
/// ([`csm_planner::Plan::wide_tail`]), against the same oracles. Fails
/// unless some plans have such tails.
#[test]
fn sparse_queries_with_wide_tails_match_the_oracles() {
    let n = six_and_seven_vertex_queries_match_the_oracles(2000, 0.1, |p| p.wide_tail.is_some());
    assert!(n > 20, "only {n} delta plans with wide tails");
}

/// Random graphs (8-11 vertices, 1-2 labels, edge labels every third
/// seed) and queries of 6-7 vertices with chord probability `extra`:
/// static counts against VF2 or brute force, three mixed batches against
/// the brute-force set differences; returns how many delta plans `has`.
fn six_and_seven_vertex_queries_match_the_oracles(
    seed0: u64,
    extra: f64,
    has: impl Fn(&csm_planner::Plan) -> bool,
) -> usize {
    let mut with = 0;
    for seed in 0..24u64 {
        let mut r = rng(seed0 + seed);
        let vl = r.random_range(1..=2u32);
        let el = (seed % 3 == 0).then_some(2);
        let n = r.random_range(8..12u32);
        let mut model = random_graph(&mut r, n, 0.55, vl, el);
        let k = r.random_range(6..=7usize);
        let q = random_query(&mut r, k, extra, vl, el);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let stats = csm_planner::GraphStats::of(&g);
        let plans = csm_planner::delta_plans(&q, &CostOrder, &stats);
        with += plans.iter().filter(|p| has(&p.plan)).count();
        let want = vf2_or_brute_force(&g, &q);
        assert_eq!(engine(1, true).count(&g, &q).unwrap(), want, "seed {seed} static");
        let threads = 1 + (seed % 2) as usize;
        let rule = HubRule {
            min_degree: 1,
            batch_min_degree: 1,
            min_query: 2,
        };
        let mut eng = engine(threads, true).hub_rule(rule);
        eng.init(&model.to_data(), &q).expect("init");
        let spec = StreamSpec {
            batches: 3,
            max_len: 6,
            vlabels: vl,
            elabels: el,
            vertex_ops: seed % 4 == 1,
        };
        if let Err(e) = check_set_differences(&mut eng, &mut r, &mut model, &q, spec) {
            panic!("seed {seed}: {e}");
        }
    }
    with
}

/// A capped count stops early, inside one executor's search: on K_16 a
/// 6-vertex path has 16!/10! embeddings, 15!/10! = 360,360 of them from
/// one start vertex, and a count capped at 1,000 stops after a few
/// thousand (executors flush their tallies every few hundred nodes). The
/// engine's capped counts on one thread and on several are the limit, or
/// the whole count under a higher limit.
#[test]
fn capped_counts_stop_early() {
    use csm_planner::{static_plan, GraphStats, NoVisitor, Quota};
    let model = random_graph(&mut rng(0), 16, 1.0, 1, None);
    let g = CsrGraph::from_data(&model.to_data()).expect("valid");
    let edges: Vec<_> = (1..6).map(|v| (v - 1, v, 0)).collect();
    let q = csm_planner::QueryGraph::new(vec![0; 6], &edges, false).expect("a path");
    let from_one: u64 = (11..=15).product();
    let all = 16 * from_one;
    let plan = static_plan(&q, &CostOrder, &GraphStats::of(&g), csm_graph::Version::New);
    let quota = Arc::new(Quota::new(1000));
    let mut ex = csm_planner::Executor::new();
    ex.set_quota(Some(quota.clone()));
    let counted = ex.count(&g, &plan, &[0], &mut NoVisitor);
    assert!(counted >= 1000, "a stopped count is at least the limit");
    assert!(counted < from_one / 4, "stopped after {counted} of {from_one}");
    assert_eq!(counted, quota.found(), "every counted match was tallied");
    assert_eq!(ex.count(&g, &plan, &[1], &mut NoVisitor), 0, "the quota stays reached");
    for threads in [1, 4] {
        assert_eq!(engine(threads, true).count_at_most(&g, &q, 1000).expect("count"), 1000);
        assert_eq!(
            engine(threads, true).count_at_most(&g, &q, all + 5).expect("count"),
            all
        );
    }
}

/// Queries whose last level reuses an earlier level's candidates while an
/// even earlier binding of their label conflicts with both (K_{2,3} with
/// the three-vertex side in one label, with and without labels on the
/// other side, and a house): the reused set already lacks that binding, so
/// counting must not subtract it again. Static counts against VF2, with
/// every order, and batches against the brute-force set differences.
#[test]
fn reused_levels_with_shared_conflicts_match_the_oracles() {
    let k23 = |l: [u32; 5]| {
        let edges: Vec<_> = [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)]
            .iter()
            .map(|&(a, b)| (a, b, 0))
            .collect();
        csm_planner::QueryGraph::new(l.to_vec(), &edges, false).expect("K_{2,3}")
    };
    let house = csm_planner::QueryGraph::from_data(&csm_graph::gen::standard_query("house").expect("known")).unwrap();
    let queries = [k23([0, 1, 2, 2, 2]), k23([0; 5]), k23([0, 0, 1, 1, 1]), house];
    // K_{2,3} in the order a, p, e, b, d: d reads a and b and reuses e's
    // candidates (which read a and lack p's binding), and p conflicts with
    // both e and d
    let fixed = || {
        let order: Arc<dyn OrderStrategy> = Arc::new(FixedStaticOrder(vec![0, 2, 3, 1, 4]));
        CpuEngine::new(1, order).expect("pool").without_symmetry()
    };
    for seed in 0..10u64 {
        let mut r = rng(3000 + seed);
        let vl = if seed % 2 == 0 { 3 } else { 2 };
        let mut model = random_graph(&mut r, 12, 0.6, vl, None);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        for (i, q) in queries.iter().enumerate() {
            let want = Vf2.count(&g, q).expect("small");
            if i < 3 {
                assert_eq!(
                    fixed().count(&g, q).expect("count"),
                    want,
                    "seed {seed} fixed order {q:?}"
                );
            }
            for order in 0..3 {
                for threads in [1, 2] {
                    let got = engine_with(threads, order).count(&g, q).expect("count");
                    assert_eq!(got, want, "seed {seed} order {order} threads {threads} {q:?}");
                }
            }
        }
        let q = &queries[(seed % 4) as usize];
        three_batches_match_set_differences(engine_with(1, (seed % 3) as u8), &mut r, &mut model, q, vl, 6, seed);
    }
}

/// Three random batches of up to `max_len` edge updates (labels below `vl`)
/// through `eng`, each checked against the brute-force set differences.
fn three_batches_match_set_differences(
    mut eng: CpuEngine,
    r: &mut rand_chacha::ChaCha8Rng,
    model: &mut Model,
    q: &csm_planner::QueryGraph,
    vl: u32,
    max_len: usize,
    seed: u64,
) {
    eng.init(&model.to_data(), q).expect("init");
    let spec = StreamSpec {
        batches: 3,
        max_len,
        vlabels: vl,
        elabels: None,
        vertex_ops: false,
    };
    if let Err(e) = check_set_differences(&mut eng, r, model, q, spec) {
        panic!("seed {seed}: {e}");
    }
}

/// The first level of an independent tail pair sized through the memo
/// ([`csm_planner::Plan::memo_level`]): RapidFlow's insert Q_58 (a–b, a–c,
/// a–e, a–f, b–e, b–f, c–e, c–f, d–f) in the order a b f c e d, where the
/// leaf d is hoisted after f and |N(a) ∩ N(b) ∩ N(c)| is cached by c across
/// the f's, with labels that keep d apart from e, that let them meet, and
/// none. Static counts against VF2 (with and without symmetry breaking, 1
/// and 2 threads) and batches against the brute-force set differences.
#[test]
fn tail_pair_memo_matches_the_oracles() {
    use csm_planner::{delta_plans, static_plan, GraphStats, QueryGraph};
    let edges: Vec<_> = [(0, 1), (0, 2), (0, 4), (0, 5), (1, 4), (1, 5), (2, 4), (2, 5), (3, 5)]
        .iter()
        .map(|&(a, b)| (a, b, 0))
        .collect();
    let q58 = |l: [u32; 6]| QueryGraph::new(l.to_vec(), &edges, false).expect("Q_58");
    let queries = [
        q58([0, 1, 2, 3, 2, 2]),
        q58([0, 1, 2, 2, 2, 2]),
        q58([0; 6]),
        q58([0, 0, 1, 1, 1, 1]),
    ];
    let pref = || Preferred(vec![0, 1, 5, 2, 4, 3]);
    let engine = |threads: usize, symmetry: bool| preferred_engine(pref(), threads, symmetry);
    for seed in 0..12u64 {
        let mut r = rng(4000 + seed);
        let vl = [4, 3, 2][(seed % 3) as usize];
        let mut model = random_graph(&mut r, 14, 0.6, vl, None);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        if seed == 0 {
            // the plans this test is about
            let stats = GraphStats::of(&g);
            let p = static_plan(&queries[0], &pref(), &stats, csm_graph::Version::New);
            assert_eq!(
                (p.order.clone(), p.memo_level(), p.memo_from),
                (vec![0, 1, 5, 2, 4, 3], Some(4), Some(2))
            );
            let memoised = delta_plans(&queries[0], &pref(), &stats)
                .iter()
                .filter(|d| d.plan.memo_level() == Some(4) && d.plan.memo_from.is_some())
                .count();
            assert!(
                memoised >= 2,
                "{memoised} delta plans size their tail pair through the memo"
            );
        }
        for q in &queries {
            let want = Vf2.count(&g, q).expect("small");
            for (threads, symmetry) in [(1, false), (1, true), (2, false), (2, true)] {
                let got = engine(threads, symmetry).count(&g, q).expect("count");
                assert_eq!(got, want, "seed {seed} threads {threads} symmetry {symmetry} {q:?}");
            }
        }
        let q = &queries[(seed % 4) as usize];
        let eng = engine(1 + (seed % 2) as usize, seed % 3 == 0);
        three_batches_match_set_differences(eng, &mut r, &mut model, q, vl, 8, seed);
    }
}

/// Twins: same-label vertices joined to the same vertices, which symmetry
/// breaking orders and the plans count in one go when they end the plan
/// ([`csm_planner::Plan::twin_tail`]: |S|·(|S| − 1), halved when ordered)
/// or form a tail whose candidate sets nest
/// ([`csm_planner::plan::WideTail::nested`]). RapidFlow's delete Q_57 (0 and 1
/// hang off 3 and 4; 5 joins 3, 4 and the leaf 2), K_{2,3} plus a chord
/// (0, 1, 2 hang off 3 and 4) and a fan whose tail's sets nest, with labels that make the twins, that let
/// other vertices meet them, and none. Static counts against VF2 (with and
/// without symmetry, 1 and 2 threads), batches of one edge (the plans that
/// symmetry restricts) and of several against the brute-force set
/// differences. Fails unless both shortcuts occur in the plans.
#[test]
fn twin_tails_match_the_oracles() {
    use csm_planner::{delta_plans, single_edge_restricted, GraphStats, QueryGraph, Sign};
    let q57: Vec<_> = [(0, 3), (0, 4), (1, 3), (1, 4), (2, 5), (3, 5), (4, 5)]
        .iter()
        .map(|&(a, b)| (a, b, 0))
        .collect();
    let k23: Vec<_> = [(0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
        .iter()
        .map(|&(a, b)| (a, b, 0))
        .collect();
    // 3 hangs off 0 and 2, 4 and 5 off 0, 1 and 2: their tail reuses 3's
    // candidates, a strict superset
    let fan: Vec<_> = [
        (0, 1),
        (0, 2),
        (0, 3),
        (2, 3),
        (0, 4),
        (1, 4),
        (2, 4),
        (0, 5),
        (1, 5),
        (2, 5),
    ]
    .iter()
    .map(|&(a, b)| (a, b, 0))
    .collect();
    let queries = [
        QueryGraph::new(vec![0, 0, 1, 2, 1, 3], &q57, false).expect("Q_57"),
        QueryGraph::new(vec![0, 0, 0, 1, 0, 1], &q57, false).expect("Q_57"),
        QueryGraph::new(vec![0; 6], &q57, false).expect("Q_57"),
        QueryGraph::new(vec![0, 0, 0, 1, 2], &k23, false).expect("K_2,3"),
        QueryGraph::new(vec![0; 5], &k23, false).expect("K_2,3"),
        QueryGraph::new(vec![0; 6], &fan, false).expect("fan"),
    ];
    let pref = |k: usize| match k {
        0..3 => Preferred(vec![3, 5, 4, 0, 1, 2]),
        3 | 4 => Preferred(vec![3, 4, 0, 1, 2]),
        _ => Preferred(vec![0, 1, 2, 3, 4, 5]),
    };
    let engine = |k: usize, threads: usize, symmetry: bool| preferred_engine(pref(k), threads, symmetry);
    for seed in 0..12u64 {
        let mut r = rng(5000 + seed);
        let vl = [2, 1, 3][(seed % 3) as usize];
        let model = random_graph(&mut r, 12, 0.7, vl, None);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        if seed == 0 {
            // the plans this test is about
            let stats = GraphStats::of(&g);
            let (mut twin, mut nested) = (0, 0);
            for (k, q) in queries.iter().enumerate() {
                let plans = delta_plans(q, &pref(k), &stats);
                let (_, restricted) = single_edge_restricted(q, &plans, Sign::Positive).expect("few automorphisms");
                twin += restricted.iter().filter(|p| p.plan.twin_tail).count();
                nested += plans
                    .iter()
                    .filter(|p| p.plan.wide_tail.as_ref().is_some_and(|t| t.nested.len() >= 3))
                    .count();
            }
            assert!(twin >= 2, "{twin} restricted plans end in twins");
            assert!(
                nested >= 2,
                "{nested} delta plans nest candidate sets within a wide tail"
            );
        }
        for (k, q) in queries.iter().enumerate() {
            let want = Vf2.count(&g, q).expect("small");
            for (threads, symmetry) in [(1, false), (1, true), (2, true)] {
                let got = engine(k, threads, symmetry).count(&g, q).expect("count");
                assert_eq!(got, want, "seed {seed} threads {threads} symmetry {symmetry} {q:?}");
            }
        }
        // batches of one edge (max_len 2) run the symmetry-restricted plans
        for (k, q) in queries.iter().enumerate() {
            let max_len = if (seed + k as u64).is_multiple_of(3) { 8 } else { 2 };
            let mut m = model.clone();
            three_batches_match_set_differences(engine(k, 1, true), &mut r, &mut m, q, vl, max_len, seed);
        }
    }
}

/// A `cpu` engine on `threads` threads that orders by `order`, with or
/// without symmetry breaking.
fn preferred_engine(order: Preferred, threads: usize, symmetry: bool) -> CpuEngine {
    let e = CpuEngine::new(threads, Arc::new(order)).expect("pool");
    if symmetry {
        e
    } else {
        e.without_symmetry()
    }
}

/// An order that follows a preference list: the prefix (a delta plan's
/// seed edge, or nothing), then repeatedly the first preferred vertex
/// joined to one already placed.
struct Preferred(Vec<usize>);

impl OrderStrategy for Preferred {
    fn name(&self) -> &'static str {
        "preferred"
    }
    fn order(&self, q: &csm_planner::QueryGraph, prefix: &[usize], _: &csm_planner::GraphStats) -> Vec<usize> {
        let mut order = prefix.to_vec();
        if order.is_empty() {
            order.push(self.0[0]);
        }
        while order.len() < self.0.len() {
            let next = self
                .0
                .iter()
                .copied()
                .find(|v| !order.contains(v) && order.iter().any(|&w| q.has_edge(*v, w)))
                .expect("a connected query");
            order.push(next);
        }
        order
    }
}

/// A fixed order for static plans (delta plans keep `cost`'s).
struct FixedStaticOrder(Vec<usize>);

impl OrderStrategy for FixedStaticOrder {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn order(&self, q: &csm_planner::QueryGraph, prefix: &[usize], stats: &csm_planner::GraphStats) -> Vec<usize> {
        if prefix.is_empty() {
            self.0.clone()
        } else {
            CostOrder.order(q, prefix, stats)
        }
    }
}

/// A triangle with a tail on two of its vertices: the cost order seeds on
/// a triangle edge and hoists the third triangle vertex to the last level
/// (its candidates are read once per seed and count as a factor), and the
/// executor prunes a seed whose hoisted set is empty instead of
/// enumerating the tails first. Counts with the prune equal the oracles',
/// on graphs where the triangle often cannot close.
#[test]
fn hoisted_closing_vertex_prunes_without_changing_counts() {
    use csm_planner::{delta_plans, GraphStats, QueryGraph};
    let mut hoisted_early = 0;
    for seed in 0..40u64 {
        let mut r = rng(7000 + seed);
        let vl = r.random_range(1..=2u32);
        let labels: Vec<_> = (0..6).map(|_| r.random_range(0..vl)).collect();
        let edges = [(0, 1, 0), (1, 2, 0), (0, 2, 0), (2, 3, 0), (3, 4, 0), (0, 5, 0)];
        let q = QueryGraph::new(labels, &edges, false).expect("valid query");
        let n = r.random_range(6..12u32);
        let p = r.random_range(0.25..0.55);
        let model = random_graph(&mut r, n, p, vl, None);
        let csr = CsrGraph::from_data(&model.to_data()).expect("csr");
        let plans = delta_plans(&q, &CostOrder, &GraphStats::of(&csr));
        hoisted_early += plans
            .iter()
            .filter(|p| {
                let last = p.plan.levels.len() - 1;
                p.plan.levels[last].hoist.is_some_and(|h| (h as usize) < last)
            })
            .count();
        assert_eq!(
            engine(1, true).count(&csr, &q).expect("count"),
            vf2_or_brute_force(&csr, &q),
            "static, seed {seed}"
        );
        for threads in [1, 2] {
            let mut m = model.clone();
            let mut eng = engine(threads, true);
            eng.init(&m.to_data(), &q).expect("init");
            let spec = StreamSpec {
                batches: 4,
                max_len: 10,
                vlabels: vl,
                elabels: None,
                vertex_ops: false,
            };
            if let Err(e) = check_set_differences(&mut eng, &mut r, &mut m, &q, spec) {
                panic!("seed {seed}, {threads} threads: {e}");
            }
        }
    }
    assert!(
        hoisted_early > 0,
        "no plan hoists its last level above the level before it"
    );
}

/// Tree-like queries (6-8 vertices, a chord now and then) over 1-4
/// labels on sparse random graphs, where branches die often: the
/// executor's failing sets (csm_planner::exec) skip the siblings of a
/// node whose failure does not depend on it. One label makes every
/// earlier non-adjacent vertex an injectivity conflict, of which only
/// those that hit may join a failing set.
#[test]
fn failing_sets_on_tree_queries_match_the_oracles() {
    let case = TreeCase {
        labels: 1..=4,
        nodes: 10..16,
        p: 0.3,
        size: 6..=8,
        chords: 0.04,
        max_len: 12,
        edge_labels_every: 5,
    };
    tree_queries_match_the_oracles(9100, 48, case);
}

/// Tree-like queries over 1-3 labels, whose plans fall apart into two parts
/// that share labels, counted as the parts' product less their overlaps
/// (the query with same-label vertices of the two parts merged;
/// [`csm_planner::Split`]). Fails unless some plans subtract overlaps.
#[test]
fn overlapping_split_plans_match_the_oracles() {
    let case = TreeCase {
        labels: 1..=3,
        nodes: 10..15,
        p: 0.3,
        size: 6..=8,
        chords: 0.02,
        max_len: 12,
        edge_labels_every: 2,
    };
    let overlapping = tree_queries_match_the_oracles(9500, 64, case).overlapping;
    assert!(overlapping > 20, "only {overlapping} delta plans subtract overlaps");
}

/// Star-like trees over 1-2 labels, whose plans fall apart into three or
/// more parts that share labels: counted as the parts' product less one
/// merged query per set of blocks of same-label vertices across parts
/// ([`csm_planner::Split`]). Fails unless some splits of three or more
/// parts subtract overlaps.
#[test]
fn overlapping_splits_of_three_parts_match_the_oracles() {
    let case = TreeCase {
        labels: 1..=2,
        nodes: 9..13,
        p: 0.35,
        size: 6..=8,
        chords: 0.0,
        max_len: 10,
        edge_labels_every: 3,
    };
    let three = tree_queries_match_the_oracles(9700, 48, case).three;
    assert!(
        three > 10,
        "only {three} splits of three or more parts subtract overlaps"
    );
}

/// Tree-like queries (6-9 vertices) over 4-6 labels, whose plans often
/// fall apart into label-disjoint parts ([`csm_planner::Split`]) counted
/// as a product. Fails unless some plans split.
#[test]
fn split_plans_match_the_oracles() {
    let case = TreeCase {
        labels: 4..=6,
        nodes: 12..18,
        p: 0.35,
        size: 6..=9,
        chords: 0.03,
        max_len: 14,
        edge_labels_every: 5,
    };
    let split = tree_queries_match_the_oracles(9300, 40, case).split;
    assert!(split > 20, "only {split} delta plans split");
}

/// Tree-like queries (random recursive trees of 6-9 vertices, few chords)
/// over 2-4 labels on graphs of 20-27 vertices, whose counting runs cache
/// the completions of nodes by the few bindings they depend on (the
/// suffix memo, [`csm_planner::Plan::suffix_memo`]): the completions from
/// a vertex onwards are reused by every partial match that reaches it.
/// Fails unless some plans cache at depths whose key leaves out two or
/// more bound positions (where reuse happens).
#[test]
fn suffix_memo_on_tree_like_queries_matches_the_oracles() {
    let case = TreeCase {
        labels: 2..=4,
        nodes: 20..28,
        p: 0.25,
        size: 6..=9,
        chords: 0.03,
        max_len: 12,
        edge_labels_every: 4,
    };
    let memo = tree_queries_match_the_oracles(9900, 40, case).memo;
    assert!(memo > 100, "only {memo} memoised depths leave out two or more bindings");
}

/// Random graphs and tree-like queries drawn from these ranges.
struct TreeCase {
    labels: std::ops::RangeInclusive<u32>,
    nodes: std::ops::Range<u32>,
    /// Edge probability of the data graph.
    p: f64,
    size: std::ops::RangeInclusive<usize>,
    /// Chord probability of the query (beyond its spanning tree).
    chords: f64,
    /// Longest batch.
    max_len: usize,
    /// Every this many seeds, the graph and query carry 2 edge labels.
    edge_labels_every: u64,
}

/// What the cost-order delta plans of [`tree_queries_match_the_oracles`]'s
/// cases hold, for tests that fail unless their shortcut is exercised.
struct PlanShapes {
    /// Delta plans that split.
    split: usize,
    /// Of those, the ones that subtract overlaps.
    overlapping: usize,
    /// Splits of three or more parts (at any depth, merged queries' plans
    /// included) that subtract overlaps.
    three: usize,
    /// Depths of those plans (nested plans included) that the suffix memo
    /// keys by bindings leaving out two or more bound positions.
    memo: usize,
}

/// `seeds` cases from `seed0` on: static counts against VF2 or brute force
/// and three mixed batches against the brute-force set differences, with
/// the fixed, cost and sampled orders, 1-2 threads, symmetry rules off on
/// every other seed, edge labels as `case` says; returns what their plans
/// hold ([`PlanShapes`]).
fn tree_queries_match_the_oracles(seed0: u64, seeds: u64, case: TreeCase) -> PlanShapes {
    let (mut split, mut overlapping, mut three, mut memo) = (0, 0, 0, 0);
    for seed in 0..seeds {
        let mut r = rng(seed0 + seed);
        let vl = r.random_range(case.labels.clone());
        let el = (seed % case.edge_labels_every == 0).then_some(2);
        let n = r.random_range(case.nodes.clone());
        let mut model = random_graph(&mut r, n, case.p, vl, el);
        let k = r.random_range(case.size.clone());
        let q = random_query(&mut r, k, case.chords, vl, el);
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let stats = csm_planner::GraphStats::of(&g);
        for p in csm_planner::delta_plans(&q, &CostOrder, &stats) {
            if let Some(s) = &p.plan.split {
                split += 1;
                overlapping += usize::from(!s.overlaps.is_empty());
            }
            three += (p.plan.splits().iter())
                .filter(|s| s.parts.len() >= 3 && !s.overlaps.is_empty())
                .count();
            memo += (p.plan.plans().into_iter())
                .flat_map(|plan| {
                    (0..plan.depth())
                        .filter(move |&d| plan.suffix_memo >> d & 1 == 1)
                        .map(move |d| d - plan.suffix_deps[d].count_ones() as usize)
                })
                .filter(|&left_out| left_out >= 2)
                .count();
        }
        let order = (seed % 3) as u8;
        let threads = 1 + (seed / 3 % 2) as usize;
        let fresh = || {
            let e = engine_with(threads, order);
            if seed % 2 == 0 {
                e
            } else {
                e.without_symmetry()
            }
        };
        let want = vf2_or_brute_force(&g, &q);
        assert_eq!(fresh().count(&g, &q).unwrap(), want, "seed {seed} static");
        let mut eng = fresh();
        eng.init(&model.to_data(), &q).expect("init");
        let spec = StreamSpec {
            batches: 3,
            max_len: case.max_len,
            vlabels: vl,
            elabels: el,
            vertex_ops: seed % 4 == 1,
        };
        if let Err(e) = check_set_differences(&mut eng, &mut r, &mut model, &q, spec) {
            panic!("seed {seed}: {e}");
        }
    }
    PlanShapes {
        split,
        overlapping,
        three,
        memo,
    }
}

/// A spider: a random core of 2-3 vertices and a leg group of 4-6 leaves of
/// one label on one core vertex (twins, which a counting run multiplies as
/// |S|·(|S| − 1)···: [`csm_planner::Plan::wide_tail`]), on half the seeds a
/// second group of 4 on another core vertex.
fn spider(r: &mut rand_chacha::ChaCha8Rng, vl: u32, el: Option<u32>) -> csm_planner::QueryGraph {
    let k = r.random_range(2..=3usize);
    let core = random_query(r, k, 0.5, vl, el);
    let mut labels = core.labels().to_vec();
    let mut edges = core.edges().to_vec();
    let groups = if r.random_bool(0.5) {
        vec![r.random_range(4..=6usize)]
    } else {
        vec![4, 4]
    };
    for (g, &t) in groups.iter().enumerate() {
        let at = (r.random_range(0..core.num_vertices()) + g) % core.num_vertices();
        let label = r.random_range(0..vl);
        let elabel = el.map_or(0, |k| r.random_range(0..k));
        for _ in 0..t {
            edges.push((at, labels.len(), elabel));
            labels.push(label);
        }
    }
    csm_planner::QueryGraph::new(labels, &edges, el.is_some()).expect("a connected query")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, .. ProptestConfig::default() })]

    /// Spiders statically (against VF2 or brute force) and per batch
    /// (against the set differences), every order, 1-2 threads.
    #[test]
    fn spiders_count_their_legs_as_products(seed in any::<u64>()) {
        let mut r = rng(seed);
        let el = seed.is_multiple_of(3).then_some(2);
        let vl = r.random_range(1..=2u32);
        let n = r.random_range(7..=10u32);
        let mut model = random_graph(&mut r, n, 0.55, vl, el);
        let q = spider(&mut r, vl, el);
        let order = (seed % 3) as u8;
        let threads = 1 + (seed / 3 % 2) as usize;
        let csr = CsrGraph::from_data(&model.to_data()).unwrap();
        let eng = engine_with(threads, order);
        prop_assert_eq!(StaticMatcher::count(&eng, &csr, &q).unwrap(), vf2_or_brute_force(&csr, &q), "seed {}", seed);
        let mut eng = engine_with(threads, order);
        eng.init(&model.to_data(), &q).expect("init");
        let spec = StreamSpec { batches: 2, max_len: 8, vlabels: vl, elabels: el, vertex_ops: false };
        check_set_differences(&mut eng, &mut r, &mut model, &q, spec)
            .map_err(|e| TestCaseError::fail(format!("seed {seed}: {e}")))?;
    }
}
