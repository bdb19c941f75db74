//! Small random inputs for the cross-checking tests, generated here (not by
//! csm-graph's generators) so that the tests stay independent of the code
//! under test.

#![allow(dead_code)]

pub mod measure;
pub mod stars;

use std::collections::{BTreeMap, BTreeSet};

use csm_baselines::oracle::embeddings;
use csm_graph::{Edge, GraphData, Label, LocatedUpdate, Update, VertexId, ABSENT};
use csm_planner::QueryGraph;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A tiny graph state applied update by update (the test's own model).
#[derive(Clone, Debug)]
pub struct Model {
    pub labels: BTreeMap<VertexId, Label>,
    pub edges: BTreeMap<(VertexId, VertexId), Label>,
    pub edge_labelled: bool,
}

impl Model {
    pub fn to_data(&self) -> GraphData {
        let n = self.labels.keys().max().map_or(0, |&m| m as usize + 1);
        let mut labels = vec![ABSENT; n];
        for (&v, &l) in &self.labels {
            labels[v as usize] = l;
        }
        GraphData {
            labels,
            edges: self.edges.iter().map(|(&(u, v), &l)| Edge::new(u, v, l)).collect(),
            edge_labelled: self.edge_labelled,
        }
    }

    /// Applies one update; panics on an invalid one (the generator only makes valid ones).
    pub fn apply(&mut self, u: &Update) {
        match *u {
            Update::AddVertex { id, label } => {
                assert!(self.labels.insert(id, label).is_none());
            }
            Update::RemoveVertex { id, label } => {
                let stored = self.labels.remove(&id).expect("vertex exists");
                assert!(label.is_none_or(|l| l == stored), "a deletion names the vertex's label");
                self.edges.retain(|&(a, b), _| a != id && b != id);
            }
            Update::AddEdge(e) => {
                assert!(self
                    .edges
                    .insert(e.key(), if self.edge_labelled { e.label } else { 0 })
                    .is_none());
            }
            Update::RemoveEdge(e) => {
                let stored = self.edges.remove(&e.key()).expect("edge exists");
                assert!(
                    !self.edge_labelled || stored == e.label,
                    "a deletion names the edge's label"
                );
            }
        }
    }
}

pub struct Case {
    pub g0: Model,
    pub query: QueryGraph,
    pub batches: Vec<Vec<LocatedUpdate>>,
}

pub fn random_graph(rng: &mut ChaCha8Rng, n: u32, p: f64, vlabels: u32, elabels: Option<u32>) -> Model {
    let mut m = Model {
        labels: BTreeMap::new(),
        edges: BTreeMap::new(),
        edge_labelled: elabels.is_some(),
    };
    for v in 0..n {
        m.labels.insert(v, rng.random_range(0..vlabels));
    }
    for u in 0..n {
        for v in u + 1..n {
            if rng.random_bool(p) {
                m.edges.insert((u, v), elabels.map_or(0, |k| rng.random_range(0..k)));
            }
        }
    }
    m
}

pub fn random_query(rng: &mut ChaCha8Rng, k: usize, extra: f64, vlabels: u32, elabels: Option<u32>) -> QueryGraph {
    let labels: Vec<Label> = (0..k).map(|_| rng.random_range(0..vlabels)).collect();
    let mut edges = BTreeSet::new();
    for v in 1..k {
        let u = rng.random_range(0..v);
        edges.insert((u, v));
    }
    for u in 0..k {
        for v in u + 1..k {
            if rng.random_bool(extra) {
                edges.insert((u, v));
            }
        }
    }
    let edges: Vec<(usize, usize, Label)> = edges
        .into_iter()
        .map(|(u, v)| (u, v, elabels.map_or(0, |n| rng.random_range(0..n))))
        .collect();
    QueryGraph::new(labels, &edges, elabels.is_some()).expect("valid query")
}

/// A random valid batch: inserts, deletes, cancelling pairs, relabels
/// (delete + insert with another edge label), new vertices with edges,
/// vertex removals, and vertices removed and re-added (under any label).
pub fn random_batch(
    rng: &mut ChaCha8Rng,
    m: &mut Model,
    len: usize,
    vlabels: u32,
    elabels: Option<u32>,
    allow_vertex_ops: bool,
) -> Vec<LocatedUpdate> {
    let mut out = Vec::new();
    let mut line = 0;
    let mut push = |m: &mut Model, u: Update, out: &mut Vec<LocatedUpdate>| {
        m.apply(&u);
        line += 1;
        out.push(LocatedUpdate { line, update: u });
    };
    for _ in 0..len {
        let vs: Vec<VertexId> = m.labels.keys().copied().collect();
        let r: f64 = rng.random();
        // vertices this batch removed that are absent now
        let removed: Vec<VertexId> = out
            .iter()
            .filter_map(|u: &LocatedUpdate| match u.update {
                Update::RemoveVertex { id, .. } if !m.labels.contains_key(&id) => Some(id),
                _ => None,
            })
            .collect();
        if allow_vertex_ops && r < 0.08 {
            let id = if !removed.is_empty() && rng.random_bool(0.7) {
                // re-added, under its old label or another one (then the
                // batch goes to the engines in two phases)
                removed[rng.random_range(0..removed.len())]
            } else {
                // a fresh id
                let removed_ever = out.iter().filter_map(|u: &LocatedUpdate| match u.update {
                    Update::RemoveVertex { id, .. } => Some(id),
                    _ => None,
                });
                vs.iter().copied().chain(removed_ever).max().map_or(0, |x| x + 1)
            };
            let label = rng.random_range(0..vlabels);
            push(m, Update::AddVertex { id, label }, &mut out);
            continue;
        }
        if allow_vertex_ops && r < 0.12 && vs.len() > 3 {
            let id = vs[rng.random_range(0..vs.len())];
            // the label named or not
            let label = rng.random_bool(0.5).then(|| m.labels[&id]);
            push(m, Update::RemoveVertex { id, label }, &mut out);
            if rng.random_bool(0.3) {
                let label = rng.random_range(0..vlabels);
                push(m, Update::AddVertex { id, label }, &mut out);
            }
            continue;
        }
        if vs.len() < 2 {
            continue;
        }
        let a = vs[rng.random_range(0..vs.len())];
        let b = vs[rng.random_range(0..vs.len())];
        if a == b {
            continue;
        }
        let key = (a.min(b), a.max(b));
        let el = elabels.map_or(0, |k| rng.random_range(0..k));
        if let Some(&stored) = m.edges.get(&key) {
            push(m, Update::RemoveEdge(Edge::new(a, b, stored)), &mut out);
            if rng.random_bool(0.15) {
                push(m, Update::AddEdge(Edge::new(a, b, el)), &mut out); // relabel or re-insert
            }
        } else {
            push(m, Update::AddEdge(Edge::new(a, b, el)), &mut out);
            if rng.random_bool(0.1) {
                push(m, Update::RemoveEdge(Edge::new(a, b, el)), &mut out); // cancels
            }
        }
    }
    out
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A batch of `len` insertions (or deletions when `delete`) of distinct edges.
pub fn one_kind_batch(rng: &mut ChaCha8Rng, m: &mut Model, len: usize, delete: bool) -> Vec<LocatedUpdate> {
    let vs: Vec<VertexId> = m.labels.keys().copied().collect();
    let mut pool: Vec<(VertexId, VertexId)> = Vec::new();
    for (i, &a) in vs.iter().enumerate() {
        for &b in &vs[i + 1..] {
            if m.edges.contains_key(&(a, b)) == delete {
                pool.push((a, b));
            }
        }
    }
    let mut out = Vec::new();
    for k in 0..len.min(pool.len()) {
        let j = rng.random_range(k..pool.len());
        pool.swap(k, j);
        let (a, b) = pool[k];
        let u = if delete {
            Update::RemoveEdge(Edge::new(a, b, m.edges[&(a, b)]))
        } else {
            Update::AddEdge(Edge::new(a, b, 0))
        };
        m.apply(&u);
        out.push(LocatedUpdate { line: k + 1, update: u });
    }
    out
}

/// The random stream a continuous-engine check draws: batch sizes, labels.
#[derive(Clone, Copy, Debug)]
pub struct StreamSpec {
    pub batches: usize,
    /// Batch lengths are drawn from `1..max_len`.
    pub max_len: usize,
    pub vlabels: u32,
    pub elabels: Option<u32>,
    pub vertex_ops: bool,
}

/// When `lenient`, appends to `batch` a second insertion of an edge the
/// model has after it (an invalid update a lenient run skips) and returns
/// the strictness to run the batch with: `Lenient` when it appended one,
/// else `Strict`.
pub fn with_lenient_duplicate(model: &Model, batch: &mut Vec<LocatedUpdate>, lenient: bool) -> csm_graph::Strictness {
    let noise = model.edges.iter().next().map(|(&(a, b), &l)| Edge::new(a, b, l));
    match noise.filter(|_| lenient) {
        Some(e) => {
            batch.push(LocatedUpdate {
                line: batch.len() + 1,
                update: Update::AddEdge(e),
            });
            csm_graph::Strictness::Lenient
        }
        None => csm_graph::Strictness::Strict,
    }
}

/// `updates` numbered as lines 1, 2, ... of a source.
pub fn located(updates: impl IntoIterator<Item = Update>) -> Vec<LocatedUpdate> {
    updates
        .into_iter()
        .enumerate()
        .map(|(i, update)| LocatedUpdate { line: i + 1, update })
        .collect()
}

/// Processes `batch` (number `b`) on `eng` and checks its positive and
/// negative against the brute-force set differences |M(G')\M(G)| and
/// |M(G)\M(G')|, where `before` = M(G) and `model` already holds G'. The
/// error names the engine, the batch, the query and the updates.
pub fn check_batch(
    eng: &mut dyn csm_engine::ContinuousMatcher,
    b: usize,
    before: &BTreeSet<Vec<VertexId>>,
    model: &Model,
    q: &QueryGraph,
    batch: &[LocatedUpdate],
) -> Result<(), String> {
    let after = embeddings(&model.to_data(), q);
    let res = eng
        .process(csm_engine::Batch {
            updates: batch,
            source: "test",
            strictness: csm_graph::Strictness::Strict,
        })
        .map_err(|e| format!("{}: batch {b} rejected: {e}", eng.name()))?;
    let want = (
        after.difference(before).count() as u64,
        before.difference(&after).count() as u64,
    );
    if (res.positive, res.negative) != want {
        return Err(format!(
            "{}: batch {b}: got (+{}, -{}), want {want:?}; query {q:?}; updates {batch:?}",
            eng.name(),
            res.positive,
            res.negative
        ));
    }
    Ok(())
}

/// Feeds `eng` (already initialised on `model`) random batches drawn from
/// `spec`, applying them to `model` too, and checks every batch's positive
/// and negative against the brute-force set differences |M(G')\M(G)| and
/// |M(G)\M(G')|. The error names the batch, the query and the updates.
pub fn check_set_differences(
    eng: &mut dyn csm_engine::ContinuousMatcher,
    r: &mut ChaCha8Rng,
    model: &mut Model,
    q: &QueryGraph,
    spec: StreamSpec,
) -> Result<(), String> {
    for b in 0..spec.batches {
        let before = embeddings(&model.to_data(), q);
        let len = r.random_range(1..spec.max_len);
        let batch = random_batch(r, model, len, spec.vlabels, spec.elabels, spec.vertex_ops);
        check_batch(eng, b, &before, model, q, &batch)?;
    }
    Ok(())
}

/// A small random data graph for the stream checks: 1-3 vertex labels (the
/// count is returned with the model), edge labels `el`, 5-10 vertices, edge
/// probability 0.2-0.6.
pub fn random_stream_graph(r: &mut ChaCha8Rng, el: Option<u32>) -> (u32, Model) {
    let vl = r.random_range(1..=3u32);
    let n = r.random_range(5..11u32);
    let p = r.random_range(0.2..0.6);
    (vl, random_graph(r, n, p, vl, el))
}

/// Runs the engine registered as `name` (through `registry::continuous_engine`)
/// on `seeds` small random cases of three mixed batches each (edge labels on
/// even seeds, vertex updates), checking every batch with
/// [`check_set_differences`]; panics with the seed on the first mismatch.
pub fn registry_engine_matches_set_differences(name: &str, seeds: u64) {
    use csm_baselines::registry::{continuous_engine, EngineOptions};
    for seed in 0..seeds {
        let mut r = rng(seed);
        let vl = r.random_range(1..=3u32);
        let el = (seed % 2 == 0).then_some(2);
        let n = r.random_range(5..11u32);
        let mut model = random_graph(&mut r, n, 0.4, vl, el);
        let k = r.random_range(2..=4usize);
        let q = random_query(&mut r, k, 0.3, vl, el);
        let mut eng = continuous_engine(name, &EngineOptions::default()).expect("registered engine");
        eng.init(&model.to_data(), &q).expect("init");
        let spec = StreamSpec {
            batches: 3,
            max_len: 10,
            vlabels: vl,
            elabels: el,
            vertex_ops: true,
        };
        if let Err(e) = check_set_differences(eng.as_mut(), &mut r, &mut model, &q, spec) {
            panic!("seed {seed}: {e}");
        }
    }
}

/// A small random graph (1-3 vertex labels, edge labels when asked) and a
/// random query of 2 to `max_k` vertices, as CSR, edge list and query.
pub fn random_case(seed: u64, edge_labels: bool, max_k: usize) -> (csm_graph::CsrGraph, GraphData, QueryGraph) {
    let mut r = rng(seed);
    let vl = r.random_range(1..=3u32);
    let el = edge_labels.then_some(2);
    let n = r.random_range(4..13u32);
    let p = r.random_range(0.15..0.7);
    let model = random_graph(&mut r, n, p, vl, el);
    let k = r.random_range(2..=max_k);
    let q = random_query(&mut r, k, 0.35, vl, el);
    let data = model.to_data();
    (csm_graph::CsrGraph::from_data(&data).expect("valid"), data, q)
}

/// A dense graph with one or two labels and a query of `k` vertices with
/// `extra` chords (many same-label vertices, large automorphism groups),
/// and the generator for further draws.
pub fn dense_case(
    seed: u64,
    k: std::ops::RangeInclusive<usize>,
    extra: f64,
) -> (csm_graph::CsrGraph, QueryGraph, ChaCha8Rng) {
    let mut r = rng(seed);
    let vl = r.random_range(1..=2u32);
    let el = seed.is_multiple_of(3).then_some(2);
    let n = r.random_range(5..10u32);
    let model = random_graph(&mut r, n, 0.6, vl, el);
    let k = r.random_range(k);
    let q = random_query(&mut r, k, extra, vl, el);
    (csm_graph::CsrGraph::from_data(&model.to_data()).expect("valid"), q, r)
}

/// The static count by petgraph VF2, or by brute force where VF2 declines.
pub fn vf2_or_brute_force(g: &csm_graph::CsrGraph, q: &QueryGraph) -> u64 {
    use csm_baselines::oracle::{BruteForce, Vf2};
    use csm_engine::StaticMatcher;
    Vf2.count(g, q).or_else(|_| BruteForce.count(g, q)).expect("small")
}

/// A query of a symmetric shape, the first `shapes` (1 to 7) of: cycle,
/// clique, star, "book" (triangles on one edge), and cores with pendant
/// stars (which make GENEVA's trees use P5–P7); mostly one vertex label and
/// one edge label, so that automorphisms survive.
pub fn symmetric_query(r: &mut ChaCha8Rng, vl: u32, el: Option<u32>, shapes: u32) -> QueryGraph {
    let k = r.random_range(3..=5usize);
    let mut edges: Vec<(usize, usize)> = match r.random_range(0..shapes.clamp(1, 7)) {
        0 => (0..k).map(|i| (i, (i + 1) % k)).collect(),
        1 => (0..k.min(4))
            .flat_map(|a| (a + 1..k.min(4)).map(move |b| (a, b)))
            .collect(),
        2 => (1..k).map(|i| (0, i)).collect(),
        3 => std::iter::once((0, 1))
            .chain((2..k).flat_map(|i| [(0, i), (1, i)]))
            .collect(),
        // triangle with k − 2 leaves on vertex 0
        4 => [(0, 1), (1, 2), (0, 2)]
            .into_iter()
            .chain((3..k + 1).map(|i| (0, i)))
            .collect(),
        // square with two leaves on 0 and one or two on 2
        5 => [(0, 1), (1, 2), (2, 3), (0, 3), (0, 4), (0, 5), (2, 6)]
            .into_iter()
            .take(6 + k.min(4) - 3)
            .collect(),
        // path 0-1 with a star of k − 1 leaves on 1
        _ => std::iter::once((0, 1)).chain((2..k + 1).map(|i| (1, i))).collect(),
    };
    let n = edges.iter().map(|&(a, b)| a.max(b)).max().unwrap() + 1;
    edges.sort_unstable();
    // few labels so that automorphisms survive
    let labels: Vec<Label> = (0..n)
        .map(|_| if r.random_bool(0.7) { 0 } else { r.random_range(0..vl) })
        .collect();
    let edges: Vec<(usize, usize, Label)> = edges
        .into_iter()
        .map(|(a, b)| {
            (
                a,
                b,
                el.map_or(0, |m| if r.random_bool(0.7) { 0 } else { r.random_range(0..m) }),
            )
        })
        .collect();
    QueryGraph::new(labels, &edges, el.is_some()).expect("valid")
}
