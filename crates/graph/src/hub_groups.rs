//! [`HubLabelGroups`]: label groups ([`GraphView::nbrs_with_label`]) for the
//! high-degree lists of any view, built lazily for one batch.
//!
//! A [`crate::DynamicGraph`] keeps its lists sorted by id (GCSM Fig. 5), so a
//! matcher that needs the neighbours of one label intersects whole lists and
//! filters afterwards. Most of that work is in the hubs' lists, which a batch
//! reads over and over. This view groups a hub's list by label (for the
//! version asked: N, N ∩ N' or N') once readers have asked for its groups a
//! few times (a grouping costs some twenty filtered reads of the list, and
//! most lists of a light batch are read once or twice) and serves later
//! reads from that copy; until then, and for other lists, it gives `None`,
//! and readers fall back to filtering. An intersection with one group holds
//! only that label, so it needs no filter even when its other lists were
//! whole.
//!
//! Which vertices count as hubs is kept across batches in [`Hubs`] (degree at
//! least a bound, refreshed from each batch's touched vertices), with each
//! hub's groups of its committed list (version `Old`; also `Common` and
//! `New` for hubs the batch does not touch), built after
//! `COMMITTED_GROUP_AFTER_READS` (8) reads over batches, which stay valid
//! until a batch touches the hub. The groups of a touched hub's `Common` and
//! `New` lists live for one batch: built after `GROUP_AFTER_READS` (8) reads
//! in a batch of a few updates, `BATCH_GROUP_AFTER_READS` (2) in larger
//! ones, and derived from the hub's committed groups and the batch's
//! changes at it when those groups are built and the view has the batch's
//! delta ([`HubLabelGroups::with_delta`]; a linear merge, not a regrouping).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use foldhash::fast::FixedState;

use crate::dynamic::BatchDelta;
use crate::types::{Label, VertexId, ABSENT};
use crate::view::{GraphView, LabelGroup, Nbrs, Version};

/// Reads by label after which a changed hub list's version is grouped: a
/// version read only a few times is cheaper to filter than to group (one
/// update at a time regrouped a touched hub's whole list for one or two
/// reads).
pub(crate) const GROUP_AFTER_READS: u32 = 8;

/// Reads by label after which a touched hub's version is grouped in a batch
/// that touches many lists. Those are read more often than a few updates'
/// lists, and a hub of a skewed graph over and over (grouping after 8 reads
/// cost Graph500-skewed house a fifth), but most of a light batch's touched
/// lists only once or twice: grouping them at the first read was most of a
/// 1,024-update batch's time on a 20 M-edge R-MAT (7-wheel, 2.5x with the
/// rule at 2; `csm-gpu-bench --split`, 2 threads).
const BATCH_GROUP_AFTER_READS: u32 = 2;

/// Reads by label (over batches) after which a hub's committed list is
/// grouped: a hub read once or twice before a batch touches it again does
/// not repay a grouping (light batches on a 20 M-edge R-MAT grouped tens of
/// thousands of such entries each); the many reads of a skewed graph's
/// hubs reach it at once.
const COMMITTED_GROUP_AFTER_READS: u32 = 8;

/// Edge changes at one hub up to which [`Hubs::update`] patches its
/// committed groups instead of dropping them.
const PATCH_MAX: usize = 8;

/// The least budget of [`Hubs`]' committed groups (list entries), for
/// small graphs.
const MIN_GROUP_BUDGET: usize = 1 << 16;

/// [`Hubs`]' slot of a vertex that is not a hub.
const NO_SLOT: u32 = u32::MAX;

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
/// half the bound, so that vertices near it do not flip every batch). Views
/// of large batches group only hubs of degree `batch_min_degree` or more
/// ([`Hubs::with_batch_min_degree`]): such a batch regroups every hub it
/// touches, which repays itself only on long lists.
///
/// Whoever changes the graph must call [`Hubs::update`] with every vertex
/// whose list changed before the change commits: that drops the hub's
/// committed groups, which would otherwise be stale.
#[derive(Debug)]
pub struct Hubs {
    min_degree: usize,
    batch_min_degree: usize,
    /// Per vertex id: its slot in `list`, or [`NO_SLOT`] (a dense array:
    /// a lookup per list read, which a hash map made a tenth of a labelled
    /// run).
    slot: Vec<u32>,
    list: Vec<VertexId>,
    /// Per slot: the hub's degree and committed groups, side by side (a
    /// list read checks the one and then takes the other: one cache miss
    /// instead of two, a fifth of the lookup's stalls in a profile).
    slots: Vec<HubSlot>,
    /// List entries held by built committed groups, and the most they may
    /// hold (the graph's list entries when the hubs were found): a group
    /// beyond it is not built and its reads filter the whole list, so that
    /// groups at most double the memory of the graph's lists (a budget of
    /// half that slowed edge-labelled 6-vertex queries by a third).
    grouped: AtomicUsize,
    budget: usize,
}

/// One hub's state ([`Hubs::slots`]).
#[derive(Debug)]
struct HubSlot {
    /// The hub's degree when last seen.
    degree: u32,
    /// Reads by label of the committed list while its groups were not
    /// built, over batches ([`COMMITTED_GROUP_AFTER_READS`]).
    reads: AtomicU32,
    /// The groups of the hub's committed list, built on first use (boxed:
    /// 16 bytes a hub until built, for graphs of many hubs).
    committed: OnceLock<Box<Group>>,
}

impl Clone for HubSlot {
    fn clone(&self) -> Self {
        HubSlot {
            degree: self.degree,
            reads: AtomicU32::new(self.reads.load(Ordering::Relaxed)),
            committed: self.committed.clone(),
        }
    }
}

