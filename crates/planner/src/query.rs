//! [`QueryGraph`]: a small connected labelled pattern (up to 32 vertices).

use csm_graph::{GraphData, Label, ABSENT};

/// Query vertex index (0..n).
pub type QVertex = usize;

/// Largest supported query.
pub const MAX_QUERY_VERTICES: usize = 32;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("query has {0} vertices; csm supports 2 to 32")]
    Size(usize),
    #[error("query has no edges")]
    NoEdges,
    #[error("query vertex ids must be 0..n without gaps (vertex {0} is missing)")]
    Gap(usize),
    #[error("query is not connected")]
    Disconnected,
    #[error("query edge ({0}, {1}) is a self-loop or duplicate")]
    BadEdge(usize, usize),
}

/// A connected query pattern. Edges keep their input order: that order is
/// the relation numbering R_1..R_m of GCSM Eq. (1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryGraph {
    labels: Vec<Label>,
    adj: Vec<u32>,
    edges: Vec<(QVertex, QVertex, Label)>,
    /// n×n edge labels (meaningful where `adj` has the bit).
    elabel: Vec<Label>,
    edge_labelled: bool,
}

impl QueryGraph {
    /// Builds and validates a query. `edge_labelled` = whether edge labels matter.
    pub fn new(
        labels: Vec<Label>,
        edges: &[(QVertex, QVertex, Label)],
        edge_labelled: bool,
    ) -> Result<QueryGraph, QueryError> {
        let n = labels.len();
        if !(2..=MAX_QUERY_VERTICES).contains(&n) {
            return Err(QueryError::Size(n));
        }
        if let Some(i) = labels.iter().position(|&l| l == ABSENT) {
            return Err(QueryError::Gap(i));
        }
        if edges.is_empty() {
            return Err(QueryError::NoEdges);
        }
        let mut adj = vec![0u32; n];
        let mut elabel = vec![0; n * n];
        let mut kept = Vec::with_capacity(edges.len());
        for &(a, b, l) in edges {
            if a == b || a >= n || b >= n || adj[a] >> b & 1 == 1 {
                return Err(QueryError::BadEdge(a, b));
            }
            adj[a] |= 1 << b;
            adj[b] |= 1 << a;
            let l = if edge_labelled { l } else { 0 };
            elabel[a * n + b] = l;
            elabel[b * n + a] = l;
            kept.push((a, b, l));
        }
        let mut seen = 1u32;
        let mut frontier = 1u32;
        while frontier != 0 {
            let next = adj
                .iter()
                .enumerate()
                .filter(|&(u, _)| frontier >> u & 1 == 1)
                .fold(0, |m, (_, &a)| m | a);
            frontier = next & !seen;
            seen |= next;
        }
        if seen.count_ones() as usize != n {
            return Err(QueryError::Disconnected);
        }
        Ok(QueryGraph {
            labels,
            adj,
            edges: kept,
            elabel,
            edge_labelled,
        })
    }

    /// From a parsed pattern file or a generated query.
    pub fn from_data(g: &GraphData) -> Result<QueryGraph, QueryError> {
        let edges: Vec<_> = g.edges.iter().map(|e| (e.u as usize, e.v as usize, e.label)).collect();
        Self::new(g.labels.clone(), &edges, g.edge_labelled)
    }

    /// Back to an edge list (for writing query files).
    pub fn to_data(&self) -> GraphData {
        GraphData {
            labels: self.labels.clone(),
            edges: self
                .edges
                .iter()
                .map(|&(a, b, l)| csm_graph::Edge::new(a as u32, b as u32, l))
                .collect(),
            edge_labelled: self.edge_labelled,
        }
    }

    pub fn num_vertices(&self) -> usize {
        self.labels.len()
    }
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }
    pub fn label(&self, u: QVertex) -> Label {
        self.labels[u]
    }
    pub fn labels(&self) -> &[Label] {
        &self.labels
    }
    /// Edges in relation order (R_1..R_m).
    pub fn edges(&self) -> &[(QVertex, QVertex, Label)] {
        &self.edges
    }
    /// Neighbour bitmask of `u`.
    pub fn adj_mask(&self, u: QVertex) -> u32 {
        self.adj[u]
    }
    pub fn degree(&self, u: QVertex) -> usize {
        self.adj[u].count_ones() as usize
    }
    pub fn has_edge(&self, a: QVertex, b: QVertex) -> bool {
        self.adj[a] >> b & 1 == 1
    }
    /// Label of edge (a, b), if present.
    pub fn edge_label(&self, a: QVertex, b: QVertex) -> Option<Label> {
        self.has_edge(a, b).then(|| self.elabel[a * self.labels.len() + b])
    }
    /// Index (relation number, 0-based) of edge (a, b).
    pub fn edge_index(&self, a: QVertex, b: QVertex) -> Option<usize> {
        self.edges
            .iter()
            .position(|&(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a))
    }
    pub fn edge_labelled(&self) -> bool {
        self.edge_labelled
    }

    /// Number of label- and edge-label-preserving automorphisms, |Aut(Q)|.
    pub fn automorphism_count(&self) -> u64 {
        let n = self.num_vertices();
        let mut map = vec![usize::MAX; n];
        let mut used = 0u32;
        fn rec(q: &QueryGraph, k: usize, map: &mut [usize], used: &mut u32) -> u64 {
            let n = q.num_vertices();
            if k == n {
                return 1;
            }
            let mut total = 0;
            for t in 0..n {
                if *used >> t & 1 == 1 || q.labels[t] != q.labels[k] || q.degree(t) != q.degree(k) {
                    continue;
                }
                let ok = (0..k).all(|p| {
                    q.has_edge(p, k) == q.has_edge(map[p], t)
                        && (!q.has_edge(p, k) || q.edge_label(p, k) == q.edge_label(map[p], t))
                });
                if ok {
                    map[k] = t;
                    *used |= 1 << t;
                    total += rec(q, k + 1, map, used);
                    *used &= !(1 << t);
                }
            }
            total
        }
        rec(self, 0, &mut map, &mut used)
    }
}
