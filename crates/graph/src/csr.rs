//! [`CsrGraph`]: an immutable compressed-sparse-row snapshot, for static
//! matching, for packing (DCSR) and for upload to a GPU.

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

    /// As [`CsrGraph::from_data`] from loose parts.
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
        let mut deg = vec![0u64; n + 1];
        for (i, e) in edges.iter().enumerate() {
            let err = |k| Err(InputError::new(source, i + 1, k));
            if e.u == e.v {
                return err(ErrorKind::SelfLoop(e.u));
            }
            for x in [e.u, e.v] {
                if x as usize >= n || labels[x as usize] == ABSENT {
                    return err(ErrorKind::UnknownVertex(x));
                }
            }
            deg[e.u as usize] += 1;
            deg[e.v as usize] += 1;
        }
        let mut offsets = vec![0u64; n + 1];
        for v in 0..n {
            offsets[v + 1] = offsets[v] + deg[v];
        }
        let total = offsets[n] as usize;
        let mut fill: Vec<u64> = offsets[..n].to_vec();
        let mut pairs: Vec<(VertexId, Label)> = vec![(0, 0); total];
        for e in edges {
            let l = if edge_labelled { e.label } else { 0 };
            for (a, b) in [(e.u, e.v), (e.v, e.u)] {
                let p = &mut fill[a as usize];
                pairs[*p as usize] = (b, l);
                *p += 1;
            }
        }
        let mut max_degree = 0;
        for v in 0..n {
            let (s, t) = (offsets[v] as usize, offsets[v + 1] as usize);
            let list = &mut pairs[s..t];
            list.sort_unstable();
            max_degree = max_degree.max(t - s);
            if let Some(w) = list.windows(2).find(|w| w[0].0 == w[1].0) {
                let key = ((v as VertexId).min(w[0].0), (v as VertexId).max(w[0].0));
                let pos = edges.iter().rposition(|e| e.key() == key).unwrap_or(0);
                return Err(InputError::new(source, pos + 1, ErrorKind::DuplicateEdge(key.0, key.1)));
            }
        }
        let nbrs = pairs.iter().map(|p| p.0).collect();
        let elabels = if edge_labelled {
            pairs.iter().map(|p| p.1).collect()
        } else {
            Vec::new()
        };
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
