//! [`UpdateVersions`]: the neighbour lists of a run of single-edge updates
//! applied one after another, one plain sorted list per version, so that the
//! updates of the run can be matched concurrently, each against the graph as
//! it stood at its own turn.
//!
//! This is DCSM's multi-version graph (paper 001, Sec. 1.4, Fig. 5; its
//! visibility rules are Properties 1-3 of Sec. 1.5.1) in a form that suits a CPU matcher: where DCSM keeps
//! per-edge lifetimes (ct, dt] inside shared neighbour arrays and filters
//! them while intersecting, each version here is a whole copy of the list
//! (copy on write, made when a reader first needs it), so the list a matcher
//! reads at any time is a plain sorted slice and the fast merge, galloping
//! and bitmap paths apply to every list. A copy costs one pass over the
//! previous version; the caller bounds a run's length.
//!
//! Times: update k of the run (0-based) turns the graph at time k into the
//! graph at time k + 1; time 0 is the base graph. By DCSM's Property 1 an
//! edge inserted by update k is invisible to update k's own matching and an
//! edge deleted by it is visible. Matchers that bind the changed edge to the
//! seed (as [`crate::CommonView`] serves one-edge batches) get the same
//! counts at time k and k + 1: an embedding is injective, so no other query
//! edge can map to the changed edge. [`UpdateVersions::common_time`] picks
//! the time without the changed edge, the graph G ∩ G' of that update.

use std::sync::OnceLock;

use crate::hub_groups::{Group, LazyGroup, GROUP_AFTER_READS};
use crate::types::{Edge, Label, VertexId};
use crate::view::{GraphView, LabelGroup, Nbrs, Version};

/// One endpoint's change: at `time`, `w` is added (with `label`) or removed.
#[derive(Clone, Copy, Debug)]
struct Change {
    v: VertexId,
    time: u32,
    w: VertexId,
    insert: bool,
    label: Label,
}

/// A materialised version of a list.
#[derive(Clone, Debug, Default)]
struct List {
    ids: Vec<VertexId>,
    /// Parallel to `ids` when the base graph has edge labels.
    labels: Vec<Label>,
}

/// Per-update versions of the lists a run of single-edge updates changes
/// (see the module docs), set up by [`UpdateVersions::build`] and read
/// through [`UpdateVersions::view`].
///
/// A version is copied from the previous one of its vertex the first time a
/// reader needs it (many never are: an update reads its endpoints' lists as
/// they were before it, which for a vertex that no earlier update of the run
/// touched is the base list itself), so readers on several threads build
/// versions concurrently, each once.
#[derive(Clone, Debug, Default)]
pub struct UpdateVersions {
    /// Per vertex slot: 1 + index into `chains`, or 0 when the run leaves
    /// the vertex's list alone.
    slot: Vec<u32>,
    /// Every change of the run, grouped by vertex, in time order within a
    /// vertex; change i makes version i of its vertex.
    changes: Vec<Change>,
    /// Version i of its vertex's list, once a reader has needed it.
    built: Vec<OnceLock<List>>,
    /// Version i grouped by label, once readers have asked for its groups
    /// a few times (only for vertices whose base list the base view groups:
    /// hubs).
    grouped: Vec<LazyGroup>,
    /// Per changed vertex, its range of `changes`.
    chains: Vec<(u32, u32)>,
    edge_labelled: bool,
    updates: u32,
}

