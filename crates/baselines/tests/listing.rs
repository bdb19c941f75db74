//! `csm_baselines::listing`: the embeddings listed per batch are exactly
//! the brute-force set differences M(G')\M(G) (positive) and M(G)\M(G')
//! (negative), each once, under the right batch number, for mixed batches
//! with vertex updates and relabellings, edge labels, and invalid updates
//! skipped in lenient mode, also when a batch is listed on a pool of
//! threads; a static listing is exactly M(G).

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::*;
use csm_baselines::listing::{list_static, list_static_par, Listed, ListingEngine, SinkFactory};
use csm_baselines::oracle::embeddings;
use csm_engine::{Batch, ContinuousMatcher};
use csm_graph::{Edge, Strictness, Update, VertexId};
use csm_planner::{CostOrder, GcsmOrder, OrderStrategy, Sign};
use proptest::prelude::*;
use rand::Rng;

/// What a sink received: (batch, sign, embedding).
type Received = Arc<Mutex<Vec<(usize, Sign, Vec<VertexId>)>>>;

fn engine(order: Arc<dyn OrderStrategy>) -> (ListingEngine, Received) {
    let got: Received = Arc::default();
    let into = Arc::clone(&got);
    let sink = Box::new(move |l: Listed<'_>| into.lock().unwrap().push((l.batch, l.sign, l.embedding.to_vec())));
    (ListingEngine::new(order, sink), got)
}

/// A sink that keeps its embeddings and hands them over only when dropped
/// (as `csm stream`'s line buffers write when dropped).
struct Buffered {
    kept: Vec<(usize, Sign, Vec<VertexId>)>,
    into: Received,
}

impl Drop for Buffered {
    fn drop(&mut self) {
        self.into.lock().unwrap().append(&mut self.kept);
    }
}

/// [`ListingEngine::parallel`] with every batch that has a seed sent to the
/// pool, its sinks [`Buffered`]: what a batch lists reaches `got` only if
/// every sink of the batch is dropped before `process` returns.
fn parallel_engine(order: Arc<dyn OrderStrategy>) -> (ListingEngine, Received) {
    let got: Received = Arc::default();
    let into = Arc::clone(&got);
    let make: SinkFactory = Arc::new(move || {
        let mut buf = Buffered {
            kept: Vec::new(),
            into: Arc::clone(&into),
        };
        Box::new(move |l: Listed<'_>| buf.kept.push((l.batch, l.sign, l.embedding.to_vec())))
    });
    (ListingEngine::parallel(order, make).parallel_min_seeds(1), got)
}

/// The embeddings of `sign` received, as a set; `Err` when one came twice
/// or under another batch than `b`.
fn listed(got: &[(usize, Sign, Vec<VertexId>)], b: usize, sign: Sign) -> Result<BTreeSet<Vec<VertexId>>, String> {
    let mut set = BTreeSet::new();
    for (batch, s, emb) in got.iter().filter(|e| e.1 == sign) {
        if *batch != b {
            return Err(format!("{s:?} {emb:?} listed under batch {batch}, not {b}"));
        }
        if !set.insert(emb.clone()) {
            return Err(format!("{s:?} {emb:?} listed twice"));
        }
    }
    Ok(set)
}

fn check(seed: u64) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let el = seed.is_multiple_of(3).then_some(2);
    let (vl, mut model) = random_stream_graph(&mut r, el);
    let k = r.random_range(2..=5usize);
    let q = random_query(&mut r, k, 0.3, vl, el);
    let order: Arc<dyn OrderStrategy> = if seed.is_multiple_of(2) {
        Arc::new(CostOrder)
    } else {
        Arc::new(GcsmOrder)
    };
    let (mut eng, got) = engine(order.clone());
    eng.init(&model.to_data(), &q).expect("init");
    let (mut par_eng, par_got) = parallel_engine(order.clone());
    par_eng.init(&model.to_data(), &q).expect("init");
    // the initial graph, listed statically
    let csr = csm_graph::CsrGraph::from_data(&model.to_data()).expect("valid graph");
    let mut all = Vec::new();
    let n = list_static(&csr, &q, order.as_ref(), None, &mut |l: Listed<'_>| {
        all.push(l.embedding.to_vec())
    });
    let want = embeddings(&model.to_data(), &q);
    prop_assert_eq!(n as usize, all.len());
    let all_set: BTreeSet<Vec<VertexId>> = all.iter().cloned().collect();
    prop_assert_eq!(all_set.len(), all.len(), "listed twice");
    prop_assert_eq!(&all_set, &want, "static listing; query {:?}", q);
    // on a pool: the same embeddings, each once
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let par = std::sync::Mutex::new(Vec::new());
    let n = pool.install(|| {
        list_static_par(&csr, &q, order.as_ref(), || {
            let par = &par;
            move |l: Listed<'_>| par.lock().unwrap().push(l.embedding.to_vec())
        })
    });
    let mut par = par.into_inner().unwrap();
    par.sort();
    prop_assert_eq!(n as usize, par.len());
    prop_assert_eq!(par, all_set.iter().cloned().collect::<Vec<_>>(), "listed on a pool");
    // capped: exactly min(count, limit) distinct embeddings of M(G)
    let limit = r.random_range(1..=want.len() as u64 + 2);
    let mut some = BTreeSet::new();
    let mut twice = false;
    let n = list_static(&csr, &q, order.as_ref(), Some(limit), &mut |l: Listed<'_>| {
        twice |= !some.insert(l.embedding.to_vec());
    });
    prop_assert!(!twice, "listed twice");
    prop_assert_eq!(n, limit.min(want.len() as u64));
    prop_assert_eq!(some.len() as u64, n);
    prop_assert!(some.is_subset(&want));
    for b in 0..4 {
        let before = embeddings(&model.to_data(), &q);
        let len = r.random_range(1..12);
        let mut batch = random_batch(&mut r, &mut model, len, vl, el, true);
        // lenient: a duplicate of an edge present after the batch, skipped
        let strictness = with_lenient_duplicate(&model, &mut batch, seed % 4 < 2);
        let lenient = strictness == Strictness::Lenient;
        let after = embeddings(&model.to_data(), &q);
        let this = Batch {
            updates: &batch,
            source: "t",
            strictness,
        };
        got.lock().unwrap().clear();
        let res = eng
            .process(this)
            .map_err(|e| TestCaseError::fail(format!("seed {seed} batch {b}: {e}")))?;
        // the same batch listed on the pool
        par_got.lock().unwrap().clear();
        let par_res = pool
            .install(|| par_eng.process(this))
            .map_err(|e| TestCaseError::fail(format!("seed {seed} batch {b} on the pool: {e}")))?;
        let par_got = par_got.lock().unwrap();
        let par_pos = listed(&par_got, b, Sign::Positive).map_err(TestCaseError::fail)?;
        let par_neg = listed(&par_got, b, Sign::Negative).map_err(TestCaseError::fail)?;
        let got = got.lock().unwrap();
        let pos = listed(&got, b, Sign::Positive).map_err(TestCaseError::fail)?;
        let neg = listed(&got, b, Sign::Negative).map_err(TestCaseError::fail)?;
        let want_pos: BTreeSet<Vec<VertexId>> = after.difference(&before).cloned().collect();
        let want_neg: BTreeSet<Vec<VertexId>> = before.difference(&after).cloned().collect();
        prop_assert_eq!(&pos, &want_pos, "seed {} batch {}: {:?} query {:?}", seed, b, batch, q);
        prop_assert_eq!(&neg, &want_neg, "seed {} batch {}: {:?} query {:?}", seed, b, batch, q);
        prop_assert_eq!((res.positive, res.negative), (pos.len() as u64, neg.len() as u64));
        prop_assert_eq!(res.skipped, usize::from(lenient));
        prop_assert_eq!(
            &par_pos,
            &want_pos,
            "on the pool: seed {} batch {}: {:?} query {:?}",
            seed,
            b,
            batch,
            q
        );
        prop_assert_eq!(
            &par_neg,
            &want_neg,
            "on the pool: seed {} batch {}: {:?} query {:?}",
            seed,
            b,
            batch,
            q
        );
        prop_assert_eq!(
            (par_res.positive, par_res.negative),
            (pos.len() as u64, neg.len() as u64)
        );
        prop_assert_eq!(par_res.skipped, usize::from(lenient));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn listed_embeddings_are_the_set_differences(seed in any::<u64>()) {
        check(seed)?;
    }
}

