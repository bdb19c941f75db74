//! [`HubLabelGroups`]: label groups ([`GraphView::nbrs_with_label`]) for the
//! high-degree lists of any view, built lazily for one batch.
//!
//! A [`crate::DynamicGraph`] keeps its lists sorted by id (GCSM Fig. 5), so a
//! matcher that needs the neighbours of one label intersects whole lists and
//! filters afterwards. Most of that work is in the hubs' lists, which a batch
//! reads over and over. This view groups a hub's list by label (for the
//! version asked: N, N ∩ N' or N') the first time a reader asks for one of
//! its groups during the batch (for the versions N ∩ N' and N' of a hub that
//! a small batch changes, after [`GROUP_AFTER_READS`] reads, since one
//! update may read them once or twice) and serves later reads from that
//! copy; other lists get `None`, and readers fall back to filtering. An intersection with
//! one group holds only that label, so it needs no filter even when its other
//! lists were whole.
//!
//! Which vertices count as hubs is kept across batches in [`Hubs`] (degree at
//! least a bound, refreshed from each batch's touched vertices), with each
//! hub's groups of its committed list (version `Old`; also `Common` and
//! `New` for hubs the batch does not touch), which stay valid until a batch
//! touches the hub. The groups of a touched hub's `Common` and `New` lists
//! live for one batch.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use foldhash::fast::FixedState;

use crate::types::{Label, VertexId, ABSENT};
use crate::view::{GraphView, Nbrs, Version};

/// Reads by label after which a changed hub list's version is grouped: a
/// version read only a few times is cheaper to filter than to group (one
/// update at a time regrouped a touched hub's whole list for one or two
/// reads).
pub(crate) const GROUP_AFTER_READS: u32 = 8;

/// Batches touching at most this many lists wait [`GROUP_AFTER_READS`]
/// reads before grouping a touched hub's version.
const FEW_TOUCHED: usize = 16;

/// A list version's groups, built once the version has been read by label
/// often enough: its reads so far, and the groups once built. Touched hubs
/// here and changed lists in [`crate::UpdateVersions`] keep one each.
#[derive(Debug, Default)]
pub(crate) struct LazyGroup {
    reads: AtomicU32,
    group: OnceLock<Group>,
}

impl Clone for LazyGroup {
    fn clone(&self) -> Self {
        LazyGroup {
            reads: AtomicU32::new(self.reads.load(Ordering::Relaxed)),
            group: self.group.clone(),
        }
    }
}

impl LazyGroup {
    /// The groups, if built; else counts a read and, past the first
    /// `after` reads and if `groupable`, builds them with `build` (once:
    /// concurrent readers wait for it).
    pub(crate) fn after_reads(
        &self,
        after: u32,
        groupable: impl FnOnce() -> bool,
        build: impl FnOnce() -> Group,
    ) -> Option<&Group> {
        if let Some(group) = self.group.get() {
            return Some(group);
        }
        if self.reads.fetch_add(1, Ordering::Relaxed) < after || !groupable() {
            return None;
        }
        Some(self.group.get_or_init(build))
    }

    /// The groups, if built.
    fn built(&self) -> Option<&Group> {
        self.group.get()
    }
}

/// The vertices whose lists [`HubLabelGroups`] groups: degree at least
/// `min_degree` when last seen (a vertex leaves when its degree falls below
/// half the bound, so that vertices near it do not flip every batch).
///
/// Whoever changes the graph must call [`Hubs::update`] with every vertex
/// whose list changed before the change commits: that drops the hub's
/// committed groups, which would otherwise be stale.
#[derive(Clone, Debug)]
pub struct Hubs {
    min_degree: usize,
    slot: HashMap<VertexId, u32, FixedState>,
    list: Vec<VertexId>,
    /// Per slot: the groups of the hub's committed list, built on first use.
    committed: Vec<OnceLock<Group>>,
}

impl Default for Hubs {
    /// No hubs: views built on it group nothing.
    fn default() -> Self {
        Hubs {
            min_degree: usize::MAX,
            slot: HashMap::default(),
            list: Vec::new(),
            committed: Vec::new(),
        }
    }
}

