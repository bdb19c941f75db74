//! Plain data shared by every crate: ids, labels, edges, updates and an
//! owned edge-list graph ([`GraphData`]) that formats and generators produce
//! and graph stores are built from.

use serde::{Deserialize, Serialize};

/// A data or query vertex id. Data vertex ids must stay below [`MAX_VERTEX_ID`]:
/// the top bit of a stored neighbour marks a deleted edge (GCSM Sec. V-A, step 3).
pub type VertexId = u32;
/// A vertex or edge label.
pub type Label = u32;

/// Largest vertex id a graph store accepts (the top bit is the deletion mark).
pub const MAX_VERTEX_ID: VertexId = (1 << 31) - 2;
/// Label of an absent vertex slot (ids below the largest id that were never declared).
pub const ABSENT: Label = u32::MAX;
/// Edge label used when a graph carries no edge labels.
pub const NO_EDGE_LABEL: Label = 0;

/// An undirected labelled edge. Stores keep `u < v` after [`Edge::normalized`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Edge {
    pub u: VertexId,
    pub v: VertexId,
    pub label: Label,
}

impl Edge {
    pub fn new(u: VertexId, v: VertexId, label: Label) -> Self {
        Edge { u, v, label }
    }
    /// The same edge with `u <= v`.
    pub fn normalized(self) -> Self {
        if self.u <= self.v {
            self
        } else {
            Edge {
                u: self.v,
                v: self.u,
                label: self.label,
            }
        }
    }
    /// The unordered endpoint pair, smaller id first.
    pub fn key(&self) -> (VertexId, VertexId) {
        (self.u.min(self.v), self.u.max(self.v))
    }
}

/// One element of an update stream (CSM-study format: `v`, `-v`, `e`, `-e`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Update {
    AddVertex {
        id: VertexId,
        label: Label,
    },
    /// Removes the vertex and, implicitly, every edge still incident to it.
    /// `label`: the label the deletion names (`-v id label`), which must be
    /// the vertex's; `None` (`-v id`) names none and is not checked.
    RemoveVertex {
        id: VertexId,
        label: Option<Label>,
    },
    AddEdge(Edge),
    /// Removes an edge. In an edge-labelled graph its label must be the
    /// stored edge's (an omitted label reads as [`NO_EDGE_LABEL`], as for
    /// insertions); without edge labels it is not checked.
    RemoveEdge(Edge),
}

/// An update with the place it came from, so that errors can name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocatedUpdate {
    /// 1-based line in the source; for generated streams the line it would have
    /// when written out.
    pub line: usize,
    pub update: Update,
}

/// An owned edge-list graph: what parsers and generators produce.
///
/// Vertex `i` exists iff `labels[i] != ABSENT`. Edges are undirected and listed
/// once each; a builder rejects duplicates and self-loops.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphData {
    pub labels: Vec<Label>,
    pub edges: Vec<Edge>,
    /// Whether edge labels carry meaning (else every edge has [`NO_EDGE_LABEL`]).
    pub edge_labelled: bool,
}

impl GraphData {
    pub fn num_vertices(&self) -> usize {
        self.labels.len()
    }
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }
    /// Number of distinct vertex labels among present vertices.
    pub fn num_vertex_labels(&self) -> usize {
        let mut l: Vec<Label> = self.labels.iter().copied().filter(|&l| l != ABSENT).collect();
        l.sort_unstable();
        l.dedup();
        l.len()
    }
    /// Whether every edge carries [`NO_EDGE_LABEL`] (always so without edge
    /// labels): such labels cannot tell two edges apart.
    pub fn edge_labels_all_zero(&self) -> bool {
        !self.edge_labelled || self.edges.iter().all(|e| e.label == NO_EDGE_LABEL)
    }
    /// Whether some id below the largest is [`ABSENT`] (SNAP sources such as
    /// wiki-Vote skip ids). The graph format's readers in the SubgraphMatching
    /// family need ids `0..N-1`; see [`GraphData::compact_ids`].
    pub fn has_id_gaps(&self) -> bool {
        self.labels.contains(&ABSENT)
    }
    /// The same graph with present vertices renumbered `0..N-1` in id order,
    /// and the old-to-new map (`None` for absent ids). Edges stay normalised
    /// and in the same relative order. Runs on the current rayon pool
    /// ([`crate::compact::keep_vertices`]).
    pub fn compact_ids(&self) -> (GraphData, Vec<Option<VertexId>>) {
        let present: Vec<bool> = self.labels.iter().map(|&l| l != ABSENT).collect();
        crate::compact::keep_vertices(self, &present)
    }
}