impl UpdateVersions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of updates in the run.
    pub fn len(&self) -> usize {
        self.updates as usize
    }

    pub fn is_empty(&self) -> bool {
        self.updates == 0
    }

    /// List entries copied into versions so far.
    pub fn entries(&self) -> usize {
        self.built.iter().filter_map(|b| b.get()).map(|l| l.ids.len()).sum()
    }

    /// The time at which update `k` reads the graph without its changed
    /// edge (module docs).
    pub fn common_time(k: usize, insert: bool) -> u32 {
        if insert {
            k as u32
        } else {
            k as u32 + 1
        }
    }

    /// Replaces the run: `run[k]` is update k, its edge inserted (`true`) or
    /// deleted. `base` is the graph at time 0, read in [`Version::Old`]
    /// (with nothing pending its lists are plain, and so is every list a
    /// view hands out). The caller guarantees that each update is valid at
    /// its turn and that the run adds no vertex; a deletion's label is
    /// ignored. No list is copied here.
    pub fn build<G: GraphView + ?Sized>(&mut self, base: &G, run: &[(Edge, bool)]) {
        for &(a, _) in &self.chains {
            self.slot[self.changes[a as usize].v as usize] = 0;
        }
        self.edge_labelled = base.edge_labelled();
        self.updates = run.len() as u32;
        let n = base.num_vertices();
        if self.slot.len() < n {
            self.slot.resize(n, 0);
        }
        self.changes.clear();
        for (k, &(e, insert)) in run.iter().enumerate() {
            let label = if insert && self.edge_labelled { e.label } else { 0 };
            let time = k as u32 + 1;
            for (v, w) in [(e.u, e.v), (e.v, e.u)] {
                self.changes.push(Change {
                    v,
                    time,
                    w,
                    insert,
                    label,
                });
            }
        }
        // stable: each vertex's changes stay in time order
        self.changes.sort_by_key(|c| c.v);
        self.chains.clear();
        let mut a = 0;
        for cs in self.changes.chunk_by(|x, y| x.v == y.v) {
            self.chains.push((a, a + cs.len() as u32));
            self.slot[cs[0].v as usize] = self.chains.len() as u32;
            a += cs.len() as u32;
        }
        self.built.clear();
        self.built.resize_with(self.changes.len(), OnceLock::new);
        self.grouped.clear();
        self.grouped.resize_with(self.changes.len(), LazyGroup::default);
    }

    /// `base` as it stood at `time` (0 ..= [`UpdateVersions::len`]). `base`
    /// must be the graph the run was built on.
    pub fn view<'a, G: GraphView + ?Sized>(&'a self, base: &'a G, time: u32) -> VersionView<'a, G> {
        assert!(time <= self.updates, "time {time} is past the run's end");
        VersionView {
            base,
            versions: self,
            time,
        }
    }

    /// The change that made `v`'s list as it is at `time`, with the first
    /// change of `v` (indices into `changes`), if the run changed it by then.
    #[inline]
    fn version_at(&self, v: VertexId, time: u32) -> Option<(usize, usize)> {
        let c = *self.slot.get(v as usize)?;
        if c == 0 {
            return None;
        }
        let (a, b) = self.chains[c as usize - 1];
        let i = self.changes[a as usize..b as usize].partition_point(|x| x.time <= time);
        (i > 0).then(|| (a as usize, a as usize + i - 1))
    }

    /// The list of `v` at `time`, if the run changed it by then.
    #[inline]
    fn list<G: GraphView + ?Sized>(&self, base: &G, v: VertexId, time: u32) -> Option<Nbrs<'_>> {
        let (first, j) = self.version_at(v, time)?;
        Some(self.version(base, first, j))
    }

    /// Version `j` (an index into `changes`) of the vertex whose changes
    /// start at `first`, built from the previous version (or the base list)
    /// on first use.
    fn version<G: GraphView + ?Sized>(&self, base: &G, first: usize, j: usize) -> Nbrs<'_> {
        let list = self.built[j].get_or_init(|| {
            let ch = &self.changes[j];
            let prev = if j == first {
                base.nbrs(ch.v, Version::Old)
            } else {
                self.version(base, first, j - 1)
            };
            changed(prev, ch, self.edge_labelled)
        });
        let labels = if self.edge_labelled { &list.labels[..] } else { &[][..] };
        Nbrs::plain(&list.ids, labels)
    }
}

/// `prev` with `ch` applied, copied whole.
fn changed(prev: Nbrs<'_>, ch: &Change, labelled: bool) -> List {
    let mut out = List {
        ids: Vec::with_capacity(prev.len() + 1),
        labels: Vec::new(),
    };
    if prev.is_plain() {
        let ids = prev.base;
        let at = ids.partition_point(|&x| x < ch.w);
        let skip = if ch.insert { at } else { at + 1 };
        out.ids.extend_from_slice(&ids[..at]);
        if ch.insert {
            out.ids.push(ch.w);
        }
        out.ids.extend_from_slice(&ids[skip..]);
        if labelled {
            let ls = prev.base_labels;
            out.labels.reserve(ids.len() + 1);
            out.labels.extend_from_slice(&ls[..at]);
            if ch.insert {
                out.labels.push(ch.label);
            }
            out.labels.extend_from_slice(&ls[skip..]);
        }
        return out;
    }
    // a staged base list: marks read as present edges
    let mut push = |x: VertexId, l: Label| {
        out.ids.push(x);
        if labelled {
            out.labels.push(l);
        }
    };
    let mut added = !ch.insert;
    for (x, l) in prev.iter() {
        if !added && ch.w < x {
            push(ch.w, ch.label);
            added = true;
        }
        if ch.insert || x != ch.w {
            push(x, l);
        }
    }
    if !added {
        push(ch.w, ch.label);
    }
    out
}