impl Clone for Hubs {
    fn clone(&self) -> Self {
        Hubs {
            min_degree: self.min_degree,
            batch_min_degree: self.batch_min_degree,
            slot: self.slot.clone(),
            list: self.list.clone(),
            slots: self.slots.clone(),
            grouped: AtomicUsize::new(self.grouped.load(Ordering::Relaxed)),
            budget: self.budget,
        }
    }
}

impl Default for Hubs {
    /// No hubs: views built on it group nothing.
    fn default() -> Self {
        Hubs {
            min_degree: usize::MAX,
            batch_min_degree: usize::MAX,
            slot: Vec::new(),
            list: Vec::new(),
            slots: Vec::new(),
            grouped: AtomicUsize::new(0),
            budget: 0,
        }
    }
}

impl Hubs {
    /// The hubs of `g` (in version `New`).
    pub fn of<G: GraphView + ?Sized>(g: &G, min_degree: usize) -> Self {
        let mut hubs = Hubs {
            min_degree: min_degree.max(1),
            batch_min_degree: min_degree.max(1),
            ..Hubs::default()
        };
        let labels = g.labels();
        let mut entries = 0;
        for v in 0..g.num_vertices() as VertexId {
            let d = g.nbrs(v, Version::New).len();
            entries += d;
            if labels[v as usize] != ABSENT && d >= hubs.min_degree {
                hubs.insert(v, d);
            }
        }
        hubs.budget = entries.max(MIN_GROUP_BUDGET);
        hubs
    }

