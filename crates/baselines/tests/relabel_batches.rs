//! Batches that remove vertices and add them again, under their old label
//! or another one, several times in one batch: every registered engine's
//! positive and negative against the brute-force set differences
//! |M(G')\M(G)| and |M(G)\M(G')| (G' from the test's own model, applied
//! update by update), with and without edges kept apart. Invalid updates
//! in such batches fail the batch with their line and leave the engine's
//! graph as it was.

mod common;

use std::collections::BTreeSet;

use common::*;
use csm_baselines::oracle::embeddings;
use csm_baselines::registry::{continuous_engine, EngineOptions, ENGINES};
use csm_engine::Batch;
use csm_graph::{Edge, LocatedUpdate, Strictness, Update, VertexId};
use proptest::prelude::*;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Applies `u` to `m` and appends it to `out` as its next line.
fn push(m: &mut Model, out: &mut Vec<LocatedUpdate>, u: Update) {
    m.apply(&u);
    out.push(LocatedUpdate {
        line: out.len() + 1,
        update: u,
    });
}

/// A valid batch heavy in vertex removals and re-additions: a vertex the
/// batch removed comes back under a random label (often another one), often
/// with its edges of the batch's start, and may go and come back again.
fn relabel_batch(r: &mut ChaCha8Rng, m: &mut Model, len: usize, vl: u32, el: Option<u32>) -> Vec<LocatedUpdate> {
    let mut out: Vec<LocatedUpdate> = Vec::new();
    let mut gone: Vec<VertexId> = Vec::new();
    let start = m.clone();
    // `id`'s edges at the batch's start back (unchanged edges through a
    // vertex of the same label: in neither count)
    let restore = |m: &mut Model, out: &mut Vec<LocatedUpdate>, id: VertexId| {
        let back: Vec<(VertexId, VertexId, u32)> = start
            .edges
            .iter()
            .filter(|(&(a, b), _)| (a == id || b == id) && m.labels.contains_key(&(a ^ b ^ id)))
            .filter(|(key, _)| !m.edges.contains_key(key))
            .map(|(&(a, b), &l)| (a, b, l))
            .collect();
        for (a, b, l) in back {
            push(m, out, Update::AddEdge(Edge::new(a, b, l)));
        }
    };
    while out.len() < len {
        let vs: Vec<VertexId> = m.labels.keys().copied().collect();
        let roll: f64 = r.random();
        let home: Vec<VertexId> = vs
            .iter()
            .copied()
            .filter(|v| start.labels.get(v) == m.labels.get(v))
            .collect();
        if roll < 0.08 && vl > 1 && !home.is_empty() {
            // a round trip: away under another label, with an edge, then
            // back under its label at the batch's start with its edges
            let id = home[r.random_range(0..home.len())];
            let label = start.labels[&id];
            push(m, &mut out, Update::RemoveVertex { id, label: None });
            let away = (label + r.random_range(1..vl)) % vl;
            push(m, &mut out, Update::AddVertex { id, label: away });
            if let Some(&w) = vs.iter().find(|&&w| w != id) {
                push(m, &mut out, Update::AddEdge(Edge::new(id, w, 0)));
            }
            push(m, &mut out, Update::RemoveVertex { id, label: Some(away) });
            push(m, &mut out, Update::AddVertex { id, label });
            restore(m, &mut out, id);
        } else if roll < 0.2 && vs.len() > 3 {
            let id = vs[r.random_range(0..vs.len())];
            let label = r.random_bool(0.5).then(|| m.labels[&id]);
            push(m, &mut out, Update::RemoveVertex { id, label });
            gone.push(id);
        } else if roll < 0.45 && !gone.is_empty() {
            let id = gone.swap_remove(r.random_range(0..gone.len()));
            let label = r.random_range(0..vl);
            push(m, &mut out, Update::AddVertex { id, label });
            if r.random_bool(0.6) {
                restore(m, &mut out, id);
            }
        } else if vs.len() >= 2 {
            let a = vs[r.random_range(0..vs.len())];
            let b = vs[r.random_range(0..vs.len())];
            if a == b {
                continue;
            }
            let label = el.map_or(0, |k| r.random_range(0..k));
            let u = match m.edges.get(&(a.min(b), a.max(b))) {
                Some(&stored) => Update::RemoveEdge(Edge::new(a, b, stored)),
                None => Update::AddEdge(Edge::new(a, b, label)),
            };
            push(m, &mut out, u);
        }
    }
    out
}

