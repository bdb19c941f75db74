//! Batches that re-add a vertex under another label.
//!
//! A batch may remove a vertex and add it again under another label (the
//! CSM study's `-v 7 2` … `v 7 5`). Valid in the sequential semantics, such
//! a batch cannot be staged as one net change: the old views would need the
//! vertex's old label and the new views its new one, and its edges that are
//! in G and in G' again would look unchanged, while every embedding through
//! the vertex changes (its label does). [`split_relabels`] turns such a batch
//! into two batches that a store can stage, a *removal phase* and an
//! *addition phase*, whose counts add up to the batch's exactly.
//!
//! Let R be the vertices of G that end the batch under another label than
//! they had in G, or absent after being re-added under another label. The
//! removal phase removes R's vertices and applies the batch's updates that
//! touch neither a vertex of R nor an edge at one (G → G1); the addition
//! phase adds R's vertices that G' holds, with their edges in G'
//! (G1 → G', insertions only). Then, with M(·) the embeddings:
//!
//! * an embedding of G and of G' uses no vertex of R (its label differs
//!   between the two, or the vertex is gone from G'), so its edges are G1's:
//!   M(G) ∩ M(G') ⊆ M(G1). With M(G1) ⊆ M(G') (G1 is a subgraph of G' with
//!   the same labels) that gives M(G) \ M(G') = M(G) \ M(G1), the removal
//!   phase's `negative`;
//! * M(G') \ M(G) is the removal phase's `positive` (M(G1) \ M(G)) plus the
//!   addition phase's (M(G') \ M(G1)), and the addition phase removes
//!   nothing.
//!
//! A vertex re-added under another label that ends the batch under its
//! label in G again stays in the ordinary path, without the lives it spent
//! under other labels: each of those ended in a removal that took all the
//! edges it had gained, so dropping them (the re-addition, the removal and
//! the updates of edges at the vertex between the two) changes neither G'
//! nor any other update's validity.
//!
//! The batch is validated first, in order, with the checks and errors of
//! [`crate::DynamicGraph::stage`] (a relabelling re-addition aside), against
//! a [`StartState`]: the whole graph, also where an engine keeps some edges
//! apart.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::dynamic::{overlay, Strictness};
use crate::error::{ErrorKind, InputError};
use crate::types::{Edge, Label, LocatedUpdate, Update, VertexId, ABSENT};
use crate::view::GraphView;
use crate::DynamicGraph;

/// What validating a batch needs of the graph it starts from (nothing
/// pending): vertex labels and edge labels, `None` when absent.
pub trait StartState {
    fn vertex_label(&self, v: VertexId) -> Option<Label>;
    /// The label of edge `(u, v)`, in either order (0 in a graph without
    /// edge labels).
    fn edge_label(&self, u: VertexId, v: VertexId) -> Option<Label>;
    /// Whether edge labels are checked ([`crate::GraphView::edge_labelled`]).
    fn checks_edge_labels(&self) -> bool;
}

impl StartState for DynamicGraph {
    fn vertex_label(&self, v: VertexId) -> Option<Label> {
        self.labels().get(v as usize).copied().filter(|&l| l != ABSENT)
    }
    fn edge_label(&self, u: VertexId, v: VertexId) -> Option<Label> {
        DynamicGraph::edge_label(self, u, v)
    }
    fn checks_edge_labels(&self) -> bool {
        self.edge_labelled()
    }
}

/// Whether `updates` re-add a vertex of `g` under another label than its
/// label in `g`: the batches [`split_relabels`] is for (a scan of the
/// vertex additions; other batches stage as they are).
pub fn relabels(g: &impl StartState, updates: &[LocatedUpdate]) -> bool {
    updates.iter().any(|lu| match lu.update {
        Update::AddVertex { id, label } => g.vertex_label(id).is_some_and(|l| l != label),
        _ => false,
    })
}

/// A batch as two batches that stage one after the other, with the same
/// counts in sum (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// Removes the relabelled vertices, then the batch's other updates.
    pub removal: Vec<LocatedUpdate>,
    /// Adds the relabelled vertices G' holds, then their edges in G'.
    pub addition: Vec<LocatedUpdate>,
    /// Updates skipped as invalid (lenient mode; in neither phase).
    pub skipped: usize,
}

