//! [`CommonView`]: G ∩ G' of a staged batch that changes one edge, with every
//! neighbour list plain.
//!
//! When a batch changes a single edge {x, y}, every other list is the same in
//! all versions, and the embeddings that appear or vanish are exactly those
//! that bind the seed to {x, y} and read every other relation in G ∩ G'
//! (an embedding is injective on edges, so no other relation can use the
//! changed edge; see `csm_planner::symmetry`). The staged lists of x and y
//! carry a mark or an appended entry, which forces the matchers onto their
//! slow cursor paths. This view reads every list in its common version (no
//! appended part) and copies the endpoint lists that carry a mark once,
//! without it, so that every list it hands out is a plain sorted slice and
//! the fast merge, galloping and bitmap paths apply everywhere.

use crate::types::{Label, VertexId};
use crate::view::{GraphView, LabelGroup, Nbrs, Version, MARK};

/// Every version of `g` read as [`Version::Common`], with the lists of the two
/// endpoints of the changed edge copied into plain slices.
pub struct CommonView<'g, G: GraphView + ?Sized> {
    g: &'g G,
    /// The endpoints of the changed edge.
    x: VertexId,
    y: VertexId,
    /// Copies of the endpoint lists that carry marks.
    ends: [Option<ListCopy>; 2],
}

/// A vertex's list without its marked entries.
struct ListCopy {
    v: VertexId,
    ids: Vec<VertexId>,
    labels: Vec<Label>,
}

impl<'g, G: GraphView + ?Sized> CommonView<'g, G> {
    /// `x`, `y`: the endpoints of the only edge the staged batch changes.
    pub fn new(g: &'g G, x: VertexId, y: VertexId) -> Self {
        // Common lists have no appended part; only marks need removing
        // (a deletion), and a list without marks is used in place.
        let copy = |v: VertexId| {
            let list = g.nbrs(v, Version::Common);
            if list.is_plain() {
                return None;
            }
            // copy the runs between marks whole (a one-edge batch marks one
            // entry), and stop looking once every mark is found
            let (base, bl) = (list.base, list.base_labels);
            let keep = base.len() - list.marked as usize;
            let mut ids = Vec::with_capacity(keep);
            let mut labels = Vec::with_capacity(if bl.is_empty() { 0 } else { keep });
            let (mut start, mut left) = (0, list.marked);
            let mut k = 0;
            while left > 0 && k < base.len() {
                if base[k] & MARK != 0 {
                    ids.extend_from_slice(&base[start..k]);
                    if !bl.is_empty() {
                        labels.extend_from_slice(&bl[start..k]);
                    }
                    start = k + 1;
                    left -= 1;
                }
                k += 1;
            }
            ids.extend_from_slice(&base[start..]);
            if !bl.is_empty() {
                labels.extend_from_slice(&bl[start..]);
            }
            Some(ListCopy { v, ids, labels })
        };
        CommonView {
            g,
            x,
            y,
            ends: [copy(x), copy(y)],
        }
    }
}