/// One update at a time each update is its own batch; an invalid update
/// fails with its line and leaves the graph, so that the next batch lists
/// against the graph before it.
#[test]
fn batches_are_numbered_per_process_call_and_errors_change_nothing() {
    let g = csm_graph::GraphData {
        labels: vec![0, 0, 0, 0],
        edges: vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)],
        edge_labelled: false,
    };
    let q = csm_planner::QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
    let (mut eng, got) = engine(Arc::new(CostOrder));
    eng.init(&g, &q).unwrap();
    let ups = located([
        Update::AddEdge(Edge::new(0, 2, 0)),    // a triangle: 6 embeddings
        Update::AddEdge(Edge::new(0, 3, 0)),    // none
        Update::RemoveEdge(Edge::new(1, 2, 0)), // the triangle goes
    ]);
    let mut out = Vec::new();
    eng.process_each(
        Batch {
            updates: &ups,
            source: "t",
            strictness: Strictness::Strict,
        },
        &mut out,
    )
    .unwrap();
    let counts: Vec<(u64, u64)> = out.iter().map(|r| (r.positive, r.negative)).collect();
    assert_eq!(counts, [(6, 0), (0, 0), (0, 6)]);
    let got_now = got.lock().unwrap().clone();
    assert_eq!(got_now.len(), 12);
    assert!(got_now
        .iter()
        .all(|(b, s, _)| (*b, *s) == (0, Sign::Positive) || (*b, *s) == (2, Sign::Negative)));
    // a duplicate: rejected, nothing listed, the graph unchanged
    got.lock().unwrap().clear();
    let bad = located([Update::AddEdge(Edge::new(1, 3, 0)), Update::AddEdge(Edge::new(3, 0, 0))]);
    let err = eng
        .process(Batch {
            updates: &bad,
            source: "t",
            strictness: Strictness::Strict,
        })
        .unwrap_err();
    assert!(err.to_string().contains("t:2"), "{err}");
    let ok = located([Update::AddEdge(Edge::new(1, 3, 0))]);
    let r = eng
        .process(Batch {
            updates: &ok,
            source: "t",
            strictness: Strictness::Strict,
        })
        .unwrap();
    // 0-1-3 closes a triangle (0-3 and 0-1 present)
    assert_eq!((r.positive, r.negative), (6, 0));
    // (a failed call is no batch)
    assert!(got.lock().unwrap().iter().all(|(b, _, _)| *b == 3));
}

/// Plans made on a graph of the query's one label skip label checks; a
/// vertex of another label added later must not be listed.
#[test]
fn a_vertex_of_a_new_label_is_not_listed() {
    let g = csm_graph::GraphData {
        labels: vec![0, 0, 0],
        edges: vec![Edge::new(1, 2, 0)],
        edge_labelled: false,
    };
    let q = csm_planner::QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
    let (mut eng, got) = engine(Arc::new(CostOrder));
    eng.init(&g, &q).unwrap();
    // the new vertex joins 0 and 1; then 0-1 closes a triangle through it,
    // found by intersecting 0's and 1's lists (no seed checks its label)
    let batches = [
        located([
            Update::AddVertex { id: 3, label: 1 },
            Update::AddEdge(Edge::new(0, 3, 0)),
            Update::AddEdge(Edge::new(1, 3, 0)),
        ]),
        located([Update::AddEdge(Edge::new(0, 1, 0))]),
    ];
    for ups in &batches {
        let r = eng
            .process(Batch {
                updates: ups,
                source: "t",
                strictness: Strictness::Strict,
            })
            .unwrap();
        assert_eq!((r.positive, r.negative), (0, 0), "{:?}", got.lock().unwrap());
    }
}