/// Validates `updates` in order against `g` (relabelling re-additions
/// allowed) and splits them into [`Phases`]. Strict: the first invalid
/// update's error, naming `source` and its line. Lenient: invalid updates
/// are skipped and counted.
pub fn split_relabels(
    g: &impl StartState,
    updates: &[LocatedUpdate],
    source: &str,
    strictness: Strictness,
) -> Result<Phases, InputError> {
    let mut replay = Replay::new(g);
    let mut valid = Vec::with_capacity(updates.len());
    let mut skipped = 0;
    for (i, lu) in updates.iter().enumerate() {
        match replay.step(i as u32, lu.update) {
            Ok(()) => valid.push(i),
            Err(kind) => match strictness {
                Strictness::Strict => return Err(InputError::new(source, lu.line, kind)),
                Strictness::Lenient => skipped += 1,
            },
        }
    }
    let mut phases = replay.phases(updates, &valid);
    phases.skipped = skipped;
    Ok(phases)
}

/// A vertex's life in the batch: added (or present from the start) under
/// `label`, from update `from` (none: from the start) to update `to` (its
/// removal; none: to the end).
#[derive(Clone, Copy, Debug)]
struct Life {
    label: Label,
    from: Option<u32>,
    to: Option<u32>,
}

/// The batch's state so far over the start graph. An edge's state is its
/// last update's unless one of its ends was removed since (then it is
/// absent) or it had none (then it is the start graph's): a removal need not
/// list the vertex's edges.
struct Replay<'g, G> {
    g: &'g G,
    /// Per touched vertex, its lives in order.
    lives: HashMap<VertexId, Vec<Life>, FixedState>,
    /// Per updated edge, its last valid update and its label after it.
    edges: HashMap<(VertexId, VertexId), (u32, Option<Label>), FixedState>,
}

impl<'g, G: StartState> Replay<'g, G> {
    fn new(g: &'g G) -> Self {
        Replay {
            g,
            lives: HashMap::default(),
            edges: HashMap::default(),
        }
    }

    /// The vertex's current label (`None`: absent).
    fn vertex(&self, v: VertexId) -> Option<Label> {
        match self.lives.get(&v).and_then(|l| l.last()) {
            Some(life) => life.to.is_none().then_some(life.label),
            None => self.g.vertex_label(v),
        }
    }

    /// The last removal of `v` so far.
    fn removed_at(&self, v: VertexId) -> Option<u32> {
        self.lives.get(&v)?.iter().filter_map(|l| l.to).next_back()
    }

    fn edge(&self, key: (VertexId, VertexId)) -> Option<Label> {
        let removed = self.removed_at(key.0).max(self.removed_at(key.1));
        match self.edges.get(&key) {
            Some(&(at, label)) if removed.is_none_or(|r| at > r) => label,
            _ if removed.is_some() => None,
            _ => self.g.edge_label(key.0, key.1),
        }
    }

    /// The lives of `v`, starting with its life in the start graph.
    fn lives_mut(&mut self, v: VertexId) -> &mut Vec<Life> {
        let start = self.g.vertex_label(v);
        self.lives.entry(v).or_insert_with(|| {
            start
                .map(|label| Life {
                    label,
                    from: None,
                    to: None,
                })
                .into_iter()
                .collect()
        })
    }