/// The graph of an [`UpdateVersions`] run at one time: every list plain, all
/// versions equal.
pub struct VersionView<'a, G: GraphView + ?Sized> {
    base: &'a G,
    versions: &'a UpdateVersions,
    time: u32,
}

impl<G: GraphView + ?Sized> GraphView for VersionView<'_, G> {
    #[inline]
    fn num_vertices(&self) -> usize {
        self.base.num_vertices()
    }
    #[inline]
    fn labels(&self) -> &[Label] {
        self.base.labels()
    }
    #[inline]
    fn nbrs(&self, v: VertexId, _ver: Version) -> Nbrs<'_> {
        match self.versions.list(self.base, v, self.time) {
            Some(l) => l,
            None => self.base.nbrs(v, Version::Old),
        }
    }
    fn edge_labelled(&self) -> bool {
        self.base.edge_labelled()
    }
    /// The base's label groups of the lists the run has not changed by
    /// this view's time; of a list it has changed, the version of this time
    /// grouped on first use, where the base groups the list (a hub).
    fn has_label_groups(&self) -> bool {
        self.base.has_label_groups()
    }
    #[inline]
    fn nbrs_with_label(
        &self,
        v: VertexId,
        _ver: Version,
        label: Label,
        elabel: Option<Label>,
    ) -> Option<LabelGroup<'_>> {
        let Some((first, j)) = self.versions.version_at(v, self.time) else {
            return self.base.nbrs_with_label(v, Version::Old, label, elabel);
        };
        let vs = self.versions;
        // group a version only once it has been read by label a few times,
        // and only of a list the base groups (a hub)
        let group = vs.grouped[j].after_reads(
            GROUP_AFTER_READS,
            || self.base.nbrs_with_label(v, Version::Old, label, elabel).is_some(),
            || {
                Group::of(
                    vs.version(self.base, first, j),
                    self.base.labels(),
                    vs.edge_labelled,
                    elabel.is_some(),
                )
            },
        )?;
        group.with_label(label, elabel)
    }
    /// The base's bound, which covers its pending version too.
    fn max_degree(&self) -> usize {
        self.base.max_degree()
    }
}

#[cfg(test)]
mod tests {
    //! Views against an independent oracle: adjacency sets updated one
    //! update at a time.
    use super::*;
    use crate::types::{GraphData, LocatedUpdate, Update};
    use crate::{DynamicGraph, Strictness};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    type Adj = Vec<BTreeMap<VertexId, Label>>;

    fn adjacency(n: usize, edges: &[Edge]) -> Adj {
        let mut a = vec![BTreeMap::new(); n];
        for &e in edges {
            apply(&mut a, e, true);
        }
        a
    }

    /// Inserts (`ins`) or removes `e` in both directions of `a`.
    fn apply(a: &mut Adj, e: Edge, ins: bool) {
        for (x, y) in [(e.u, e.v), (e.v, e.u)] {
            if ins {
                a[x as usize].insert(y, e.label);
            } else {
                a[x as usize].remove(&y);
            }
        }
    }

    /// `v`'s list; every list must be plain when the base has nothing pending.
    fn list_of(g: &impl GraphView, v: VertexId) -> Vec<(VertexId, Label)> {
        list_in(g, v, true)
    }

    fn list_in(g: &impl GraphView, v: VertexId, plain: bool) -> Vec<(VertexId, Label)> {
        let l = g.nbrs(v, Version::New);
        assert!(!plain || l.is_plain());
        l.to_vec()
    }

