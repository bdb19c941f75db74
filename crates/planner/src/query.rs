//! [`QueryGraph`]: a small connected labelled pattern (up to 32 vertices).

use csm_graph::{GraphData, Label, Update, ABSENT, NO_EDGE_LABEL};

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
    /// n×n relation numbers (meaningful where `adj` has the bit): plan
    /// building looks them up per read of every level of every merged
    /// plan, which a scan of the edges made the bulk of a dense 32-vertex
    /// query's 7 s set-up.
    eindex: Vec<u16>,
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
        let mut eindex = vec![u16::MAX; n * n];
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
            eindex[a * n + b] = kept.len() as u16;
            eindex[b * n + a] = kept.len() as u16;
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
            eindex,
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
        self.has_edge(a, b)
            .then(|| usize::from(self.eindex[a * self.labels.len() + b]))
    }
    pub fn edge_labelled(&self) -> bool {
        self.edge_labelled
    }
    /// Whether every edge label is [`NO_EDGE_LABEL`] (always so without edge
    /// labels).
    pub fn edge_labels_all_zero(&self) -> bool {
        !self.edge_labelled || self.edges.iter().all(|e| e.2 == NO_EDGE_LABEL)
    }

    /// Number of label- and edge-label-preserving automorphisms, |Aut(Q)|
    /// ([`crate::symmetry::automorphism_count`]).
    pub fn automorphism_count(&self) -> u128 {
        crate::symmetry::automorphism_count(self)
    }
}

/// Drops edge labels that cannot tell edges apart, so that matching takes the
/// unlabelled paths (plain lists, vectorised merges, counting shortcuts)
/// instead of checking a label at every list entry.
///
/// When every edge of `g` and every edge that `updates` insert carries
/// [`NO_EDGE_LABEL`], the graph keeps that one label throughout the stream,
/// so its edge labels are dropped; when, besides, every edge of `q` carries
/// it, a query edge and a data edge always agree on the label and the
/// query's are dropped too. Counts are unchanged: a query edge with another
/// label still matches nothing, as data edges without labels read as
/// [`NO_EDGE_LABEL`]. Returns whether the query's labels were dropped.
///
/// Files in the CSM-study format spell out a label on every edge (`e u v 0`),
/// so this is the common case for its datasets and queries; the `csm`
/// commands apply it to every input.
pub fn drop_trivial_edge_labels<'u>(
    g: &mut GraphData,
    updates: impl IntoIterator<Item = &'u Update>,
    q: &mut QueryGraph,
) -> bool {
    let inserts_zero = updates
        .into_iter()
        .all(|u| !matches!(u, Update::AddEdge(e) if e.label != NO_EDGE_LABEL));
    if !(inserts_zero && g.edge_labels_all_zero()) {
        return false;
    }
    g.edge_labelled = false;
    if !q.edge_labels_all_zero() {
        return false;
    }
    q.edge_labelled = false;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use csm_graph::Edge;

    fn graph(labels: &[Label]) -> GraphData {
        let edges = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| Edge::new(i as u32, i as u32 + 1, l))
            .collect();
        GraphData {
            labels: vec![0; labels.len() + 1],
            edges,
            edge_labelled: true,
        }
    }

    fn path(labels: &[Label]) -> QueryGraph {
        QueryGraph::from_data(&graph(labels)).unwrap()
    }

    #[test]
    fn zero_labels_everywhere_are_dropped() {
        let (mut g, mut q) = (graph(&[0, 0, 0]), path(&[0, 0]));
        let ups = [
            Update::AddEdge(Edge::new(0, 2, 0)),
            Update::RemoveEdge(Edge::new(0, 1, 5)),
        ];
        assert!(drop_trivial_edge_labels(&mut g, &ups, &mut q));
        assert!(!g.edge_labelled && !q.edge_labelled());
        assert_eq!(q.automorphism_count(), path(&[0, 0]).automorphism_count());
    }

    #[test]
    fn a_label_anywhere_keeps_what_it_must() {
        // a labelled insert: the graph may come to hold label 3
        let (mut g, mut q) = (graph(&[0, 0]), path(&[0]));
        assert!(!drop_trivial_edge_labels(
            &mut g,
            &[Update::AddEdge(Edge::new(0, 2, 3))],
            &mut q
        ));
        assert!(g.edge_labelled && q.edge_labelled());
        // a labelled data edge
        let (mut g, mut q) = (graph(&[0, 1]), path(&[0]));
        assert!(!drop_trivial_edge_labels(&mut g, &[], &mut q));
        assert!(g.edge_labelled && q.edge_labelled());
        // a labelled query edge: it can match nothing, and keeps its label
        let (mut g, mut q) = (graph(&[0, 0]), path(&[0, 2]));
        assert!(!drop_trivial_edge_labels(&mut g, &[], &mut q));
        assert!(!g.edge_labelled && q.edge_labelled());
    }
}
