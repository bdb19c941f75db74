//! [`CsrGraph`]: an immutable compressed-sparse-row snapshot, for static
//! matching, for packing (DCSR) and for upload to a GPU.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::error::{ErrorKind, InputError};
use crate::types::{Edge, GraphData, Label, VertexId, ABSENT, MAX_VERTEX_ID};
use crate::view::{GraphView, Nbrs, Version};

/// Undirected graph in CSR form: each edge appears in both endpoint lists,
/// lists sorted by neighbour id.
#[derive(Clone, Debug, Default)]
pub struct CsrGraph {
    labels: Vec<Label>,
    offsets: Vec<u64>,
    nbrs: Vec<VertexId>,
    /// Parallel to `nbrs`; empty when the graph has no edge labels.
    elabels: Vec<Label>,
    edge_labelled: bool,
    max_degree: usize,
}

impl CsrGraph {
    /// Builds a snapshot, rejecting self-loops, duplicate edges and edges
    /// with an absent endpoint (errors name `source` and the edge's index + 1).
    pub fn from_data(g: &GraphData) -> Result<CsrGraph, InputError> {
        Self::from_parts(&g.labels, &g.edges, g.edge_labelled, "<graph>")
    }

    /// As [`CsrGraph::from_data`] from loose parts. Runs on the current
    /// rayon pool: each pass over the edges or the vertices is parallel
    /// (on one thread the 10 M-edge R-MAT's build took 0.5 s, longer than
    /// most counts on it); the result and the error are those of the
    /// sequential build (lists sorted by neighbour, then edge label; the
    /// first bad edge in order; the lowest vertex with a repeated pair).
    pub fn from_parts(
        labels: &[Label],
        edges: &[Edge],
        edge_labelled: bool,
        source: &str,
    ) -> Result<CsrGraph, InputError> {
        let n = labels.len();
        if n > MAX_VERTEX_ID as usize + 1 {
            return Err(InputError::new(source, 0, ErrorKind::VertexIdTooLarge(n as u64 - 1)));
        }
        let bad = |e: &Edge| {
            if e.u == e.v {
                return Some(ErrorKind::SelfLoop(e.u));
            }
            [e.u, e.v]
                .into_iter()
                .find(|&x| x as usize >= n || labels[x as usize] == ABSENT)
                .map(ErrorKind::UnknownVertex)
        };
        // (small graphs run as one job per pass: PBE builds one per partition)
        const MIN: usize = 1 << 12;
        // degrees, and the first bad edge (the counts are then dropped)
        let deg: Vec<AtomicU64> = (0..n)
            .into_par_iter()
            .with_min_len(MIN)
            .map(|_| AtomicU64::new(0))
            .collect();
        let first_bad = AtomicUsize::new(usize::MAX);
        edges.par_iter().enumerate().with_min_len(MIN).for_each(|(i, e)| {
            if bad(e).is_some() {
                first_bad.fetch_min(i, Ordering::Relaxed);
            } else {
                deg[e.u as usize].fetch_add(1, Ordering::Relaxed);
                deg[e.v as usize].fetch_add(1, Ordering::Relaxed);
            }
        });
        if let Some(i) = Some(first_bad.into_inner()).filter(|&i| i < edges.len()) {
            return Err(InputError::new(source, i + 1, bad(&edges[i]).expect("bad")));
        }
        let mut offsets = vec![0u64; n + 1];
        for v in 0..n {
            offsets[v + 1] = offsets[v] + deg[v].load(Ordering::Relaxed);
        }
        // each list filled through its own cursor, as (neighbour, label)
        // packed in a word (sorting words orders by neighbour, then label)
        let total = offsets[n] as usize;
        let cursor: Vec<AtomicU64> = (offsets[..n].par_iter().with_min_len(MIN))
            .map(|&o| AtomicU64::new(o))
            .collect();
        let slots: Vec<AtomicU64> = (0..total)
            .into_par_iter()
            .with_min_len(MIN)
            .map(|_| AtomicU64::new(0))
            .collect();
        edges.par_iter().with_min_len(MIN).for_each(|e| {
            let l = if edge_labelled { e.label } else { 0 };
            for (a, b) in [(e.u, e.v), (e.v, e.u)] {
                let p = cursor[a as usize].fetch_add(1, Ordering::Relaxed);
                slots[p as usize].store((b as u64) << 32 | l as u64, Ordering::Relaxed);
            }
        });
        // each list sorted in a buffer and written out (no second copy of
        // the slots: the build's peak stays the sequential build's)
        let mut nbrs: Vec<VertexId> = vec![0; total];
        let mut elabels: Vec<Label> = vec![0; if edge_labelled { total } else { 0 }];
        let outs = split_lists(&mut nbrs, &offsets);
        let label_outs: Vec<Option<&mut [Label]>> = match edge_labelled {
            true => split_lists(&mut elabels, &offsets).into_iter().map(Some).collect(),
            false => (0..n).map(|_| None).collect(),
        };
        let repeated = (outs.into_par_iter().zip(label_outs).enumerate())
            .with_min_len(256)
            .map_init(Vec::new, |buf: &mut Vec<u64>, (v, (out, label_out))| {
                let (s, t) = (offsets[v] as usize, offsets[v + 1] as usize);
                buf.clear();
                buf.extend(slots[s..t].iter().map(|a| a.load(Ordering::Relaxed)));
                buf.sort_unstable();
                for (o, &p) in out.iter_mut().zip(buf.iter()) {
                    *o = (p >> 32) as VertexId;
                }
                if let Some(lo) = label_out {
                    for (o, &p) in lo.iter_mut().zip(buf.iter()) {
                        *o = p as Label;
                    }
                }
                let w = buf.windows(2).find(|w| w[0] >> 32 == w[1] >> 32)?;
                Some((v as VertexId, (w[0] >> 32) as VertexId))
            })
            .flatten()
            .min();
        drop(slots);
        if let Some((v, x)) = repeated {
            let key = (v.min(x), v.max(x));
            let pos = edges.iter().rposition(|e| e.key() == key).unwrap_or(0);
            return Err(InputError::new(source, pos + 1, ErrorKind::DuplicateEdge(key.0, key.1)));
        }
        let max_degree = (offsets.par_windows(2).with_min_len(MIN).map(|w| (w[1] - w[0]) as usize))
            .max()
            .unwrap_or(0);
        Ok(CsrGraph {
            labels: labels.to_vec(),
            offsets,
            nbrs,
            elabels,
            edge_labelled,
            max_degree,
        })
    }