impl Hubs {
    /// The hubs of `g` (in version `New`).
    pub fn of<G: GraphView + ?Sized>(g: &G, min_degree: usize) -> Self {
        let mut hubs = Hubs {
            min_degree: min_degree.max(1),
            ..Hubs::default()
        };
        let labels = g.labels();
        for v in 0..g.num_vertices() as VertexId {
            if labels[v as usize] != ABSENT && g.nbrs(v, Version::New).len() >= hubs.min_degree {
                hubs.insert(v);
            }
        }
        hubs
    }

    /// Re-checks `touched` vertices against `g` (in version `New`), e.g. the
    /// lists a batch changed, before it commits.
    pub fn update<G: GraphView + ?Sized>(&mut self, g: &G, touched: &[VertexId]) {
        let labels = g.labels();
        for &v in touched {
            let live = (v as usize) < labels.len() && labels[v as usize] != ABSENT;
            let d = if live { g.nbrs(v, Version::New).len() } else { 0 };
            if let Some(&i) = self.slot.get(&v) {
                self.committed[i as usize] = OnceLock::new();
            }
            if d >= self.min_degree {
                self.insert(v);
            } else if d < self.min_degree / 2 {
                self.remove(v);
            }
        }
    }

    /// Takes the groups of version `New` that a batch's view built
    /// ([`HubLabelGroups::into_new_groups`]) as the hubs' committed groups:
    /// they are exactly that once the batch commits, so those lists are not
    /// grouped again on their next read. Call after [`Hubs::update`],
    /// before the commit.
    pub fn adopt(&mut self, groups: NewGroups) {
        for (v, group) in groups.0 {
            if let Some(&i) = self.slot.get(&v) {
                self.committed[i as usize] = OnceLock::from(group);
            }
        }
    }

    fn insert(&mut self, v: VertexId) {
        if !self.slot.contains_key(&v) {
            self.slot.insert(v, self.list.len() as u32);
            self.list.push(v);
            self.committed.push(OnceLock::new());
        }
    }

