//! Sequential batch validation: the state of every edge and vertex a batch
//! has touched so far, on top of the committed graph.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use super::DynamicGraph;
use crate::error::ErrorKind;
use crate::types::{Edge, Label, Update, VertexId, ABSENT, MAX_VERTEX_ID};
use crate::view::{GraphView, Version};

/// A touched edge's label (or absence) in the graph and after the updates
/// validated so far.
#[derive(Clone, Copy)]
pub(super) struct EdgeState {
    pub(super) before: Option<Label>,
    pub(super) now: Option<Label>,
}

/// The sequential state of touched edges and vertices during validation
/// (small integer keys: a fast fixed hasher, no DoS concern).
#[derive(Default)]
pub(super) struct Overlay {
    pub(super) edges: HashMap<(VertexId, VertexId), EdgeState, FixedState>,
    /// Touched edges in the order first touched, with the index (in the
    /// batch) of the update that first touched each.
    pub(super) edge_order: Vec<((VertexId, VertexId), u32)>,
    /// Index of the update being validated.
    pub(super) at: u32,
    pub(super) vertices: HashMap<VertexId, Option<Label>, FixedState>,
    pub(super) vertex_order: Vec<VertexId>,
}

impl Overlay {
    fn vertex(&self, g: &DynamicGraph, v: VertexId) -> Option<Label> {
        match self.vertices.get(&v) {
            Some(&s) => s,
            None if g.exists(v) => Some(g.labels[v as usize]),
            None => None,
        }
    }

    /// An overlay for a batch of `n` updates.
    pub(super) fn with_capacity(n: usize) -> Overlay {
        Overlay {
            edges: HashMap::with_capacity_and_hasher(n, FixedState::default()),
            edge_order: Vec::with_capacity(n),
            ..Overlay::default()
        }
    }

    /// The edge's state so far; `known` is its label in `g` if already
    /// looked up ([`super::DynamicGraph::edge_label`], done in parallel for
    /// large batches).
    fn edge(&self, g: &DynamicGraph, key: (VertexId, VertexId), known: Option<Option<Label>>) -> EdgeState {
        match self.edges.get(&key) {
            Some(&s) => s,
            None => {
                let before = known.unwrap_or_else(|| g.edge_label(key.0, key.1));
                EdgeState { before, now: before }
            }
        }
    }

    fn set_edge(&mut self, key: (VertexId, VertexId), state: EdgeState) {
        if self.edges.insert(key, state).is_none() {
            self.edge_order.push((key, self.at));
        }
    }

    fn set_vertex(&mut self, v: VertexId, state: Option<Label>) {
        if self.vertices.insert(v, state).is_none() {
            self.vertex_order.push(v);
        }
    }

    /// Validates `u` on the state so far and records its effect; `known`:
    /// the label of `u`'s edge in `g` when already looked up.
    pub(super) fn step(&mut self, g: &DynamicGraph, u: Update, known: Option<Option<Label>>) -> Result<(), ErrorKind> {
        match u {
            Update::AddVertex { id, label } => {
                vertex_update(id, label)?;
                if self.vertex(g, id).is_some() {
                    return Err(ErrorKind::DuplicateVertex(id));
                }
                if g.exists(id) && g.labels[id as usize] != label {
                    return Err(ErrorKind::VertexReAdded(id));
                }
                self.set_vertex(id, Some(label));
            }
            Update::RemoveVertex { id, label } => {
                let Some(stored) = self.vertex(g, id) else {
                    return Err(ErrorKind::UnknownVertex(id));
                };
                if let Some(named) = label.filter(|&l| l != stored) {
                    return Err(ErrorKind::VertexLabelMismatch { id, stored, named });
                }
                // delete every edge incident to `id` in the current state
                let mut incident: Vec<(VertexId, VertexId)> = Vec::new();
                if g.exists(id) {
                    for (w, _) in g.nbrs(id, Version::Old).iter() {
                        incident.push((id.min(w), id.max(w)));
                    }
                }
                incident.extend(self.edge_order.iter().map(|e| e.0).filter(|k| k.0 == id || k.1 == id));
                for key in incident {
                    let state = self.edge(g, key, None);
                    if state.now.is_some() {
                        self.set_edge(key, EdgeState { now: None, ..state });
                    }
                }
                self.set_vertex(id, None);
            }
            Update::AddEdge(e) | Update::RemoveEdge(e) => {
                let insert = matches!(u, Update::AddEdge(_));
                let mut before = None;
                let (key, now) = edge_update(
                    e,
                    insert,
                    g.edge_labelled,
                    |x| self.vertex(g, x).is_some(),
                    |key| {
                        let state = self.edge(g, key, known);
                        before = Some(state.before);
                        state.now
                    },
                )?;
                let before = before.expect("a valid edge update looked its edge up");
                self.set_edge(key, EdgeState { before, now });
            }
        }
        Ok(())
    }
}

/// The checks a vertex addition passes before its id's state is looked
/// at: an id in range and a label other than the reserved [`ABSENT`].
pub(crate) fn vertex_update(id: VertexId, label: Label) -> Result<(), ErrorKind> {
    if id > MAX_VERTEX_ID {
        return Err(ErrorKind::VertexIdTooLarge(id as u64));
    }
    if label == ABSENT {
        return Err(ErrorKind::Malformed(format!("label {label} is reserved")));
    }
    Ok(())
}

/// The checks an edge update passes, in this order: not a self-loop, both
/// endpoints present (`exists`), no insertion of a present edge, no
/// deletion of an absent one (`now`: the edge's label on the state so far,
/// `None` when absent) and, with edge labels, no deletion that names
/// another label than the edge's (the CSM study's `-e u v label`). Returns the edge's key and its label after the
/// update (`None`: deleted). The batch path ([`Overlay::step`]) and a batch
/// of one edge update (`DynamicGraph::validate_one_edge`) both check here.
pub(crate) fn edge_update(
    e: Edge,
    insert: bool,
    edge_labelled: bool,
    exists: impl Fn(VertexId) -> bool,
    now: impl FnOnce((VertexId, VertexId)) -> Option<Label>,
) -> Result<((VertexId, VertexId), Option<Label>), ErrorKind> {
    if e.u == e.v {
        return Err(ErrorKind::SelfLoop(e.u));
    }
    if let Some(x) = [e.u, e.v].into_iter().find(|&x| !exists(x)) {
        return Err(ErrorKind::UnknownVertex(x));
    }
    let key = e.key();
    match (insert, now(key)) {
        (true, Some(_)) => Err(ErrorKind::DuplicateEdge(key.0, key.1)),
        (false, None) => Err(ErrorKind::MissingEdge(key.0, key.1)),
        (true, None) => Ok((key, Some(if edge_labelled { e.label } else { 0 }))),
        (false, Some(stored)) if edge_labelled && stored != e.label => Err(ErrorKind::EdgeLabelMismatch {
            u: key.0,
            v: key.1,
            stored,
            named: e.label,
        }),
        (false, Some(_)) => Ok((key, None)),
    }
}