    /// Re-checks `touched` vertices against `g` (in version `New`), e.g. the
    /// lists a batch changed, before it commits. A touched hub's committed
    /// groups are dropped, or, given the batch's `delta` and when the batch
    /// only changes edges, a few of them on this hub, patched in place
    /// (`PATCH_MAX`): one update at a time used to regroup each touched
    /// hub's whole list on its next read (a tenth of a labelled run).
    pub fn update<G: GraphView + ?Sized>(&mut self, g: &G, touched: &[VertexId], delta: Option<&BatchDelta>) {
        let labels = g.labels();
        let built = |v: VertexId| self.slot_of(v).is_some_and(|i| self.slots[i].committed.get().is_some());
        // None: drop every touched hub's groups
        let patches = delta.and_then(|d| edge_changes_at(d, built));
        for &v in touched {
            let live = (v as usize) < labels.len() && labels[v as usize] != ABSENT;
            let d = if live { g.nbrs(v, Version::New).len() } else { 0 };
            if let Some(i) = self.slot_of(v) {
                let changes = patches.as_deref().map(|ps| {
                    let lo = ps.partition_point(|p| p.0 < v);
                    &ps[lo..lo + ps[lo..].partition_point(|p| p.0 == v)]
                });
                let patched = changes.is_some_and(|c| c.len() <= PATCH_MAX)
                    && self.slots[i].committed.get_mut().is_some_and(|group| {
                        changes
                            .into_iter()
                            .flatten()
                            .all(|(_, c)| group.patch(c.x, labels[c.x as usize], c.el, c.inserted))
                    });
                if patched {
                    // the budget follows the patched group's size
                    let (added, removed) =
                        changes
                            .into_iter()
                            .flatten()
                            .fold((0, 0), |(a, r), c| if c.1.inserted { (a + 1, r) } else { (a, r + 1) });
                    let used = self.grouped.get_mut();
                    *used = (*used + added).saturating_sub(removed);
                } else {
                    self.drop_committed(i);
                }
            }
            if d >= self.min_degree {
                self.insert(v, d);
            } else if d < self.min_degree / 2 {
                self.remove(v);
            } else if let Some(i) = self.slot_of(v) {
                self.slots[i].degree = d as u32;
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
            if let Some(i) = self.slot_of(v) {
                self.drop_committed(i);
                self.grouped.fetch_add(group.ids.len(), Ordering::Relaxed);
                self.slots[i].committed = OnceLock::from(Box::new(group));
            }
        }
    }

    /// Adds `v` (degree `d`) as a hub, or updates its degree.
    fn insert(&mut self, v: VertexId, d: usize) {
        if let Some(i) = self.slot_of(v) {
            self.slots[i].degree = d as u32;
            return;
        }
        if self.slot.len() <= v as usize {
            self.slot.resize(v as usize + 1, NO_SLOT);
        }
        self.slot[v as usize] = self.list.len() as u32;
        self.list.push(v);
        self.slots.push(HubSlot {
            degree: d as u32,
            reads: AtomicU32::new(0),
            committed: OnceLock::new(),
        });
    }

    fn remove(&mut self, v: VertexId) {
        if let Some(i) = self.slot_of(v) {
            self.slot[v as usize] = NO_SLOT;
            self.drop_committed(i);
            self.list.swap_remove(i);
            self.slots.swap_remove(i);
            if let Some(&moved) = self.list.get(i) {
                self.slot[moved as usize] = i as u32;
            }
        }
    }

    /// Drops slot `i`'s committed groups, releasing their budget.
    fn drop_committed(&mut self, i: usize) {
        if let Some(group) = self.slots[i].committed.take() {
            let used = self.grouped.get_mut();
            *used = used.saturating_sub(group.ids.len());
        }
    }

    /// Slot `i`'s committed groups, built with `build` once the list has
    /// been read [`COMMITTED_GROUP_AFTER_READS`] times, while the budget
    /// allows.
    fn committed_group(&self, i: usize, build: impl FnOnce() -> Group) -> Option<&Group> {
        if let Some(group) = self.slots[i].committed.get() {
            return Some(group);
        }
        if self.grouped.load(Ordering::Relaxed) >= self.budget
            || self.slots[i].reads.fetch_add(1, Ordering::Relaxed) < COMMITTED_GROUP_AFTER_READS
        {
            return None;
        }
        let group = self.slots[i].committed.get_or_init(|| {
            let group = build();
            self.grouped.fetch_add(group.ids.len(), Ordering::Relaxed);
            Box::new(group)
        });
        Some(group)
    }

    /// `v`'s slot, if `v` is a hub.
    #[inline]
    fn slot_of(&self, v: VertexId) -> Option<usize> {
        match self.slot.get(v as usize) {
            Some(&i) if i != NO_SLOT => Some(i as usize),
            _ => None,
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

    /// Views of batches that touch many lists group only hubs of degree at
    /// least `d` (at least `min_degree`; by default equal to it).
    pub fn with_batch_min_degree(mut self, d: usize) -> Self {
        self.batch_min_degree = d.max(self.min_degree);
        self
    }

    pub fn batch_min_degree(&self) -> usize {
        self.batch_min_degree
    }

    /// At most `entries` list entries in built committed groups (default:
    /// the graph's entries when found, at least 65,536).
    pub fn with_group_budget(mut self, entries: usize) -> Self {
        self.budget = entries;
        self
    }

    /// List entries held by built committed groups.
    pub fn grouped_entries(&self) -> usize {
        self.grouped.load(Ordering::Relaxed)
    }
}

/// The version-`New` groups a batch's [`HubLabelGroups`] built, for
/// [`Hubs::adopt`].
#[derive(Debug, Default)]
pub struct NewGroups(Vec<(VertexId, Group)>);

/// One list grouped by neighbour label, or by (neighbour label, edge label)
/// when `by_elabel`: ids ascending within a group.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    ids: Vec<VertexId>,
    /// Each key present, ascending, with the index of its first entry (a
    /// group ends where the next begins): a lookup searches the few keys,
    /// not the entries. The key is (vertex label, edge label), the edge
    /// label 0 unless `by_elabel`.
    starts: Vec<((Label, Label), u32)>,
    /// Where keys are small (a counting sort grouped them): each flat key
    /// `label · width + elabel`'s first entry, and one past the last, for a
    /// lookup without a search (`starts` is then empty).
    dense: Option<(u32, Vec<u32>)>,
    elabels: Vec<Label>,
    by_elabel: bool,
}

impl Group {
    /// Keys below this are grouped by a counting sort (linear; the list
    /// comes in id order, so a stable scatter keeps ids ascending within a
    /// group); larger ones by sorting (key, id) triples.
    const COUNTING_LABELS: usize = 1 << 12;

    /// Groups `list` by its vertices' `labels`, and by edge label too when
    /// `by_elabel` and the graph is `edge_labelled` (an edge-labelled query
    /// reads one (vertex label, edge label) group: a third of a list of
    /// three edge labels, and no edge-label filter).
    pub(crate) fn of(list: Nbrs<'_>, labels: &[Label], edge_labelled: bool, by_elabel: bool) -> Group {
        let by_elabel = by_elabel && edge_labelled;
        let n = list.len();
        let (mut ids, mut keys, mut els) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
        if edge_labelled {
            els.reserve(n);
        }
        for (x, el) in list.iter() {
            ids.push(x);
            keys.push((labels[x as usize], if by_elabel { el } else { 0 }));
            if edge_labelled {
                els.push(el);
            }
        }
        let max_l = keys.iter().map(|k| k.0).max().unwrap_or(0) as usize;
        let max_e = keys.iter().map(|k| k.1).max().unwrap_or(0) as usize;
        let span = (max_e + 1).saturating_mul(max_l + 1);
        let mut group = if span <= Self::COUNTING_LABELS {
            let flat: Vec<u32> = keys
                .iter()
                .map(|&(l, e)| (l as usize * (max_e + 1) + e as usize) as u32)
                .collect();
            Self::by_counting(&ids, &flat, &els, span, max_e as u32 + 1)
        } else {
            Self::by_sorting(ids, keys, els)
        };
        group.by_elabel = by_elabel;
        group
    }

    /// Stable counting sort of id-ordered entries by their flat `keys`
    /// (`label · width + elabel`), all below `range`.
    fn by_counting(ids: &[VertexId], keys: &[u32], els: &[Label], range: usize, width: u32) -> Group {
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
            starts: Vec::new(),
            dense: Some((width, start.iter().map(|&x| x as u32).collect())),
            elabels: vec![0; els.len()],
            by_elabel: false,
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

    fn by_sorting(ids: Vec<VertexId>, keys: Vec<(Label, Label)>, els: Vec<Label>) -> Group {
        let mut order: Vec<((Label, Label), VertexId, u32)> =
            (0..ids.len()).map(|i| (keys[i], ids[i], i as u32)).collect();
        order.sort_unstable();
        let mut starts: Vec<((Label, Label), u32)> = Vec::new();
        for (i, e) in order.iter().enumerate() {
            if starts.last().is_none_or(|s| s.0 != e.0) {
                starts.push((e.0, i as u32));
            }
        }
        Group {
            ids: order.iter().map(|e| e.1).collect(),
            starts,
            dense: None,
            elabels: if els.is_empty() {
                Vec::new()
            } else {
                order.iter().map(|e| els[e.2 as usize]).collect()
            },
            by_elabel: false,
        }
    }

    /// The span of `key`'s entries when `starts` has the key, else the
    /// index in `starts` where it would go.
    fn sparse_span(&self, key: (Label, Label)) -> Result<(usize, usize), usize> {
        let k = self.starts.partition_point(|s| s.0 < key);
        match self.starts.get(k) {
            Some(&(l, lo)) if l == key => Ok((
                lo as usize,
                self.starts.get(k + 1).map_or(self.ids.len(), |s| s.1 as usize),
            )),
            _ => Err(k),
        }
    }

    /// Inserts (`insert`) or removes neighbour `x` (vertex label `label`,
    /// edge label `el`) in place, keeping ids ascending within each group;
    /// false, with the group unchanged, where it cannot (a key beyond the
    /// dense table, an entry missing): the caller then drops the group.
    pub(crate) fn patch(&mut self, x: VertexId, label: Label, el: Label, insert: bool) -> bool {
        let key = (label, if self.by_elabel { el } else { 0 });
        // the group's span [lo, hi)
        let (lo, hi) = match &self.dense {
            Some((width, offsets)) => {
                let Some(k) = dense_index(*width, offsets, key) else {
                    return false;
                };
                (offsets[k] as usize, offsets[k + 1] as usize)
            }
            None => match self.sparse_span(key) {
                Ok(span) => span,
                Err(_) if !insert => return false,
                // a new key starts where the next key starts
                Err(k) => {
                    let at = self.starts.get(k).map_or(self.ids.len(), |s| s.1 as usize);
                    self.starts.insert(k, (key, at as u32));
                    (at, at)
                }
            },
        };
        let pos = lo + self.ids[lo..hi].partition_point(|&y| y < x);
        let found = pos < hi && self.ids[pos] == x;
        if found == insert {
            return false;
        }
        if insert {
            self.ids.insert(pos, x);
            if !self.elabels.is_empty() {
                self.elabels.insert(pos, el);
            }
        } else {
            self.ids.remove(pos);
            if !self.elabels.is_empty() {
                self.elabels.remove(pos);
            }
        }
        let shift = |s: &mut u32| {
            if insert {
                *s += 1
            } else {
                *s -= 1
            }
        };
        match &mut self.dense {
            Some((width, offsets)) => {
                let k = dense_index(*width, offsets, key).expect("found above");
                offsets[k + 1..].iter_mut().for_each(shift);
            }
            None => {
                let k = self.starts.partition_point(|s| s.0 <= key);
                self.starts[k..].iter_mut().for_each(|s| shift(&mut s.1));
                if !insert && hi - lo == 1 {
                    self.starts.remove(k - 1);
                }
            }
        }
        true
    }

    /// The groups of this (committed) list after a batch's `changes` at its
    /// vertex, sorted by neighbour: the deletions only for version `Common`
    /// (N ∩ N'), and the insertions too for `New` (`inserts`). A linear
    /// merge per key that looks up only the changed neighbours' labels,
    /// where [`Group::of`] looks up every entry's: regrouping the hubs a
    /// batch touched was most of a light batch's time on large graphs.
    /// `None` where the changes do not fit the groups (an inserted key
    /// beyond the dense table, a deleted entry missing, an inserted one
    /// present): the caller then groups the list itself.
    pub(crate) fn derived(&self, changes: &[HubChange], labels: &[Label], inserts: bool) -> Option<Group> {
        let key = |c: &HubChange| (labels[c.x as usize], if self.by_elabel { c.el } else { 0 });
        // (key, neighbour, inserted, edge label): a deletion before an
        // insertion of the same neighbour and key (an edge label changed)
        let mut ch: Vec<((Label, Label), VertexId, bool, Label)> = changes
            .iter()
            .filter(|c| inserts || !c.inserted)
            .map(|c| (key(c), c.x, c.inserted, c.el))
            .collect();
        ch.sort_unstable();
        let added = ch.iter().filter(|c| c.2).count();
        let n = self.ids.len() + added;
        let mut out = Group {
            ids: Vec::with_capacity(n),
            starts: Vec::new(),
            dense: None,
            elabels: Vec::with_capacity(if self.elabels.is_empty() { 0 } else { n }),
            by_elabel: self.by_elabel,
        };
        match &self.dense {
            Some((width, offsets)) => {
                let flat: Vec<usize> = ch
                    .iter()
                    .map(|c| dense_index(*width, offsets, c.0))
                    .collect::<Option<_>>()?;
                let mut new_offsets = Vec::with_capacity(offsets.len());
                new_offsets.push(0);
                let mut ci = 0;
                for k in 0..offsets.len() - 1 {
                    let c0 = ci;
                    while ci < ch.len() && flat[ci] == k {
                        ci += 1;
                    }
                    self.merge_into(offsets[k] as usize..offsets[k + 1] as usize, &ch[c0..ci], &mut out)?;
                    new_offsets.push(out.ids.len() as u32);
                }
                out.dense = Some((*width, new_offsets));
            }
            None => {
                out.starts.reserve(self.starts.len() + ch.len());
                let (mut si, mut ci) = (0, 0);
                loop {
                    let next = match (self.starts.get(si), ch.get(ci)) {
                        (None, None) => break,
                        (Some(s), None) => s.0,
                        (None, Some(c)) => c.0,
                        (Some(s), Some(c)) => s.0.min(c.0),
                    };
                    let span = match self.starts.get(si) {
                        Some(&(k, lo)) if k == next => {
                            si += 1;
                            lo as usize..self.starts.get(si).map_or(self.ids.len(), |s| s.1 as usize)
                        }
                        _ => 0..0,
                    };
                    let c0 = ci;
                    while ci < ch.len() && ch[ci].0 == next {
                        ci += 1;
                    }
                    let at = out.ids.len();
                    self.merge_into(span, &ch[c0..ci], &mut out)?;
                    if out.ids.len() > at {
                        out.starts.push((next, at as u32));
                    }
                }
            }
        }
        Some(out)
    }

    /// Appends this group's entries `span` (one key) to `out`, with the
    /// key's `changes` (sorted by neighbour) applied.
    fn merge_into(
        &self,
        span: std::ops::Range<usize>,
        changes: &[((Label, Label), VertexId, bool, Label)],
        out: &mut Group,
    ) -> Option<()> {
        let (mut i, hi) = (span.start, span.end);
        let labelled = !self.elabels.is_empty();
        let copy = |out: &mut Group, lo: usize, hi: usize| {
            out.ids.extend_from_slice(&self.ids[lo..hi]);
            if labelled {
                out.elabels.extend_from_slice(&self.elabels[lo..hi]);
            }
        };
        for &(_, x, inserted, el) in changes {
            let j = i + self.ids[i..hi].partition_point(|&y| y < x);
            copy(out, i, j);
            i = j;
            let present = i < hi && self.ids[i] == x;
            if inserted {
                if present {
                    return None;
                }
                out.ids.push(x);
                if labelled {
                    out.elabels.push(el);
                }
            } else {
                if !present {
                    return None;
                }
                i += 1;
            }
        }
        copy(out, i, hi);
        Some(())
    }

    /// The entries of vertex label `label` (and edge label `elabel`, when
    /// grouped by it). `None` when the read and the grouping disagree on the
    /// edge label (a group by both labels has no id-sorted span of one
    /// vertex label; a group by vertex label serves reads with an edge label
    /// unfiltered, [`LabelGroup::elabel_applied`] false).
    pub(crate) fn with_label(&self, label: Label, elabel: Option<Label>) -> Option<LabelGroup<'_>> {
        let key = match (self.by_elabel, elabel) {
            (true, Some(e)) => (label, e),
            (true, None) => return None,
            (false, _) => (label, 0),
        };
        let (lo, hi) = match &self.dense {
            Some((width, offsets)) => {
                dense_index(*width, offsets, key).map_or((0, 0), |k| (offsets[k] as usize, offsets[k + 1] as usize))
            }
            None => self.sparse_span(key).unwrap_or((0, 0)),
        };
        let el = if self.elabels.is_empty() {
            &[][..]
        } else {
            &self.elabels[lo..hi]
        };
        Some(LabelGroup {
            list: Nbrs::plain(&self.ids[lo..hi], el),
            elabel_applied: self.by_elabel,
        })
    }
}

/// The index of `key` (flat: `label · width + elabel`) in a dense offset
/// table, if the table covers it.
#[inline]
fn dense_index(width: u32, offsets: &[u32], key: (Label, Label)) -> Option<usize> {
    match key.0.checked_mul(width).and_then(|k| k.checked_add(key.1)) {
        Some(k) if key.1 < width && (k as usize) + 1 < offsets.len() => Some(k as usize),
        _ => None,
    }
}

/// One edge change of a batch at a touched hub ([`HubLabelGroups::with_delta`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HubChange {
    /// The neighbour.
    x: VertexId,
    /// The edge's label (in G_k for a deletion).
    el: Label,
    inserted: bool,
}

/// Every edge change of `delta` at a vertex that `at` accepts, with that
/// vertex, by vertex (stable: a vertex's changes keep their order,
/// insertions first); `None` for a batch that adds or removes vertices,
/// whose hubs' groups are dropped or regrouped instead of patched
/// ([`Hubs::update`]) or derived ([`HubLabelGroups::with_delta`]).
fn edge_changes_at(delta: &BatchDelta, at: impl Fn(VertexId) -> bool) -> Option<Vec<(VertexId, HubChange)>> {
    if !(delta.added_vertices.is_empty() && delta.removed_vertices.is_empty()) {
        return None;
    }
    let mut out = Vec::new();
    for (edges, inserted) in [(&delta.inserted, true), (&delta.deleted, false)] {
        for e in edges {
            for (v, x) in [(e.u, e.v), (e.v, e.u)] {
                if at(v) {
                    out.push((
                        v,
                        HubChange {
                            x,
                            el: e.label,
                            inserted,
                        },
                    ));
                }
            }
        }
    }
    out.sort_by_key(|c| c.0);
    Some(out)
}

/// A hub the batch touches: the groups of its lists in versions Common and
/// New, built after `group_after` reads, and where its changes lie in
/// [`HubLabelGroups::changes`] (`None`: not known, the lists are grouped
/// from scratch).
#[derive(Debug, Default)]
struct Touched {
    versions: [LazyGroup; 2],
    changes: Option<(u32, u32)>,
}

/// A view of `g` whose hubs' lists can be read one label at a time (see the
/// module docs); everything else is `g`'s. Build one per batch, after
/// staging: the groups copy the lists as they are then.
pub struct HubLabelGroups<'a, G: ?Sized> {
    g: &'a G,
    hubs: &'a Hubs,
    /// The hubs this batch touches.
    groups: HashMap<VertexId, Touched, FixedState>,
    /// The batch's edge changes at touched hubs, by hub
    /// ([`HubLabelGroups::with_delta`]): a touched hub's versions Common and
    /// New are then derived from its committed groups ([`Group::derived`])
    /// when those are built.
    changes: Vec<HubChange>,
    /// Touched versions derived so far, for tests and statistics.
    derived: AtomicUsize,
    /// [`GROUP_AFTER_READS`] for a batch that touches a few lists (one or a
    /// few updates: their reads are few), else [`BATCH_GROUP_AFTER_READS`]
    /// (a large batch reads a skewed graph's touched hubs over and over).
    group_after: u32,
    /// Hubs of lower degree are not served ([`Hubs::with_batch_min_degree`]
    /// for batches that touch many lists).
    min_degree: u32,
}

