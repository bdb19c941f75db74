//! Dense renumbering of sparse vertex ids.
//!
//! Every store in csm indexes vertices by id: labels, CSR offsets and the
//! `DynamicGraph`'s per-vertex lists are arrays of `largest id + 1` slots, as
//! in GCSM's and RapidFlow's stores. A file whose ids are few but huge (a
//! SNAP crawl naming vertex 2,000,000,000 among a thousand others) would need
//! gigabytes of empty slots. The readers can renumber such a file's vertices
//! `0..N-1` in id order ([`IdPolicy`]); an [`IdMap`] remembers the file's ids,
//! renumbers update streams the same way (ids an update names first get the
//! next free numbers) and turns errors back into the file's ids, so that a
//! renumbered run reports exactly what a run on the original ids would.
//! Matching is invariant under renumbering: counts do not change.

use crate::error::{ErrorKind, InputError};
use crate::types::{Edge, GraphData, LocatedUpdate, Update, VertexId};
use std::collections::HashMap;

/// Id spaces up to this many slots are always stored densely.
pub const DENSE_ID_FLOOR: u64 = 1 << 24;

/// Beyond [`DENSE_ID_FLOOR`], ids are sparse when there are more than this
/// many slots per vertex.
pub const DENSE_ID_SLACK: u64 = 16;

/// Whether ids up to `max_id` for at most `vertices` vertices are too sparse
/// to store in arrays indexed by id: more than [`DENSE_ID_FLOOR`] slots and
/// more than [`DENSE_ID_SLACK`] slots a vertex.
pub fn too_sparse(max_id: VertexId, vertices: u64) -> bool {
    let slots = u64::from(max_id) + 1;
    slots > DENSE_ID_FLOOR && slots > DENSE_ID_SLACK.saturating_mul(vertices.max(1))
}

/// How a reader numbers vertices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IdPolicy {
    /// The file's ids; a file whose ids are [`too_sparse`] is an error
    /// ([`ErrorKind::SparseIds`]) instead of gigabytes of empty slots.
    #[default]
    Keep,
    /// Renumber the vertices `0..N-1` in id order.
    Compact,
    /// [`IdPolicy::Compact`] when the ids are [`too_sparse`], else
    /// [`IdPolicy::Keep`] (what the `csm` binary does).
    CompactIfSparse,
}

impl IdPolicy {
    /// The names [`std::str::FromStr`] accepts: `keep`, `compact`, `auto`.
    pub fn name(self) -> &'static str {
        match self {
            IdPolicy::Keep => "keep",
            IdPolicy::Compact => "compact",
            IdPolicy::CompactIfSparse => "auto",
        }
    }
}

impl std::str::FromStr for IdPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [IdPolicy::Keep, IdPolicy::Compact, IdPolicy::CompactIfSparse]
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown id policy `{s}` (expected keep, compact or auto)"))
    }
}

/// The file's vertex ids of a renumbered graph and of its update stream.
///
/// Internal ids `0..n` are the graph's vertices in the order of their file
/// ids; ids that updates name first (new vertices, or unknown ones that the
/// store will reject) follow from `n` in the order they appear.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdMap {
    /// The file's id of each graph vertex, ascending.
    graph: Vec<VertexId>,
    /// The file's id of each id first named by an update, from `graph.len()`.
    added: Vec<VertexId>,
    added_index: HashMap<VertexId, VertexId>,
}

impl IdMap {
    /// The map of a graph whose vertices had the file ids `ids` (strictly
    /// ascending), numbered `0..ids.len()`.
    ///
    /// # Panics
    /// If `ids` is not strictly ascending.
    pub fn from_sorted(ids: Vec<VertexId>) -> Self {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids must be strictly ascending");
        IdMap {
            graph: ids,
            ..Default::default()
        }
    }

    /// `g` with its present vertices renumbered `0..N-1` in id order
    /// ([`GraphData::compact_ids`]), and the map of their ids.
    pub fn compact(g: &GraphData) -> (GraphData, IdMap) {
        let (compacted, old_to_new) = g.compact_ids();
        let present = old_to_new.iter().enumerate().filter(|(_, new)| new.is_some());
        let ids = present.map(|(old, _)| old as VertexId).collect();
        (compacted, IdMap::from_sorted(ids))
    }

    /// Number of ids mapped (graph vertices plus ids updates added).
    pub fn len(&self) -> usize {
        self.graph.len() + self.added.len()
    }

    /// Whether no id is mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The internal id of the file's id `id`, if mapped.
    pub fn internal(&self, id: VertexId) -> Option<VertexId> {
        match self.graph.binary_search(&id) {
            Ok(i) => Some(i as VertexId),
            Err(_) => self.added_index.get(&id).copied(),
        }
    }

    /// The internal id of `id`, numbering it next if it is new.
    pub fn intern(&mut self, id: VertexId) -> VertexId {
        if let Some(x) = self.internal(id) {
            return x;
        }
        let x = self.len() as VertexId;
        self.added.push(id);
        self.added_index.insert(id, x);
        x
    }

    /// The file's id of internal id `x` (`x` itself if unmapped).
    pub fn original(&self, x: VertexId) -> VertexId {
        let i = x as usize;
        match self.graph.get(i) {
            Some(&id) => id,
            None => self.added.get(i - self.graph.len()).copied().unwrap_or(x),
        }
    }

