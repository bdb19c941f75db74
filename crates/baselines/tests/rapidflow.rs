//! RapidFlow against the independent oracles: per-batch positive / negative
//! equal the brute-force set differences |M(G')\M(G)| and |M(G)\M(G')| on
//! mixed batches (inserts, deletes, cancelling pairs, relabels, vertex
//! updates), with and without edge labels, for random connected queries and
//! symmetric ones (cycles, cliques, stars), with dual matching on and off;
//! static counts equal brute force.

mod common;

use common::*;
use csm_baselines::oracle::BruteForce;
use csm_baselines::rapidflow::RapidFlow;
use csm_engine::{Batch, BatchResult, ContinuousMatcher, EngineError, StaticMatcher};
use csm_graph::{CsrGraph, Edge, GraphData, LocatedUpdate, Strictness, Update};
use csm_planner::QueryGraph;
use proptest::prelude::*;
use rand::Rng;

fn check_stream(
    seed: u64,
    edge_labels: bool,
    vertex_ops: bool,
    symmetric: bool,
    dual: bool,
) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let el = edge_labels.then_some(2);
    let (vl, mut model) = random_stream_graph(&mut r, el);
    // sometimes the query ignores the graph's edge labels (relabels are then no change)
    let qel = if seed % 4 == 1 { None } else { el };
    let q = if symmetric {
        symmetric_query(&mut r, vl, qel, 4)
    } else {
        let k = r.random_range(2..=5usize);
        random_query(&mut r, k, 0.3, vl, qel)
    };
    let mut eng = RapidFlow::new(2).expect("pool").with_dual(dual);
    eng.init(&model.to_data(), &q).expect("init");
    let spec = StreamSpec {
        batches: 4,
        max_len: 14,
        vlabels: vl,
        elabels: el,
        vertex_ops,
    };
    check_set_differences(&mut eng, &mut r, &mut model, &q, spec)
        .map_err(|e| TestCaseError::fail(format!("seed {seed} dual {dual}: {e}")))?;
    // the engine's graph equals the model: a static count on it agrees
    let g = CsrGraph::from_data(&model.to_data()).expect("valid");
    prop_assert_eq!(
        StaticMatcher::count(&eng, &g, &q).unwrap(),
        BruteForce.count(&g, &q).unwrap()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]

    #[test]
    fn mixed_batches_match_set_differences(seed in any::<u64>()) {
        check_stream(seed, false, false, false, true)?;
    }

    #[test]
    fn edge_labels_and_vertex_updates_match(seed in any::<u64>()) {
        check_stream(seed, true, true, false, true)?;
    }

    #[test]
    fn symmetric_queries_match(seed in any::<u64>()) {
        check_stream(seed, seed % 2 == 0, seed % 3 == 0, true, true)?;
    }

    #[test]
    fn without_dual_matching_match(seed in any::<u64>()) {
        check_stream(seed, seed % 2 == 0, true, seed % 3 != 0, false)?;
    }

    #[test]
    fn static_counts_equal_brute_force(seed in any::<u64>()) {
        let mut r = rng(seed);
        let vl = r.random_range(1..=3u32);
        let el = (seed % 2 == 0).then_some(2);
        let (n, p) = (r.random_range(4..12u32), r.random_range(0.2..0.7));
        let model = random_graph(&mut r, n, p, vl, el);
        let q = if seed % 3 == 0 { symmetric_query(&mut r, vl, el, 4) } else {
            let k = r.random_range(2..=6usize);
            random_query(&mut r, k, 0.3, vl, el)
        };
        let g = CsrGraph::from_data(&model.to_data()).expect("valid");
        let eng = RapidFlow::new(2).unwrap();
        prop_assert_eq!(StaticMatcher::count(&eng, &g, &q).unwrap(), BruteForce.count(&g, &q).unwrap(), "{:?}", q);
    }

    /// Dual matching searches fewer (edge, orbit) tasks and finds the same.
    #[test]
    fn dual_matching_searches_less(seed in any::<u64>()) {
        let mut r = rng(seed);
        let mut model = random_graph(&mut r, 9, 0.4, 1, None);
        let q = symmetric_query(&mut r, 1, None, 4);
        let mut with = RapidFlow::new(1).unwrap();
        let mut without = RapidFlow::new(1).unwrap().with_dual(false);
        with.init(&model.to_data(), &q).unwrap();
        without.init(&model.to_data(), &q).unwrap();
        prop_assert!(with.orbits() < without.orbits());
        let batch = random_batch(&mut r, &mut model, 12, 1, None, false);
        let b = Batch { updates: &batch, source: "t", strictness: Strictness::Strict };
        let (x, y) = (with.process(b).unwrap(), without.process(b).unwrap());
        prop_assert_eq!((x.positive, x.negative), (y.positive, y.negative));
        prop_assert!(x.extra["tasks"].as_u64() <= y.extra["tasks"].as_u64());
    }
}

fn add(u: u32, v: u32) -> LocatedUpdate {
    LocatedUpdate {
        line: 1,
        update: Update::AddEdge(Edge::new(u, v, 0)),
    }
}
fn del(u: u32, v: u32) -> LocatedUpdate {
    LocatedUpdate {
        line: 1,
        update: Update::RemoveEdge(Edge::new(u, v, 0)),
    }
}