impl<G: GraphView + ?Sized> GraphView for CommonView<'_, G> {
    #[inline]
    fn num_vertices(&self) -> usize {
        self.g.num_vertices()
    }
    #[inline]
    fn labels(&self) -> &[Label] {
        self.g.labels()
    }
    #[inline]
    fn nbrs(&self, v: VertexId, _ver: Version) -> Nbrs<'_> {
        for c in self.ends.iter().flatten() {
            if c.v == v {
                return Nbrs::plain(&c.ids, &c.labels);
            }
        }
        self.g.nbrs(v, Version::Common)
    }
    fn edge_labelled(&self) -> bool {
        self.g.edge_labelled()
    }
    /// `g`'s label groups, of the common version as every list here. An
    /// endpoint's common list is its old list, less the other endpoint
    /// when the edge is deleted, so a group of its old list that lacks the
    /// other endpoint serves as is: `g` may hold such a group (a hub's
    /// committed groups) where it would filter the staged list until it
    /// has been read a few times (`HubLabelGroups`).
    fn has_label_groups(&self) -> bool {
        self.g.has_label_groups()
    }
    #[inline]
    fn nbrs_with_label(
        &self,
        v: VertexId,
        _ver: Version,
        label: Label,
        elabel: Option<Label>,
    ) -> Option<LabelGroup<'_>> {
        if v == self.x || v == self.y {
            let other = if v == self.x { self.y } else { self.x };
            let old = self.g.nbrs_with_label(v, Version::Old, label, elabel);
            if let Some(group) = old.filter(|group| group.list.find(other).is_none()) {
                return Some(group);
            }
        }
        self.g.nbrs_with_label(v, Version::Common, label, elabel)
    }
    fn max_degree(&self) -> usize {
        self.g.max_degree()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Edge, LocatedUpdate, Update};
    use crate::{DynamicGraph, GraphData, Strictness};

    fn graph() -> DynamicGraph {
        let g = GraphData {
            labels: vec![0; 5],
            edges: [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (0, 4)]
                .iter()
                .map(|&(u, v)| Edge { u, v, label: 0 })
                .collect(),
            edge_labelled: false,
        };
        DynamicGraph::from_data(&g).unwrap()
    }

    fn at(update: Update) -> LocatedUpdate {
        LocatedUpdate { line: 1, update }
    }

    fn lists(v: &impl GraphView) -> Vec<Vec<VertexId>> {
        (0..v.num_vertices() as VertexId)
            .map(|x| {
                let l = v.nbrs(x, Version::New);
                assert!(l.is_plain(), "list of {x} is not plain");
                l.iter().map(|p| p.0).collect()
            })
            .collect()
    }

    #[test]
    fn deleted_edge_is_absent_and_lists_are_plain() {
        let mut g = graph();
        g.stage(
            &[at(Update::RemoveEdge(Edge { u: 0, v: 2, label: 0 }))],
            "t",
            Strictness::Strict,
        )
        .unwrap();
        let v = CommonView::new(&g, 0, 2);
        assert_eq!(
            lists(&v),
            vec![vec![1, 4], vec![0, 2], vec![1, 3], vec![2, 4], vec![0, 3]]
        );
    }

    #[test]
    fn inserted_edge_is_absent_and_lists_are_plain() {
        let mut g = graph();
        g.stage(
            &[at(Update::AddEdge(Edge { u: 1, v: 3, label: 0 }))],
            "t",
            Strictness::Strict,
        )
        .unwrap();
        let v = CommonView::new(&g, 1, 3);
        assert_eq!(
            lists(&v),
            vec![vec![1, 2, 4], vec![0, 2], vec![0, 1, 3], vec![2, 4], vec![0, 3]]
        );
    }

    /// Label groups read through the view equal the view's common lists
    /// filtered by label, also at the endpoints, where it may hand out a
    /// group of the old list: with a deletion whose other endpoint has the
    /// label read (the old group holds it) and without, and with an
    /// insertion.
    #[test]
    fn endpoint_label_groups_are_the_common_lists_by_label() {
        use crate::{HubLabelGroups, Hubs};
        // 0 joined to 1..=8 (labels alternate), a few more edges
        let mut edges: Vec<Edge> = (1..=8).map(|v| Edge { u: 0, v, label: 0 }).collect();
        edges.extend(
            [(1, 2), (2, 3), (3, 4), (5, 6)]
                .iter()
                .map(|&(u, v)| Edge { u, v, label: 0 }),
        );
        let data = GraphData {
            labels: (0..10).map(|v| v % 2).collect(),
            edges,
            edge_labelled: false,
        };
        for update in [
            Update::RemoveEdge(Edge { u: 0, v: 3, label: 0 }),
            Update::RemoveEdge(Edge { u: 0, v: 4, label: 0 }),
            Update::AddEdge(Edge { u: 0, v: 9, label: 0 }),
        ] {
            let mut g = DynamicGraph::from_data(&data).unwrap();
            let hubs = Hubs::of(&g, 1);
            g.stage(&[at(update)], "t", Strictness::Strict).unwrap();
            let (Update::RemoveEdge(e) | Update::AddEdge(e)) = update else {
                unreachable!()
            };
            let groups = HubLabelGroups::new(&g, &hubs, g.touched());
            let view = CommonView::new(&groups, e.u, e.v);
            for v in [e.u, e.v, 1, 2] {
                let list: Vec<(VertexId, Label)> = view.nbrs(v, Version::Common).iter().collect();
                for label in 0..2 {
                    let want: Vec<VertexId> = list
                        .iter()
                        .filter(|p| data.labels[p.0 as usize] == label)
                        .map(|p| p.0)
                        .collect();
                    if let Some(group) = view.nbrs_with_label(v, Version::Common, label, None) {
                        let got: Vec<VertexId> = group.list.iter().map(|p| p.0).collect();
                        assert_eq!(got, want, "{update:?}: list of {v}, label {label}");
                    }
                }
            }
        }
    }
}