    /// [`crate::DynamicGraph::stage`]'s checks for one update, in its order.
    fn step(&mut self, at: u32, u: Update) -> Result<(), ErrorKind> {
        match u {
            Update::AddVertex { id, label } => {
                overlay::vertex_update(id, label)?;
                if self.vertex(id).is_some() {
                    return Err(ErrorKind::DuplicateVertex(id));
                }
                self.lives_mut(id).push(Life {
                    label,
                    from: Some(at),
                    to: None,
                });
            }
            Update::RemoveVertex { id, label } => {
                let Some(stored) = self.vertex(id) else {
                    return Err(ErrorKind::UnknownVertex(id));
                };
                if let Some(named) = label.filter(|&l| l != stored) {
                    return Err(ErrorKind::VertexLabelMismatch { id, stored, named });
                }
                let life = self.lives_mut(id).last_mut().expect("a present vertex has a life");
                life.to = Some(at);
            }
            Update::AddEdge(e) | Update::RemoveEdge(e) => {
                let insert = matches!(u, Update::AddEdge(_));
                let (key, now) = overlay::edge_update(
                    e,
                    insert,
                    self.g.checks_edge_labels(),
                    |x| self.vertex(x).is_some(),
                    |key| self.edge(key),
                )?;
                self.edges.insert(key, (at, now));
            }
        }
        Ok(())
    }

    /// The phases of the valid updates (`valid`: their indices, in order).
    fn phases(&self, updates: &[LocatedUpdate], valid: &[usize]) -> Phases {
        // per vertex re-added under another label: moved to the phases
        // (true) or kept with its other lives dropped (the spans listed)
        let mut moved: HashMap<VertexId, (Label, Option<Label>), FixedState> = HashMap::default();
        let mut dropped: HashMap<VertexId, Vec<(u32, u32)>, FixedState> = HashMap::default();
        for (&v, lives) in &self.lives {
            let Some(start) = self.g.vertex_label(v) else {
                continue;
            };
            if lives.iter().all(|l| l.label == start) {
                continue;
            }
            let end = lives.last().filter(|l| l.to.is_none()).map(|l| l.label);
            if end == Some(start) {
                let spans = lives
                    .iter()
                    .filter(|l| l.label != start)
                    .map(|l| {
                        (
                            l.from.expect("a re-addition"),
                            l.to.expect("ended before the last life"),
                        )
                    })
                    .collect();
                dropped.insert(v, spans);
            } else {
                moved.insert(v, (start, end));
            }
        }
        let in_dropped = |v: VertexId, at: u32| {
            dropped
                .get(&v)
                .is_some_and(|spans| spans.iter().any(|&(from, to)| from <= at && at <= to))
        };
        let line_of = |at: u32| updates[at as usize].line;
        let mut phases = Phases::default();
        // the removal phase: the moved vertices first, under their start labels
        let mut moved_ids: Vec<VertexId> = moved.keys().copied().collect();
        moved_ids.sort_unstable();
        for &v in &moved_ids {
            let first = self.lives[&v]
                .iter()
                .find_map(|l| l.to)
                .expect("re-added, so removed first");
            phases.removal.push(LocatedUpdate {
                line: line_of(first),
                update: Update::RemoveVertex {
                    id: v,
                    label: Some(moved[&v].0),
                },
            });
        }
        for &i in valid {
            let at = i as u32;
            let ends: &[VertexId] = match &updates[i].update {
                Update::AddVertex { id, .. } | Update::RemoveVertex { id, .. } => &[*id][..],
                Update::AddEdge(e) | Update::RemoveEdge(e) => &[e.u, e.v][..],
            };
            if ends.iter().any(|v| moved.contains_key(v) || in_dropped(*v, at)) {
                continue;
            }
            phases.removal.push(updates[i]);
        }
        // the addition phase: the moved vertices G' holds, then their edges
        for &v in &moved_ids {
            if let (_, Some(label)) = moved[&v] {
                let last = self.lives[&v].last().and_then(|l| l.from).expect("re-added");
                phases.addition.push(LocatedUpdate {
                    line: line_of(last),
                    update: Update::AddVertex { id: v, label },
                });
            }
        }
        let mut edges: Vec<(u32, (VertexId, VertexId), Label)> = self
            .edges
            .iter()
            .filter(|(key, _)| moved.contains_key(&key.0) || moved.contains_key(&key.1))
            .filter_map(|(&key, &(at, _))| Some((at, key, self.edge(key)?)))
            .collect();
        edges.sort_unstable();
        for (at, (u, v), label) in edges {
            phases.addition.push(LocatedUpdate {
                line: line_of(at),
                update: Update::AddEdge(Edge::new(u, v, label)),
            });
        }
        phases
    }
}