    /// Builds from any view at one version (e.g. the common graph G ∩ G').
    pub fn from_view<G: GraphView + ?Sized>(g: &G, ver: Version) -> CsrGraph {
        let n = g.num_vertices();
        let el = g.edge_labelled();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u64);
        let mut nbrs = Vec::new();
        let mut elabels = Vec::new();
        let mut max_degree = 0;
        for v in 0..n as VertexId {
            let list = g.nbrs(v, ver);
            max_degree = max_degree.max(list.len());
            for (x, l) in list.iter() {
                nbrs.push(x);
                if el {
                    elabels.push(l);
                }
            }
            offsets.push(nbrs.len() as u64);
        }
        CsrGraph {
            labels: g.labels().to_vec(),
            offsets,
            nbrs,
            elabels,
            edge_labelled: el,
            max_degree,
        }
    }

    pub fn num_edges(&self) -> usize {
        self.nbrs.len() / 2
    }

    /// Sorted neighbours of `v`.
    #[inline]
    pub fn neighbors(&self, v: VertexId) -> &[VertexId] {
        let (s, t) = (self.offsets[v as usize] as usize, self.offsets[v as usize + 1] as usize);
        &self.nbrs[s..t]
    }

    /// Edge labels parallel to [`CsrGraph::neighbors`] (empty without edge labels).
    #[inline]
    pub fn edge_labels(&self, v: VertexId) -> &[Label] {
        if !self.edge_labelled {
            return &[];
        }
        let (s, t) = (self.offsets[v as usize] as usize, self.offsets[v as usize + 1] as usize);
        &self.elabels[s..t]
    }

    pub fn degree(&self, v: VertexId) -> usize {
        (self.offsets[v as usize + 1] - self.offsets[v as usize]) as usize
    }

    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    pub fn neighbor_array(&self) -> &[VertexId] {
        &self.nbrs
    }

    /// Edge labels parallel to [`CsrGraph::neighbor_array`] (empty without
    /// edge labels).
    pub fn edge_label_array(&self) -> &[Label] {
        &self.elabels
    }

    /// The edge list, each undirected edge once (`u < v`).
    pub fn to_data(&self) -> GraphData {
        let mut edges = Vec::with_capacity(self.num_edges());
        for u in 0..self.labels.len() as VertexId {
            let el = self.edge_labels(u);
            for (i, &v) in self.neighbors(u).iter().enumerate() {
                if u < v {
                    edges.push(Edge::new(u, v, if el.is_empty() { 0 } else { el[i] }));
                }
            }
        }
        GraphData {
            labels: self.labels.clone(),
            edges,
            edge_labelled: self.edge_labelled,
        }
    }

    /// Bytes held by the snapshot's arrays.
    pub fn memory_bytes(&self) -> usize {
        self.labels.len() * 4 + self.offsets.len() * 8 + self.nbrs.len() * 4 + self.elabels.len() * 4
    }
}