    /// A random graph on `n` vertices and a run of updates on distinct
    /// vertex pairs, each valid at its turn.
    fn case(n: usize, seed_edges: &[(u8, u8, u8)], ops: &[(u8, u8, u8)]) -> (GraphData, Vec<(Edge, bool)>) {
        let mut present = BTreeMap::new();
        for &(a, b, l) in seed_edges {
            let (a, b) = (a as u32 % n as u32, b as u32 % n as u32);
            if a != b {
                present.insert((a.min(b), a.max(b)), l as u32 % 3);
            }
        }
        let g = GraphData {
            labels: vec![0; n],
            edges: present.iter().map(|(&(u, v), &l)| Edge::new(u, v, l)).collect(),
            edge_labelled: true,
        };
        let mut used = BTreeSet::new();
        let mut run = Vec::new();
        for &(a, b, l) in ops {
            let (a, b) = (a as u32 % n as u32, b as u32 % n as u32);
            let key = (a.min(b), a.max(b));
            if a == b || !used.insert(key) {
                continue;
            }
            // a deletion names the edge's label
            let (label, insert) = match present.get(&key) {
                Some(&l) => (l, false),
                None => (l as u32 % 3, true),
            };
            run.push((Edge::new(a, b, label), insert));
        }
        (g, run)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn every_time_sees_the_graph_after_that_many_updates(
            n in 2usize..12,
            seed_edges in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..40),
            ops in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..20),
            staged in any::<bool>(),
        ) {
            let (data, run) = case(n, &seed_edges, &ops);
            let mut g = DynamicGraph::from_data(&data).unwrap();
            if staged {
                // the whole run staged: marks and appended entries in the base
                let ups: Vec<LocatedUpdate> = run
                    .iter()
                    .map(|&(e, ins)| LocatedUpdate {
                        line: 1,
                        update: if ins { Update::AddEdge(e) } else { Update::RemoveEdge(e) },
                    })
                    .collect();
                g.stage(&ups, "t", Strictness::Strict).unwrap();
            }
            let mut vs = UpdateVersions::new();
            vs.build(&g, &run);
            let mut oracle = adjacency(n, &data.edges);
            for t in 0..=run.len() {
                let view = vs.view(&g, t as u32);
                for v in 0..n as VertexId {
                    let want: Vec<_> = oracle[v as usize].iter().map(|(&x, &l)| (x, l)).collect();
                    prop_assert_eq!(list_in(&view, v, !staged), want, "vertex {} at time {}", v, t);
                }
                if let Some(&(e, ins)) = run.get(t) {
                    apply(&mut oracle, e, ins);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]
        /// Label groups through a view over [`crate::HubLabelGroups`]: the
        /// base's groups for lists the run has not changed yet, grouped
        /// versions (after a few reads) for those it has; every answer
        /// equals the oracle's list at that time filtered by label (and by
        /// edge label when read by both, `by_el`).
        #[test]
        fn label_groups_at_every_time_equal_filtered_lists(
            n in 2usize..12,
            seed_edges in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..40),
            ops in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..20),
            by_el in any::<bool>(),
        ) {
            let (mut data, run) = case(n, &seed_edges, &ops);
            for (v, l) in data.labels.iter_mut().enumerate() {
                *l = v as Label % 3;
            }
            let g = DynamicGraph::from_data(&data).unwrap();
            let hubs = crate::Hubs::of(&g, 1);
            let base = crate::HubLabelGroups::new(&g, &hubs, &[]);
            let mut vs = UpdateVersions::new();
            vs.build(&base, &run);
            let mut oracle = adjacency(n, &data.edges);
            for t in 0..=run.len() {
                let view = vs.view(&base, t as u32);
                for v in 0..n as VertexId {
                    for (l, e) in (0..3).flat_map(|l| (0..3).map(move |e| (l, by_el.then_some(e)))) {
                        let want: Vec<_> = oracle[v as usize]
                            .iter()
                            .filter(|(&x, &el)| x as Label % 3 == l && e.is_none_or(|e| e == el))
                            .map(|(&x, &el)| (x, el))
                            .collect();
                        for _ in 0..=GROUP_AFTER_READS + 1 {
                            if let Some(got) = view.nbrs_with_label(v, Version::New, l, e) {
                                prop_assert_eq!(got.elabel_applied, by_el);
                                prop_assert_eq!(got.list.to_vec(), want.clone(), "vertex {} label {} {:?} at time {}", v, l, e, t);
                            }
                        }
                    }
                }
                if let Some(&(e, ins)) = run.get(t) {
                    apply(&mut oracle, e, ins);
                }
            }
        }
    }

    #[test]
    fn a_new_run_forgets_the_previous_one() {
        let data = GraphData {
            labels: vec![0; 3],
            edges: vec![Edge::new(0, 1, 0)],
            edge_labelled: false,
        };
        let g = DynamicGraph::from_data(&data).unwrap();
        let mut vs = UpdateVersions::new();
        vs.build(&g, &[(Edge::new(1, 2, 0), true)]);
        assert_eq!(list_of(&vs.view(&g, 1), 1), vec![(0, 0), (2, 0)]);
        assert_eq!(list_of(&vs.view(&g, 1), 2), vec![(1, 0)]);
        vs.build(&g, &[(Edge::new(0, 1, 0), false)]);
        assert_eq!(list_of(&vs.view(&g, 0), 1), vec![(0, 0)]);
        assert_eq!(list_of(&vs.view(&g, 1), 1), Vec::<(VertexId, Label)>::new());
        assert_eq!(list_of(&vs.view(&g, 1), 2), Vec::<(VertexId, Label)>::new());
        assert_eq!(vs.entries(), 0);
    }
}
