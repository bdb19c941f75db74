//! [`CsrGraph`]: an immutable compressed-sparse-row snapshot, for static
//! matching, for packing (DCSR) and for upload to a GPU.

use crate::error::{ErrorKind, InputError};
use crate::types::{Edge, GraphData, Label, VertexId, MAX_VERTEX_ID};
use crate::view::{GraphView, Nbrs, Version};

mod build;

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
    /// rayon pool, a radix pass by vertex ranges with no atomic operation
    /// (see `build`); the result and the error are those of the sequential
    /// build (lists sorted by neighbour, then edge label; the first bad
    /// edge in order; the lowest vertex with a repeated pair).
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
        let build::Arrays {
            offsets,
            nbrs,
            elabels,
            max_degree,
        } = build::build(labels, edges, edge_labelled, source)?;
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
    use crate::types::ABSENT;

    /// The build on pools of 1-3 threads (several chunks and vertex ranges
    /// from 8,192 edges on) against sorted sets of (neighbour,
    /// label) per vertex; then each kind of bad edge planted at a random
    /// position, named with the sequential build's position (the first bad
    /// edge; for a repeated pair, the lowest vertex's and its last copy).
    #[test]
    fn parallel_build_equals_a_set_model_and_names_the_first_bad_edge() {
        for seed in 0..18u64 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1 + seed as usize % 3)
                .build()
                .unwrap();
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            let n = r.random_range(2..3000u32);
            let mut labels: Vec<Label> = (0..n).map(|_| r.random_range(0..4)).collect();
            let absent = r.random_range(0..n);
            labels[absent as usize] = ABSENT;
            let edge_labelled = seed % 2 == 0;
            let mut pairs = BTreeSet::new();
            let mut edges = Vec::new();
            for _ in 0..r.random_range(0..40_000) {
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
