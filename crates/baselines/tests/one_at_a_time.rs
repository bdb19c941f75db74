//! `process_each` (one result per update; the cpu engine overlaps runs of
//! single-edge updates on per-update snapshots) against the brute-force set
//! differences of the test's own model, applied one update at a time.

mod common;

use std::sync::Arc;

use common::{random_batch, random_query, random_stream_graph, rng, symmetric_query, Model};
use csm_baselines::oracle::embeddings;
use csm_baselines::{CpuEngine, HubRule};
use csm_engine::{Batch, BatchResult, ContinuousMatcher};
use csm_graph::{Edge, LocatedUpdate, Strictness, Update};
use csm_planner::{GcsmOrder, QueryGraph};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// |M(G')\M(G)| and |M(G)\M(G')| of each valid update of `stream` applied in
/// turn to `model` (an invalid one changes nothing: (0, 0)).
fn expected(model: &mut Model, q: &QueryGraph, stream: &[LocatedUpdate], valid: &[bool]) -> Vec<(u64, u64)> {
    stream
        .iter()
        .zip(valid)
        .map(|(u, &ok)| {
            if !ok {
                return (0, 0);
            }
            let before = embeddings(&model.to_data(), q);
            model.apply(&u.update);
            let after = embeddings(&model.to_data(), q);
            (
                after.difference(&before).count() as u64,
                before.difference(&after).count() as u64,
            )
        })
        .collect()
}

fn engine(threads: usize, model: &Model, q: &QueryGraph) -> CpuEngine {
    engine_with_hubs(threads, model, q, HubRule::default())
}

/// With `rule`, lists of low degree count as hubs and are read by label
/// through `CommonView` (one thread) and per-update `VersionView`s (runs).
fn engine_with_hubs(threads: usize, model: &Model, q: &QueryGraph, rule: HubRule) -> CpuEngine {
    let mut eng = CpuEngine::new(threads, Arc::new(GcsmOrder)).unwrap().hub_rule(rule);
    eng.init(&model.to_data(), q).unwrap();
    eng
}

fn batch(updates: &[LocatedUpdate], strictness: Strictness) -> Batch<'_> {
    Batch {
        updates,
        source: "stream.txt",
        strictness,
    }
}

/// A stream of valid updates in random batches' order (cancelling pairs and
/// relabels repeat an edge, vertex updates end runs), renumbered by line.
fn random_stream(r: &mut ChaCha8Rng, model: &Model, vl: u32, el: Option<u32>, len: usize) -> Vec<LocatedUpdate> {
    let mut m = model.clone();
    let mut out = Vec::new();
    while out.len() < len {
        let n = r.random_range(1..8);
        let vertex_ops = r.random_bool(0.5);
        out.extend(random_batch(r, &mut m, n, vl, el, vertex_ops));
    }
    for (i, u) in out.iter_mut().enumerate() {
        u.line = i + 1;
    }
    out
}

fn pairs(rs: &[BatchResult]) -> Vec<(u64, u64)> {
    rs.iter().map(|r| (r.positive, r.negative)).collect()
}

#[test]
fn overlapped_results_equal_set_differences_per_update() {
    for seed in 0..60u64 {
        let mut r = rng(seed);
        let el = (seed % 3 == 0).then_some(2);
        let (vl, model) = random_stream_graph(&mut r, el);
        let q = if seed % 2 == 0 {
            symmetric_query(&mut r, vl, el, 7)
        } else {
            let k = r.random_range(2..=5);
            random_query(&mut r, k, 0.4, vl, el)
        };
        let stream = random_stream(&mut r, &model, vl, el, 40);
        let want = expected(&mut model.clone(), &q, &stream, &vec![true; stream.len()]);
        let rule = HubRule {
            min_degree: 1 + (seed % 3) as usize,
            batch_min_degree: 1 + (seed % 3) as usize,
            min_query: 2,
        };
        for threads in [1, 2, 3] {
            let mut eng = engine_with_hubs(threads, &model, &q, rule);
            let mut got = Vec::new();
            eng.process_each(batch(&stream, Strictness::Strict), &mut got).unwrap();
            assert_eq!(
                pairs(&got),
                want,
                "seed {seed}, {threads} threads, query {q:?}, stream {stream:?}"
            );
            assert!(got.iter().all(|r| r.skipped == 0 && r.seconds >= 0.0));
        }
    }
}