impl<'a, G: GraphView + ?Sized> HubLabelGroups<'a, G> {
    /// `touched`: the vertices whose lists the pending batch changes (none
    /// when nothing is pending); their committed groups serve version `Old`
    /// only.
    pub fn new(g: &'a G, hubs: &'a Hubs, touched: &[VertexId]) -> Self {
        let few = touched.len() <= FEW_TOUCHED;
        let group_after = if few {
            GROUP_AFTER_READS
        } else {
            BATCH_GROUP_AFTER_READS
        };
        let min_degree = if few { hubs.min_degree } else { hubs.batch_min_degree };
        let served = |v: VertexId| {
            hubs.slot_of(v)
                .is_some_and(|i| hubs.slots[i].degree as usize >= min_degree)
        };
        let groups = if hubs.is_empty() {
            HashMap::default()
        } else {
            touched
                .iter()
                .filter(|&&v| served(v))
                .map(|&v| (v, Default::default()))
                .collect()
        };
        HubLabelGroups {
            g,
            hubs,
            groups,
            changes: Vec::new(),
            derived: AtomicUsize::new(0),
            group_after,
            min_degree: min_degree.min(u32::MAX as usize) as u32,
        }
    }

    /// Takes the pending batch's edge changes (`delta`, as
    /// [`crate::DynamicGraph::pending_delta`] gives it), so that the versions
    /// Common and New of a touched hub whose committed groups are built are
    /// derived from those and the hub's changes, not regrouped. Batches that
    /// add or remove vertices are not taken (their lists are regrouped).
    pub fn with_delta(mut self, delta: Option<&BatchDelta>) -> Self {
        if self.groups.is_empty() {
            return self;
        }
        let Some(by_hub) = delta.and_then(|d| edge_changes_at(d, |v| self.groups.contains_key(&v))) else {
            return self;
        };
        let mut at = 0;
        while at < by_hub.len() {
            let v = by_hub[at].0;
            let end = at + by_hub[at..].partition_point(|c| c.0 == v);
            if let Some(t) = self.groups.get_mut(&v) {
                t.changes = Some((at as u32, end as u32));
            }
            at = end;
        }
        self.changes = by_hub.into_iter().map(|c| c.1).collect();
        self
    }