/// `xs` cut into the lists of `offsets` (vertex `v`'s is `offsets[v]..offsets[v + 1]`).
pub(crate) fn split_lists<'a, T>(xs: &'a mut [T], offsets: &[u64]) -> Vec<&'a mut [T]> {
    let mut lists = Vec::with_capacity(offsets.len().saturating_sub(1));
    let mut rest = xs;
    for w in offsets.windows(2) {
        let (list, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
        lists.push(list);
        rest = tail;
    }
    lists
}

impl GraphView for CsrGraph {
    fn num_vertices(&self) -> usize {
        self.labels.len()
    }
    fn labels(&self) -> &[Label] {
        &self.labels
    }
    #[inline]
    fn nbrs(&self, v: VertexId, _ver: Version) -> Nbrs<'_> {
        Nbrs::plain(self.neighbors(v), self.edge_labels(v))
    }
    fn edge_labelled(&self) -> bool {
        self.edge_labelled
    }
    fn max_degree(&self) -> usize {
        self.max_degree
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// The build on a 3-thread pool against sorted sets of (neighbour,
    /// label) per vertex; then each kind of bad edge planted at a random
    /// position, named with the sequential build's position (the first bad
    /// edge; for a repeated pair, the lowest vertex's and its last copy).
    #[test]
    fn parallel_build_equals_a_set_model_and_names_the_first_bad_edge() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for seed in 0..12u64 {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            let n = r.random_range(2..3000u32);
            let mut labels: Vec<Label> = (0..n).map(|_| r.random_range(0..4)).collect();
            let absent = r.random_range(0..n);
            labels[absent as usize] = ABSENT;
            let edge_labelled = seed % 2 == 0;
            let mut pairs = BTreeSet::new();
            let mut edges = Vec::new();
            for _ in 0..r.random_range(0..20_000) {
                // skewed: a few hubs
                let u = if r.random_bool(0.3) {
                    r.random_range(0..4.min(n))
                } else {
                    r.random_range(0..n)
                };
                let v = r.random_range(0..n);
                if u == v || u == absent || v == absent || !pairs.insert((u.min(v), u.max(v))) {
                    continue;
                }
                edges.push(Edge::new(u, v, if edge_labelled { r.random_range(0..3) } else { 0 }));
            }
            let g = pool
                .install(|| CsrGraph::from_parts(&labels, &edges, edge_labelled, "s"))
                .unwrap();
            let mut model = vec![BTreeSet::new(); n as usize];
            for e in &edges {
                model[e.u as usize].insert((e.v, e.label));
                model[e.v as usize].insert((e.u, e.label));
            }
            let mut max = 0;
            for v in 0..n {
                let want: Vec<(VertexId, Label)> = model[v as usize].iter().copied().collect();
                let got: Vec<(VertexId, Label)> = match edge_labelled {
                    true => g
                        .neighbors(v)
                        .iter()
                        .copied()
                        .zip(g.edge_labels(v).iter().copied())
                        .collect(),
                    false => g.neighbors(v).iter().map(|&x| (x, 0)).collect(),
                };
                assert_eq!(got, want, "seed {seed} vertex {v}");
                max = max.max(want.len());
            }
            assert_eq!(g.max_degree(), max, "seed {seed}");
            assert_eq!(g.num_edges(), edges.len());
            if edges.len() < 4 {
                continue;
            }
            // bad edges: the earliest named, whatever comes after it
            let at = r.random_range(0..edges.len());
            let (u, v) = (edges[at].u, edges[at].v);
            let build = |es: &[Edge]| pool.install(|| CsrGraph::from_parts(&labels, es, edge_labelled, "s"));
            for (bad, kind) in [
                (Edge::new(u, u, 0), ErrorKind::SelfLoop(u)),
                (Edge::new(u, n + 5, 0), ErrorKind::UnknownVertex(n + 5)),
                (Edge::new(absent, v, 0), ErrorKind::UnknownVertex(absent)),
            ] {
                let mut es = edges.clone();
                es.insert(at, bad);
                es.push(Edge::new(v, v, 0));
                let err = build(&es).unwrap_err();
                assert_eq!((err.line, err.kind), (at + 1, kind), "seed {seed}");
            }
            // two repeated pairs (reversed, another label): the one with
            // the lowest endpoint is named, at its last copy
            let other = edges[r.random_range(0..edges.len())];
            let mut es = edges.clone();
            es.push(Edge::new(v, u, 1));
            es.insert(r.random_range(0..es.len()), Edge::new(other.v, other.u, 2));
            let err = build(&es).unwrap_err();
            let (a, b) = [(u.min(v), u.max(v)), other.key()].into_iter().min().unwrap();
            let last = es.iter().rposition(|e| e.key() == (a, b)).unwrap();
            assert_eq!(
                (err.line, err.kind),
                (last + 1, ErrorKind::DuplicateEdge(a, b)),
                "seed {seed}"
            );
        }
    }
}