#[test]
fn a_match_using_an_inserted_and_a_deleted_edge_is_in_neither_graph() {
    // path 0-1-2-3; the batch deletes 1-2 and inserts 0-2: the triangle 0-1-2
    // would need both, so no triangle appears or vanishes
    let g = GraphData {
        labels: vec![0; 4],
        edges: vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0), Edge::new(2, 3, 0)],
        edge_labelled: false,
    };
    let tri = QueryGraph::new(vec![0; 3], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
    let mut eng = RapidFlow::new(1).unwrap();
    eng.init(&g, &tri).unwrap();
    let r = process(&mut eng, &[del(1, 2), add(0, 2)], Strictness::Strict).unwrap();
    assert_eq!((r.positive, r.negative), (0, 0));
    // now insert 1-2 back: one triangle, 6 embeddings
    let r = process(&mut eng, &[add(1, 2)], Strictness::Strict).unwrap();
    assert_eq!((r.positive, r.negative), (6, 0));
    // a batch inserting two edges of one triangle counts it once
    let r = process(&mut eng, &[del(0, 2), del(1, 2)], Strictness::Strict).unwrap();
    assert_eq!((r.positive, r.negative), (0, 6));
    let r = process(&mut eng, &[add(0, 2), add(1, 2), add(1, 3)], Strictness::Strict).unwrap();
    assert_eq!((r.positive, r.negative), (12, 0));
}

#[test]
fn errors_leave_the_engine_unchanged() {
    let g = GraphData {
        labels: vec![0; 3],
        edges: vec![Edge::new(0, 1, 0)],
        edge_labelled: false,
    };
    let q = QueryGraph::new(vec![0; 2], &[(0, 1, 0)], false).unwrap();
    let mut eng = RapidFlow::new(1).unwrap();
    assert!(process(&mut eng, &[], Strictness::Strict).is_err());
    eng.init(&g, &q).unwrap();
    assert!(process(&mut eng, &[add(1, 2), add(0, 1)], Strictness::Strict).is_err());
    let r = process(&mut eng, &[add(1, 2)], Strictness::Strict).unwrap();
    assert_eq!((r.positive, r.negative), (2, 0));
    let r = process(&mut eng, &[add(0, 1), add(0, 2)], Strictness::Lenient).unwrap();
    assert_eq!((r.positive, r.negative, r.skipped), (2, 0, 1));
}

/// Timing: CSM on email-Enron (8 uniform vertex labels, seed 1; 10% mixed
/// stream, seed 1; batches of 1024), dual matching on and off. Run with
/// `cargo test --release -p csm-baselines --test rapidflow -- --ignored --nocapture`
/// (`CSM_ENRON` overrides the path of email-Enron.txt).
#[test]
#[ignore]
fn timing_enron_dual_matching() {
    use csm_graph::format::{read_graph_file, ReadOptions};
    use csm_graph::gen::{make_stream, random_walk_query, standard_query, with_labels, Labeller, StreamAmount};
    let path = std::env::var("CSM_ENRON")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/email-Enron.txt").to_string());
    let opts = ReadOptions {
        lenient: false,
        labeller: Labeller::Uniform { num_labels: 8, seed: 1 },
        ..ReadOptions::default()
    };
    let Ok((data, _)) = read_graph_file(&path, None, &opts) else {
        println!("{path} not found; skipped");
        return;
    };
    let (g0, stream) = make_stream(&data, StreamAmount::Fraction(0.1), 0.5, 1);
    let mut queries: Vec<(String, QueryGraph)> = Vec::new();
    for k in 4..=6 {
        let qd = random_walk_query(&data, k, 3, true).expect("query");
        queries.push((format!("walk{k}"), QueryGraph::from_data(&qd).unwrap()));
    }
    for (name, labels) in [
        ("diamond", vec![0, 0, 0, 0]),
        ("4-cycle", vec![0, 0, 0, 0]),
        ("triangle", vec![0, 0, 0]),
    ] {
        let qd = with_labels(&standard_query(name).unwrap(), &labels);
        queries.push((format!("{name}:{labels:?}"), QueryGraph::from_data(&qd).unwrap()));
    }
    println!(
        "email-Enron: {} edges in G0, {} updates, batches of 1024",
        g0.edges.len(),
        stream.len()
    );
    println!("query | |Aut| | dual | positive | negative | match s | update s | tasks | pruned | orbits");
    for (name, q) in &queries {
        for dual in [true, false] {
            let mut eng = RapidFlow::new(0).unwrap().with_dual(dual);
            eng.init(&g0, q).unwrap();
            let (mut pos, mut neg, mut secs, mut upd, mut tasks, mut pruned) = (0, 0, 0.0, 0.0, 0, 0);
            for chunk in stream.chunks(1024) {
                let r = eng
                    .process(Batch {
                        updates: chunk,
                        source: "stream",
                        strictness: Strictness::Strict,
                    })
                    .unwrap();
                pos += r.positive;
                neg += r.negative;
                secs += r.seconds;
                upd += r.update_seconds;
                tasks += r.extra["tasks"].as_u64().unwrap();
                pruned += r.extra["pruned_tasks"].as_u64().unwrap();
            }
            println!(
                "{name} | {} | {dual} | {pos} | {neg} | {secs:.3} | {upd:.3} | {tasks} | {pruned} | {}",
                q.automorphism_count(),
                eng.orbits()
            );
        }
    }
}

/// One batch named "t".
fn process(eng: &mut RapidFlow, updates: &[LocatedUpdate], strictness: Strictness) -> Result<BatchResult, EngineError> {
    eng.process(Batch {
        updates,
        source: "t",
        strictness,
    })
}