fn options(edge_filter: bool) -> EngineOptions {
    EngineOptions {
        threads: 1,
        edge_filter,
        ..EngineOptions::default()
    }
}

fn check(seed: u64) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let vl = r.random_range(1..=3u32);
    let el = seed.is_multiple_of(3).then_some(2);
    let n = r.random_range(5..9u32);
    let p = r.random_range(0.3..0.7);
    let g0 = random_graph(&mut r, n, p, vl, el);
    let k = r.random_range(2..=4usize);
    let q = random_query(&mut r, k, 0.4, vl, el);
    let filter = seed.is_multiple_of(2);
    let mut engines: Vec<_> = ENGINES
        .iter()
        .map(|name| continuous_engine(name, &options(filter)).expect("engine"))
        .collect();
    for e in &mut engines {
        e.init(&g0.to_data(), &q).expect("init");
    }
    let mut model = g0.clone();
    for b in 0..4 {
        let before: BTreeSet<Vec<VertexId>> = embeddings(&model.to_data(), &q);
        let len = r.random_range(2..16);
        let batch = relabel_batch(&mut r, &mut model, len, vl, el);
        for e in &mut engines {
            check_batch(e.as_mut(), b, &before, &model, &q, &batch).map_err(TestCaseError::fail)?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]
    #[test]
    fn engines_count_batches_that_relabel_vertices_exactly(seed in any::<u64>()) {
        check(seed)?;
    }
}

/// A relabelling batch with an invalid update: strict mode names its line
/// and leaves every engine's graph as it was (the next batch still counts
/// against G); lenient mode skips it and counts the rest.
#[test]
fn an_invalid_update_in_a_relabelling_batch_fails_it_or_is_skipped() {
    // a triangle 0-1-2 of label 0 and a pendant 3 of label 1
    let mut g0 = random_graph(&mut rng(1), 0, 0.0, 1, None);
    for (v, l) in [(0, 0), (1, 0), (2, 0), (3, 1)] {
        g0.labels.insert(v, l);
    }
    for key in [(0, 1), (0, 2), (1, 2), (2, 3)] {
        g0.edges.insert(key, 0);
    }
    let q = csm_planner::QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (0, 2, 0), (1, 2, 0)], false).expect("triangle");
    // 3 comes back under label 0 and closes two triangles; then a
    // deletion of an edge 3 no longer has
    let batch = located([
        Update::RemoveVertex { id: 3, label: Some(1) },
        Update::AddVertex { id: 3, label: 0 },
        Update::AddEdge(Edge::new(3, 0, 0)),
        Update::AddEdge(Edge::new(3, 1, 0)),
        Update::AddEdge(Edge::new(3, 2, 0)),
        Update::RemoveEdge(Edge::new(2, 3, 0)),
        Update::RemoveEdge(Edge::new(2, 3, 0)),
    ]);
    for name in ENGINES {
        for filter in [false, true] {
            let mut e = continuous_engine(name, &options(filter)).expect("engine");
            e.init(&g0.to_data(), &q).expect("init");
            let err = e
                .process(Batch {
                    updates: &batch,
                    source: "u.txt",
                    strictness: Strictness::Strict,
                })
                .expect_err("a deletion of a missing edge");
            assert!(
                err.to_string().contains("u.txt:7") && err.to_string().contains("does not exist"),
                "{name}: {err}"
            );
            // lenient: the second deletion is skipped; 3 closes one
            // triangle (0-1-3), counted 6 times as embeddings
            let res = e
                .process(Batch {
                    updates: &batch,
                    source: "u.txt",
                    strictness: Strictness::Lenient,
                })
                .expect("lenient");
            assert_eq!((res.positive, res.negative, res.skipped), (6, 0, 1), "{name}");
        }
    }
}