    /// The groups of version `New` built so far, for [`Hubs::adopt`].
    pub fn into_new_groups(self) -> NewGroups {
        NewGroups(
            self.groups
                .into_iter()
                .filter_map(|(v, t)| {
                    let [_, new] = t.versions;
                    new.group.into_inner().map(|g| (v, g))
                })
                .collect(),
        )
    }

    /// How many hub lists have been grouped so far for this batch (versions
    /// Common and New of touched hubs).
    pub fn grouped(&self) -> usize {
        self.groups
            .values()
            .flat_map(|t| &t.versions)
            .filter(|t| t.built().is_some())
            .count()
    }

    /// How many of those were derived from committed groups
    /// ([`HubLabelGroups::with_delta`]) instead of grouped from scratch.
    pub fn derived(&self) -> usize {
        self.derived.load(Ordering::Relaxed)
    }

    /// Version `ver` (Common or New) of touched hub `v` (slot `slot`),
    /// derived from its committed groups where those are built and the
    /// batch's changes at `v` are known.
    fn derive(&self, slot: usize, touched: &Touched, ver: Version) -> Option<Group> {
        let committed = self.hubs.slots[slot].committed.get()?;
        let (lo, hi) = touched.changes?;
        let group = committed.derived(
            &self.changes[lo as usize..hi as usize],
            self.g.labels(),
            ver == Version::New,
        )?;
        self.derived.fetch_add(1, Ordering::Relaxed);
        Some(group)
    }
}