    fn remove(&mut self, v: VertexId) {
        if let Some(i) = self.slot.remove(&v) {
            self.list.swap_remove(i as usize);
            self.committed.swap_remove(i as usize);
            if let Some(&moved) = self.list.get(i as usize) {
                self.slot.insert(moved, i);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The hubs, in no particular order.
    pub fn vertices(&self) -> &[VertexId] {
        &self.list
    }

    pub fn min_degree(&self) -> usize {
        self.min_degree
    }
}

/// The version-`New` groups a batch's [`HubLabelGroups`] built, for
/// [`Hubs::adopt`].
#[derive(Debug, Default)]
pub struct NewGroups(Vec<(VertexId, Group)>);

/// One list grouped by neighbour label: ids ascending within a group.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    ids: Vec<VertexId>,
    /// Each label present, ascending, with the index of its first entry
    /// (a group ends where the next begins): a lookup searches the few
    /// labels, not the entries.
    starts: Vec<(Label, u32)>,
    elabels: Vec<Label>,
}

impl Group {
    /// Labels below this are grouped by a counting sort (linear; the list
    /// comes in id order, so a stable scatter keeps ids ascending within a
    /// group); larger ones by sorting (label, id) pairs.
    const COUNTING_LABELS: usize = 1 << 12;

    pub(crate) fn of(list: Nbrs<'_>, labels: &[Label], edge_labelled: bool) -> Group {
        let n = list.len();
        let (mut ids, mut keys, mut els) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
        if edge_labelled {
            els.reserve(n);
        }
        for (x, el) in list.iter() {
            ids.push(x);
            keys.push(labels[x as usize]);
            if edge_labelled {
                els.push(el);
            }
        }
        match keys.iter().max() {
            Some(&m) if (m as usize) < Self::COUNTING_LABELS => Self::by_counting(&ids, &keys, &els, m as usize + 1),
            _ => Self::by_sorting(ids, keys, els),
        }
    }

    /// Stable counting sort of id-ordered entries by their `keys`, all
    /// below `range`.
    fn by_counting(ids: &[VertexId], keys: &[Label], els: &[Label], range: usize) -> Group {
        let mut start = vec![0usize; range + 1];
        for &k in keys {
            start[k as usize + 1] += 1;
        }
        for i in 1..=range {
            start[i] += start[i - 1];
        }
        let n = ids.len();
        let mut out = Group {
            ids: vec![0; n],
            starts: (0..range)
                .filter(|&k| start[k + 1] > start[k])
                .map(|k| (k as Label, start[k] as u32))
                .collect(),
            elabels: vec![0; els.len()],
        };
        let mut at = start;
        for (i, (&x, &k)) in ids.iter().zip(keys).enumerate() {
            let slot = &mut at[k as usize];
            out.ids[*slot] = x;
            if !els.is_empty() {
                out.elabels[*slot] = els[i];
            }
            *slot += 1;
        }
        out
    }

    fn by_sorting(ids: Vec<VertexId>, keys: Vec<Label>, els: Vec<Label>) -> Group {
        let mut order: Vec<(Label, VertexId, u32)> = (0..ids.len()).map(|i| (keys[i], ids[i], i as u32)).collect();
        order.sort_unstable();
        let mut starts: Vec<(Label, u32)> = Vec::new();
        for (i, e) in order.iter().enumerate() {
            if starts.last().is_none_or(|s| s.0 != e.0) {
                starts.push((e.0, i as u32));
            }
        }
        Group {
            ids: order.iter().map(|e| e.1).collect(),
            starts,
            elabels: if els.is_empty() {
                Vec::new()
            } else {
                order.iter().map(|e| els[e.2 as usize]).collect()
            },
        }
    }

    pub(crate) fn with_label(&self, label: Label) -> Nbrs<'_> {
        let k = self.starts.partition_point(|s| s.0 < label);
        let (lo, hi) = match self.starts.get(k) {
            Some(&(l, lo)) if l == label => {
                let hi = self.starts.get(k + 1).map_or(self.ids.len(), |s| s.1 as usize);
                (lo as usize, hi)
            }
            _ => (0, 0),
        };
        let el = if self.elabels.is_empty() {
            &[][..]
        } else {
            &self.elabels[lo..hi]
        };
        Nbrs::plain(&self.ids[lo..hi], el)
    }
}

/// A view of `g` whose hubs' lists can be read one label at a time (see the
/// module docs); everything else is `g`'s. Build one per batch, after
/// staging: the groups copy the lists as they are then.
pub struct HubLabelGroups<'a, G: ?Sized> {
    g: &'a G,
    hubs: &'a Hubs,
    /// The groups of the lists in versions Common and New of the hubs this
    /// batch touches, built after `group_after` reads.
    groups: HashMap<VertexId, [LazyGroup; 2], FixedState>,
    /// [`GROUP_AFTER_READS`] for a batch that touches a few lists (one or a
    /// few updates: their reads are few), else 0 (a large batch reads its
    /// touched hubs over and over: filtering the first reads cost house on
    /// Enron's 4,096-update batches 30%).
    group_after: u32,
}

impl<'a, G: GraphView + ?Sized> HubLabelGroups<'a, G> {
    /// `touched`: the vertices whose lists the pending batch changes (none
    /// when nothing is pending); their committed groups serve version `Old`
    /// only.
    pub fn new(g: &'a G, hubs: &'a Hubs, touched: &[VertexId]) -> Self {
        let groups = if hubs.is_empty() {
            HashMap::default()
        } else {
            touched
                .iter()
                .filter(|v| hubs.slot.contains_key(v))
                .map(|&v| (v, Default::default()))
                .collect()
        };
        let group_after = if touched.len() <= FEW_TOUCHED {
            GROUP_AFTER_READS
        } else {
            0
        };
        HubLabelGroups {
            g,
            hubs,
            groups,
            group_after,
        }
    }

    /// The groups of version `New` built so far, for [`Hubs::adopt`].
    pub fn into_new_groups(self) -> NewGroups {
        NewGroups(
            self.groups
                .into_iter()
                .filter_map(|(v, [_, new])| new.group.into_inner().map(|g| (v, g)))
                .collect(),
        )
    }