/// An invalid update at a random place: a duplicate insert, the delete of a
/// missing edge, a self-loop or an unknown vertex.
fn invalid_update(r: &mut ChaCha8Rng, m: &Model, line: usize) -> LocatedUpdate {
    let (&(a, b), _) = m.edges.iter().nth(r.random_range(0..m.edges.len())).unwrap();
    let unknown = m.labels.keys().max().unwrap() + 5;
    let update = match r.random_range(0..4) {
        0 => Update::AddEdge(Edge::new(a, b, 0)),
        1 => {
            // a missing edge between existing vertices, else an unknown vertex
            let vs: Vec<_> = m.labels.keys().copied().collect();
            let missing = vs
                .iter()
                .flat_map(|&x| vs.iter().map(move |&y| (x, y)))
                .find(|&(x, y)| x < y && !m.edges.contains_key(&(x, y)));
            let (x, y) = missing.unwrap_or((a, unknown));
            Update::RemoveEdge(Edge::new(x, y, 0))
        }
        2 => Update::AddEdge(Edge::new(a, a, 0)),
        _ => Update::AddEdge(Edge::new(a, unknown, 0)),
    };
    LocatedUpdate { line, update }
}

#[test]
fn invalid_updates_are_skipped_in_lenient_mode_and_stop_strict_mode() {
    for seed in 0..30u64 {
        let mut r = rng(1000 + seed);
        let (vl, model) = random_stream_graph(&mut r, None);
        if model.edges.is_empty() {
            continue;
        }
        let q = symmetric_query(&mut r, vl, None, 4);
        let mut stream = random_stream(&mut r, &model, vl, None, 30);
        let at = r.random_range(0..stream.len());
        // the model before `at` decides which edges exist there
        let mut m = model.clone();
        for u in &stream[..at] {
            m.apply(&u.update);
        }
        let bad = invalid_update(&mut r, &m, at + 1);
        stream.insert(at, bad);
        for (i, u) in stream.iter_mut().enumerate() {
            u.line = i + 1;
        }
        let valid: Vec<bool> = (0..stream.len()).map(|i| i != at).collect();
        let want = expected(&mut model.clone(), &q, &stream, &valid);

        let mut eng = engine(2, &model, &q);
        let mut got = Vec::new();
        eng.process_each(batch(&stream, Strictness::Lenient), &mut got).unwrap();
        assert_eq!(pairs(&got), want, "lenient, seed {seed}");
        assert_eq!(got[at].skipped, 1, "lenient, seed {seed}");

        let mut eng = engine(2, &model, &q);
        let mut got = Vec::new();
        let err = eng
            .process_each(batch(&stream, Strictness::Strict), &mut got)
            .expect_err("strict mode rejects the invalid update");
        assert_eq!(pairs(&got), want[..at], "strict, seed {seed}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("stream.txt:{}: ", at + 1)),
            "seed {seed}: {msg}"
        );
        // the updates before the invalid one are applied, the rest not
        let mut rest = Vec::new();
        eng.process_each(batch(&stream[at + 1..], Strictness::Strict), &mut rest)
            .unwrap();
        assert_eq!(pairs(&rest), want[at + 1..], "strict, resumed, seed {seed}");
    }
}

/// `process_each_until` with deadlines a few microseconds away, called
/// again on the rest until the stream is done: every call reports a prefix
/// of its updates and applies exactly those, wherever the deadline cuts
/// (mid-run, mid-span, before the first update), so the results put
/// together are the oracle's, with edges kept apart or not.
#[test]
fn deadlines_cut_streams_at_update_boundaries() {
    for seed in 0..30u64 {
        let mut r = rng(3000 + seed);
        let el = (seed % 3 == 0).then_some(2);
        let (vl, model) = random_stream_graph(&mut r, el);
        let q = if seed % 2 == 0 {
            symmetric_query(&mut r, vl, el, 5)
        } else {
            let k = r.random_range(2..=4);
            random_query(&mut r, k, 0.4, vl, el)
        };
        let stream = random_stream(&mut r, &model, vl, el, 60);
        let want = expected(&mut model.clone(), &q, &stream, &vec![true; stream.len()]);
        for threads in [1, 2, 3] {
            for whole in [false, true] {
                let mut eng = CpuEngine::new(threads, Arc::new(GcsmOrder)).unwrap();
                if whole {
                    eng = eng.without_edge_filter();
                }
                eng.init(&model.to_data(), &q).unwrap();
                let mut got = Vec::new();
                // a deadline already past starts nothing
                let past = std::time::Instant::now();
                eng.process_each_until(batch(&stream, Strictness::Strict), Some(past), &mut got)
                    .unwrap();
                assert!(got.is_empty(), "seed {seed}: {} updates after the deadline", got.len());
                let mut wait = std::time::Duration::from_micros(1 + seed % 40);
                while got.len() < stream.len() {
                    let before = got.len();
                    let deadline = std::time::Instant::now() + wait;
                    eng.process_each_until(batch(&stream[before..], Strictness::Strict), Some(deadline), &mut got)
                        .unwrap();
                    if got.len() == before {
                        // descheduled before the first check: give it longer
                        wait *= 2;
                    }
                }
                assert_eq!(
                    pairs(&got),
                    want,
                    "seed {seed}, {threads} threads, whole graph {whole}, query {q:?}"
                );
            }
        }
    }
}