impl<G: GraphView + ?Sized> GraphView for HubLabelGroups<'_, G> {
    forward_whole_lists!(g);
    fn has_label_groups(&self) -> bool {
        !self.hubs.is_empty()
    }
    #[inline]
    fn nbrs_with_label(
        &self,
        v: VertexId,
        ver: Version,
        label: Label,
        elabel: Option<Label>,
    ) -> Option<LabelGroup<'_>> {
        let slot = self.hubs.slot_of(v)?;
        if self.hubs.slots[slot].degree < self.min_degree {
            return None;
        }
        let (g, labels, el) = (self.g, self.g.labels(), self.g.edge_labelled());
        let by_el = elabel.is_some();
        let touched = match ver {
            Version::Old => None,
            _ => self.groups.get(&v),
        };
        let group = match (ver, touched) {
            (Version::Common | Version::New, Some(t)) => t.versions[usize::from(ver == Version::New)].after_reads(
                self.group_after,
                || true,
                || {
                    self.derive(slot, t, ver)
                        .unwrap_or_else(|| Group::of(g.nbrs(v, ver), labels, el, by_el))
                },
            )?,
            _ => self
                .hubs
                .committed_group(slot, || Group::of(g.nbrs(v, Version::Old), labels, el, by_el))?,
        };
        group.with_label(label, elabel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{assign_labels, graph_from_pairs, rmat, Labeller};
    use crate::types::{Edge, LocatedUpdate, Update};
    use crate::{DynamicGraph, Strictness};

    /// Stages `updates` on `dg` (lines numbered from 1).
    fn stage(dg: &mut DynamicGraph, updates: impl IntoIterator<Item = Update>) {
        let located: Vec<LocatedUpdate> = updates
            .into_iter()
            .enumerate()
            .map(|(i, update)| LocatedUpdate { line: i + 1, update })
            .collect();
        dg.stage(&located, "<test>", Strictness::Strict).unwrap();
    }

    /// Every version's groups of every hub equal the whole list filtered by
    /// label, while batches that insert and delete are pending, over several
    /// batches (committed groups must be dropped when a batch touches a hub).
    #[test]
    fn hub_groups_equal_filtered_lists_of_every_version() {
        hub_groups_follow_filtered_lists(1, false);
    }

    /// The same, read and grouped by (vertex label, edge label), as an
    /// edge-labelled query reads.
    #[test]
    fn groups_by_both_labels_equal_filtered_lists_of_every_version() {
        hub_groups_follow_filtered_lists(1, true);
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
            assert!(view.nbrs_with_label(0, Version::New, 1, None).is_none());
        }
        let got = view
            .nbrs_with_label(0, Version::New, 1, None)
            .expect("grouped after the reads");
        assert_eq!(got.list.iter().map(|p| p.0).collect::<Vec<_>>(), want);
        assert!(want.contains(&41));
        // the committed list (version Old) after its own reads, counted
        // over views (batches)
        for _ in 0..COMMITTED_GROUP_AFTER_READS - 1 {
            assert!(view.nbrs_with_label(0, Version::Old, 1, None).is_none());
        }
        let view = HubLabelGroups::new(&dg, &hubs, dg.touched());
        assert!(view.nbrs_with_label(0, Version::Old, 1, None).is_none());
        assert!(view.nbrs_with_label(0, Version::Old, 1, None).is_some());
    }

    /// Reads `v`'s committed list by label (and edge label `el`) until its
    /// groups are built (by both labels when `el` is given).
    fn build_committed<G: GraphView>(view: &HubLabelGroups<'_, G>, v: VertexId, el: Option<Label>) {
        for _ in 0..COMMITTED_GROUP_AFTER_READS {
            let _ = view.nbrs_with_label(v, Version::Old, 0, el);
        }
        assert!(view.nbrs_with_label(v, Version::Old, 0, el).is_some());
    }

    /// The same with labels too large for the counting sort.
    #[test]
    fn hub_groups_with_large_labels_equal_filtered_lists() {
        const { assert!(Group::COUNTING_LABELS < 1_000_003) };
        hub_groups_follow_filtered_lists(1_000_003, false);
        hub_groups_follow_filtered_lists(1_000_003, true);
    }

    /// Vertex labels are `scale` times 0..4; edge labels 0..3, read with
    /// each edge label when `by_el`.
    fn hub_groups_follow_filtered_lists(scale: Label, by_el: bool) {
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
        let (mut grouped, mut derived) = (0, 0);
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
                // an edge whose label changes: deleted and inserted again
                let (y, el) = dg.nbrs(v, Version::New).iter().nth(round + 1).unwrap();
                if used.insert((v.min(y), v.max(y))) {
                    updates.push(Update::RemoveEdge(Edge::new(v, y, el)));
                    updates.push(Update::AddEdge(Edge::new(v, y, (el + 1) % 3)));
                }
            }
            stage(&mut dg, updates);
            // odd rounds regroup touched hubs' lists from scratch, even ones
            // derive them from their committed groups and the batch's changes
            let delta = (round % 2 == 0).then(|| dg.pending_delta()).flatten();
            let view = HubLabelGroups::new(&dg, &hubs, dg.touched()).with_delta(delta);
            for v in 0..n as VertexId {
                for ver in [Version::Old, Version::Common, Version::New] {
                    // a hub's lists are grouped after a few reads (None
                    // until then): read every label more often than that
                    for _ in 0..=GROUP_AFTER_READS.max(COMMITTED_GROUP_AFTER_READS) {
                        let els: Vec<Option<Label>> = if by_el { (0..4).map(Some).collect() } else { vec![None] };
                        for l in (0..5).map(|l| l * scale) {
                            for &e in &els {
                                let got = view.nbrs_with_label(v, ver, l, e);
                                let want: Vec<_> = dg
                                    .nbrs(v, ver)
                                    .iter()
                                    .filter(|&(x, el)| dg.labels()[x as usize] == l && e.is_none_or(|e| e == el))
                                    .collect();
                                // None: not a hub, or not read often enough yet
                                if let Some(got) = got {
                                    assert_eq!(got.elabel_applied, by_el);
                                    assert_eq!(
                                        got.list.to_vec(),
                                        want,
                                        "round {round} vertex {v} {ver:?} label {l} {e:?}"
                                    );
                                }
                            }
                        }
                    }
                    if hubs.slot_of(v).is_some() {
                        // grouped by now
                        assert!(view.nbrs_with_label(v, ver, 0, by_el.then_some(0)).is_some());
                    }
                }
            }
            grouped += view.grouped();
            derived += view.derived();
            if delta.is_none() {
                assert_eq!(view.derived(), 0);
            }
            // every other round, the new lists' groups become the committed ones
            let built = view.into_new_groups();
            hubs.update(&dg, dg.touched(), dg.pending_delta());
            if round % 2 == 0 {
                hubs.adopt(built);
            }
            dg.commit();
        }
        assert!(grouped > derived && derived > 0, "{grouped} grouped, {derived} derived");
    }

    /// One-update batches (as one update at a time commits them) patch a
    /// hub's committed groups instead of dropping them; after each commit
    /// the patched groups equal the list filtered by both labels, for
    /// dense and searched keys and both groupings.
    #[test]
    fn committed_groups_are_patched_by_small_batches() {
        for (scale, by_el) in [(1, false), (1, true), (1_000_003, false), (1_000_003, true)] {
            // vertex 0 is a hub joined to 1..30; 30..60 come and go
            let n = 60;
            let labels: Vec<Label> = (0..n).map(|v| (v as Label % 3) * scale).collect();
            let pairs: Vec<(VertexId, VertexId)> = (1..30).map(|v| (0, v)).collect();
            let g = graph_from_pairs(n, &pairs, labels, Some((3, 2)));
            let mut dg = DynamicGraph::from_data(&g).unwrap();
            let mut hubs = Hubs::of(&dg, 8);
            let ups: Vec<(VertexId, bool)> = (30..60)
                .map(|x| (x, true))
                .chain((1..60).step_by(2).map(|x| (x, false)))
                .collect();
            for (line, &(x, insert)) in ups.iter().enumerate() {
                let update = match (insert, dg.nbrs(0, Version::New).find(x)) {
                    (true, _) => Update::AddEdge(Edge::new(0, x, x % 3)),
                    (false, el) => Update::RemoveEdge(Edge::new(0, x, el.expect("present"))),
                };
                // read every group of the committed list: builds it
                let view = HubLabelGroups::new(&dg, &hubs, &[]);
                if line == 0 {
                    build_committed(&view, 0, by_el.then_some(0));
                }
                for l in (0..4).map(|l| l * scale) {
                    for e in 0..4 {
                        let e = by_el.then_some(e);
                        let got = view.nbrs_with_label(0, Version::Old, l, e).unwrap().list.to_vec();
                        let want: Vec<_> = dg
                            .nbrs(0, Version::Old)
                            .iter()
                            .filter(|&(x, el)| dg.labels()[x as usize] == l && e.is_none_or(|e| e == el))
                            .collect();
                        assert_eq!(got, want, "{scale} {by_el} update {line} label {l} {e:?}");
                    }
                }
                dg.stage(&[LocatedUpdate { line, update }], "<test>", Strictness::Strict)
                    .unwrap();
                hubs.update(&dg, dg.touched(), dg.pending_delta());
                let i = hubs.slot_of(0).unwrap();
                assert!(
                    hubs.slots[i].committed.get().is_some(),
                    "{scale} {by_el}: patched, not dropped"
                );
                dg.commit();
                // the budget follows the patched group's size
                assert_eq!(hubs.grouped_entries(), dg.nbrs(0, Version::Old).len());
            }
            // a batch that adds a vertex (and an edge to it) is not patched:
            // the hub's groups are dropped, and the next read regroups
            let view = HubLabelGroups::new(&dg, &hubs, &[]);
            assert!(view.nbrs_with_label(0, Version::Old, 0, by_el.then_some(0)).is_some());
            stage(
                &mut dg,
                [
                    Update::AddVertex { id: 60, label: scale },
                    Update::AddEdge(Edge::new(0, 60, 1)),
                ],
            );
            hubs.update(&dg, dg.touched(), dg.pending_delta());
            assert!(hubs.slots[hubs.slot_of(0).unwrap()].committed.get().is_none());
            dg.commit();
            let view = HubLabelGroups::new(&dg, &hubs, &[]);
            let got = view
                .nbrs_with_label(0, Version::Old, scale, by_el.then_some(1))
                .unwrap()
                .list
                .to_vec();
            assert!(got.contains(&(60, 1)), "{scale} {by_el}: {got:?}");
        }
    }

    /// Committed groups stop being built once they hold the budget's
    /// entries (reads then filter: `None`), and a batch that drops a
    /// hub's groups gives its entries back.
    #[test]
    fn committed_groups_keep_to_their_budget() {
        // hubs 0 and 1, each joined to 2..42 (labels alternate)
        let n = 42;
        let labels: Vec<Label> = (0..n).map(|v| v as Label % 2).collect();
        let pairs: Vec<(VertexId, VertexId)> = (0..2).flat_map(|h| (2..n as VertexId).map(move |v| (h, v))).collect();
        let g = graph_from_pairs(n, &pairs, labels, None);
        let mut dg = DynamicGraph::from_data(&g).unwrap();
        let mut hubs = Hubs::of(&dg, 8).with_group_budget(30);
        let view = HubLabelGroups::new(&dg, &hubs, &[]);
        build_committed(&view, 0, None);
        assert_eq!(hubs.grouped_entries(), 40);
        // over budget: hub 1 is filtered by the reader, however often read
        for _ in 0..=COMMITTED_GROUP_AFTER_READS {
            assert!(view.nbrs_with_label(1, Version::Old, 1, None).is_none());
        }
        // a batch adding a vertex drops hub 0's groups and frees the budget
        stage(
            &mut dg,
            [
                Update::AddVertex { id: 42, label: 0 },
                Update::AddEdge(Edge::new(0, 42, 0)),
            ],
        );
        hubs.update(&dg, dg.touched(), dg.pending_delta());
        dg.commit();
        assert_eq!(hubs.grouped_entries(), 0);
        let view = HubLabelGroups::new(&dg, &hubs, &[]);
        build_committed(&view, 1, None);
        let got = view.nbrs_with_label(1, Version::Old, 1, None).unwrap().list.to_vec();
        let want: Vec<_> = dg.nbrs(1, Version::Old).iter().filter(|p| p.0 % 2 == 1).collect();
        assert_eq!(got, want);
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
        hubs.update(&dg, dg.touched(), dg.pending_delta());
        dg.commit();
        assert_eq!(hubs.vertices(), &[0]);
        dg.stage(&del(20..30), "<test>", Strictness::Strict).unwrap();
        hubs.update(&dg, dg.touched(), dg.pending_delta());
        dg.commit();
        assert!(hubs.is_empty());
    }
}