    /// How many hub lists have been grouped so far for this batch (versions
    /// Common and New of touched hubs).
    pub fn grouped(&self) -> usize {
        self.groups.values().flatten().filter(|t| t.built().is_some()).count()
    }
}

impl<G: GraphView + ?Sized> GraphView for HubLabelGroups<'_, G> {
    forward_whole_lists!(g);
    fn has_label_groups(&self) -> bool {
        !self.hubs.is_empty()
    }
    #[inline]
    fn nbrs_with_label(&self, v: VertexId, ver: Version, label: Label) -> Option<Nbrs<'_>> {
        let slot = *self.hubs.slot.get(&v)? as usize;
        let (g, labels, el) = (self.g, self.g.labels(), self.g.edge_labelled());
        let group = match (ver, self.groups.get(&v)) {
            (Version::Common | Version::New, Some(versions)) => versions[usize::from(ver == Version::New)]
                .after_reads(self.group_after, || true, || Group::of(g.nbrs(v, ver), labels, el))?,
            _ => self.hubs.committed[slot].get_or_init(|| Group::of(g.nbrs(v, Version::Old), labels, el)),
        };
        Some(group.with_label(label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{assign_labels, graph_from_pairs, rmat, Labeller};
    use crate::types::{Edge, LocatedUpdate, Update};
    use crate::{DynamicGraph, Strictness};

    /// Every version's groups of every hub equal the whole list filtered by
    /// label, while batches that insert and delete are pending, over several
    /// batches (committed groups must be dropped when a batch touches a hub).
    #[test]
    fn hub_groups_equal_filtered_lists_of_every_version() {
        hub_groups_follow_filtered_lists(1);
    }

    /// A batch of one update: its touched hub's new version is filtered by
    /// the reader (`None`) for the first reads, then grouped, and the group
    /// equals the filtered list; untouched hubs are grouped at once.
    #[test]
    fn a_small_batch_groups_its_touched_hub_after_some_reads() {
        // vertex 0 is a hub joined to 1..40 (labels alternate), 41 is alone
        let n = 42;
        let labels: Vec<Label> = (0..n).map(|v| v as Label % 2).collect();
        let pairs: Vec<(VertexId, VertexId)> = (1..40).map(|v| (0, v)).chain([(1, 2)]).collect();
        let g = graph_from_pairs(n, &pairs, labels, None);
        let mut dg = DynamicGraph::from_data(&g).unwrap();
        let hubs = Hubs::of(&dg, 8);
        let add = [LocatedUpdate {
            line: 1,
            update: Update::AddEdge(Edge::new(0, 41, 0)),
        }];
        dg.stage(&add, "<test>", Strictness::Strict).unwrap();
        let view = HubLabelGroups::new(&dg, &hubs, dg.touched());
        let want: Vec<VertexId> = dg
            .nbrs(0, Version::New)
            .iter()
            .map(|p| p.0)
            .filter(|v| v % 2 == 1)
            .collect();
        for _ in 0..GROUP_AFTER_READS {
            assert!(view.nbrs_with_label(0, Version::New, 1).is_none());
        }
        let got = view
            .nbrs_with_label(0, Version::New, 1)
            .expect("grouped after the reads");
        assert_eq!(got.iter().map(|p| p.0).collect::<Vec<_>>(), want);
        assert!(want.contains(&41));
        // the committed list (version Old) is grouped at first read
        assert!(view.nbrs_with_label(0, Version::Old, 1).is_some());
    }

    /// The same with labels too large for the counting sort.
    #[test]
    fn hub_groups_with_large_labels_equal_filtered_lists() {
        const { assert!(Group::COUNTING_LABELS < 1_000_003) };
        hub_groups_follow_filtered_lists(1_000_003);
    }

    /// Vertex labels are `scale` times 0..4.
    fn hub_groups_follow_filtered_lists(scale: Label) {
        let n = 1 << 9;
        let labels: Vec<Label> = assign_labels(n, &Labeller::Uniform { num_labels: 4, seed: 3 })
            .into_iter()
            .map(|l| l * scale)
            .collect();
        let pairs = rmat(9, 3_000, 0.57, 0.19, 0.19, 3);
        let g = graph_from_pairs(n, &pairs, labels, Some((3, 5)));
        let mut dg = DynamicGraph::from_data(&g).unwrap();
        let mut hubs = Hubs::of(&dg, 20);
        assert!(hubs.len() > 3 && hubs.len() < n / 4, "{} hubs", hubs.len());
        let mut grouped = 0;
        for round in 0..4 {
            // delete an edge of each of some hubs, insert edges between hubs
            let h = hubs.vertices().to_vec();
            let mut updates: Vec<Update> = Vec::new();
            let mut used = std::collections::HashSet::new();
            for (i, &v) in h.iter().enumerate().skip(round).take(5) {
                let (x, el) = dg.nbrs(v, Version::New).iter().nth(round).unwrap();
                if used.insert((v.min(x), v.max(x))) {
                    updates.push(Update::RemoveEdge(Edge::new(v, x, el)));
                }
                let w = h[(i + 1 + round) % h.len()];
                if w != v && !dg.nbrs(v, Version::New).contains(w) && used.insert((v.min(w), v.max(w))) {
                    updates.push(Update::AddEdge(Edge::new(v, w, 1)));
                }
            }
            let located: Vec<LocatedUpdate> = updates
                .into_iter()
                .enumerate()
                .map(|(i, update)| LocatedUpdate { line: i + 1, update })
                .collect();
            dg.stage(&located, "<test>", Strictness::Strict).unwrap();
            let view = HubLabelGroups::new(&dg, &hubs, dg.touched());
            for v in 0..n as VertexId {
                for ver in [Version::Old, Version::Common, Version::New] {
                    // a touched hub's Common and New versions are grouped
                    // after GROUP_AFTER_READS reads: read every label that often
                    let touched = dg.touched().contains(&v) && ver != Version::Old;
                    for _ in 0..=GROUP_AFTER_READS {
                        for l in (0..5).map(|l| l * scale) {
                            let got = view.nbrs_with_label(v, ver, l).map(|x| x.to_vec());
                            let want: Vec<_> = dg
                                .nbrs(v, ver)
                                .iter()
                                .filter(|&(x, _)| dg.labels()[x as usize] == l)
                                .collect();
                            match got {
                                Some(got) => assert_eq!(got, want, "round {round} vertex {v} {ver:?} label {l}"),
                                None => assert!(!hubs.slot.contains_key(&v) || touched),
                            }
                        }
                    }
                    if touched && hubs.slot.contains_key(&v) {
                        // grouped by now
                        assert!(view.nbrs_with_label(v, ver, 0).is_some());
                    }
                }
            }
            grouped += view.grouped();
            // every other round, the new lists' groups become the committed ones
            let built = view.into_new_groups();
            hubs.update(&dg, dg.touched());
            if round % 2 == 0 {
                hubs.adopt(built);
            }
            dg.commit();
        }
        assert!(grouped > 0);
    }

    /// Hubs join at the bound and leave below half of it.
    #[test]
    fn hubs_follow_degrees_with_hysteresis() {
        let n = 64;
        let pairs: Vec<(u32, u32)> = (1..40).map(|v| (0, v)).collect();
        let g = graph_from_pairs(n, &pairs, vec![0; n], None);
        let mut dg = DynamicGraph::from_data(&g).unwrap();
        let mut hubs = Hubs::of(&dg, 30);
        assert_eq!(hubs.vertices(), &[0]);
        // 0 drops to 20 neighbours: between half the bound and the bound
        let del = |vs: std::ops::Range<u32>| -> Vec<LocatedUpdate> {
            vs.map(|v| LocatedUpdate {
                line: v as usize,
                update: Update::RemoveEdge(Edge::new(0, v, 0)),
            })
            .collect()
        };
        let del1 = del(1..20);
        dg.stage(&del1, "<test>", Strictness::Strict).unwrap();
        hubs.update(&dg, dg.touched());
        dg.commit();
        assert_eq!(hubs.vertices(), &[0]);
        dg.stage(&del(20..30), "<test>", Strictness::Strict).unwrap();
        hubs.update(&dg, dg.touched());
        dg.commit();
        assert!(hubs.is_empty());
    }
}