    /// Renumbers an update stream (read with the file's ids) in place.
    pub fn map_updates(&mut self, updates: &mut [LocatedUpdate]) {
        for u in updates {
            u.update = match u.update {
                Update::AddVertex { id, label } => Update::AddVertex {
                    id: self.intern(id),
                    label,
                },
                Update::RemoveVertex { id, label } => Update::RemoveVertex {
                    id: self.intern(id),
                    label,
                },
                Update::AddEdge(e) => Update::AddEdge(self.map_edge(e)),
                Update::RemoveEdge(e) => Update::RemoveEdge(self.map_edge(e)),
            };
        }
    }

    fn map_edge(&mut self, e: Edge) -> Edge {
        Edge::new(self.intern(e.u), self.intern(e.v), e.label)
    }

    /// `kind` with its vertex ids turned back into the file's. Edges are
    /// named smaller file id first, as the stores name them.
    pub fn original_kind(&self, kind: &ErrorKind) -> ErrorKind {
        let o = |x: VertexId| self.original(x);
        let pair = |u: VertexId, v: VertexId| (o(u).min(o(v)), o(u).max(o(v)));
        match kind.clone() {
            ErrorKind::UnknownVertex(x) => ErrorKind::UnknownVertex(o(x)),
            ErrorKind::DuplicateVertex(x) => ErrorKind::DuplicateVertex(o(x)),
            ErrorKind::SelfLoop(x) => ErrorKind::SelfLoop(o(x)),
            ErrorKind::VertexReAdded(x) => ErrorKind::VertexReAdded(o(x)),
            ErrorKind::DuplicateEdge(u, v) => {
                let (u, v) = pair(u, v);
                ErrorKind::DuplicateEdge(u, v)
            }
            ErrorKind::MissingEdge(u, v) => {
                let (u, v) = pair(u, v);
                ErrorKind::MissingEdge(u, v)
            }
            ErrorKind::VertexLabelMismatch { id, stored, named } => ErrorKind::VertexLabelMismatch {
                id: o(id),
                stored,
                named,
            },
            ErrorKind::EdgeLabelMismatch { u, v, stored, named } => {
                let (u, v) = pair(u, v);
                ErrorKind::EdgeLabelMismatch { u, v, stored, named }
            }
            k @ (ErrorKind::Malformed(_)
            | ErrorKind::VertexIdTooLarge(_)
            | ErrorKind::SparseIds { .. }
            | ErrorKind::UnknownFormat(_)
            | ErrorKind::Io(_)) => k,
        }
    }

    /// `e` with its vertex ids turned back into the file's.
    pub fn original_error(&self, e: &InputError) -> InputError {
        InputError::new(e.source_name.clone(), e.line, self.original_kind(&e.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_rule() {
        assert!(!too_sparse(1000, 1));
        assert!(!too_sparse((DENSE_ID_FLOOR - 1) as VertexId, 1));
        assert!(too_sparse(DENSE_ID_FLOOR as VertexId, 1));
        let big = 2_000_000_000;
        assert!(too_sparse(big, 1000));
        assert!(!too_sparse(big, u64::from(big) / DENSE_ID_SLACK + 1));
    }

    #[test]
    fn updates_get_the_next_numbers_and_errors_the_file_ids() {
        let mut m = IdMap::from_sorted(vec![5, 70, 3_000_000_000 / 2]);
        assert_eq!((m.internal(70), m.internal(6)), (Some(1), None));
        let mut ups = vec![
            LocatedUpdate {
                line: 1,
                update: Update::AddVertex { id: 9, label: 2 },
            },
            LocatedUpdate {
                line: 2,
                update: Update::AddEdge(Edge::new(1_500_000_000, 9, 0)),
            },
            LocatedUpdate {
                line: 3,
                update: Update::RemoveEdge(Edge::new(5, 11, 0)),
            },
        ];
        m.map_updates(&mut ups);
        assert_eq!(ups[0].update, Update::AddVertex { id: 3, label: 2 });
        assert_eq!(ups[1].update, Update::AddEdge(Edge::new(2, 3, 0)));
        assert_eq!(ups[2].update, Update::RemoveEdge(Edge::new(0, 4, 0)));
        assert_eq!(m.len(), 5);
        let e = InputError::new("u", 3, ErrorKind::MissingEdge(0, 4));
        assert_eq!(
            m.original_error(&e),
            InputError::new("u", 3, ErrorKind::MissingEdge(5, 11))
        );
        assert_eq!(m.original(77), 77);
        // a graph's compaction: its present ids, in order
        let g = GraphData {
            labels: vec![crate::types::ABSENT, 4, crate::types::ABSENT, 5, 6],
            edges: vec![Edge::new(4, 1, 0)],
            edge_labelled: false,
        };
        let (c, m) = IdMap::compact(&g);
        assert_eq!(c, g.compact_ids().0);
        assert_eq!((m.len(), m.original(0), m.original(1), m.original(2)), (3, 1, 3, 4));
        assert_eq!("AUTO".parse::<IdPolicy>(), Ok(IdPolicy::CompactIfSparse));
    }
}
