//! [`EdgeSet`]: a compact, mutable set of undirected edges, for edges that
//! are only ever looked up (never listed per vertex in a hot loop).
//!
//! The bulk is a sorted base, a one-direction CSR over each edge's smaller
//! endpoint (4 bytes an edge and 4 a vertex, against a full CSR's 8 and
//! 12); each entry carries a bit that marks it removed since the base was
//! built. Edges inserted since live in a small hash set. When the
//! insertions reach an eighth of the base or the removals a quarter they
//! are merged into a new base (a linear pass), so a set of `m` edges holds at most about `9 m` bytes plus 4 a
//! vertex whatever the history (4-5.5 typically), where a hash set of
//! packed keys holds 9 bytes a slot and 1.14-2.28 slots an edge (growth by
//! powers of two). Lookups binary-search one vertex's base range, then
//! probe the hash set.
//!
//! A set may also hold each edge's label ([`EdgeSet::from_labelled`]): 4
//! bytes more a base edge, and a hash map beside the inserted edges.

use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

use foldhash::fast::FixedState;

use crate::types::{Label, VertexId, NO_EDGE_LABEL};

/// An edge as a key: `(smaller endpoint, larger endpoint)`.
pub type EdgeKey = (VertexId, VertexId);

/// The bit of a `high` entry that marks it removed (vertex ids stay below
/// 2^31: [`crate::types::MAX_VERTEX_ID`]).
const GONE: u32 = 1 << 31;

/// Changes merged into the base once they exceed this plus an eighth
/// (insertions) or a quarter (removals) of it.
const MERGE_SLACK: usize = 64;

/// A set of undirected edges keyed `(u, v)` with `u < v`; see the module
/// docs.
#[derive(Clone, Debug)]
pub struct EdgeSet {
    /// The base edges of smaller endpoint `u` are `high[offsets[u]..offsets[u + 1]]`,
    /// sorted; `offsets` covers the smaller endpoints up to the largest.
    offsets: Vec<u32>,
    high: Vec<VertexId>,
    /// Base entries removed since the base was built (their [`GONE`] bit
    /// set in `high`).
    n_gone: usize,
    /// Edges inserted since the base was built and not in it.
    added: HashSet<u64, FixedState>,
    /// The edges' labels, in a set that holds them.
    labels: Option<Labels>,
    /// [`MERGE_SLACK`], smaller in tests that want merges.
    slack: usize,
    /// Merges so far: a [`BaseSlot`] found before the last one is stale.
    generation: u64,
}

/// The edge labels of an [`EdgeSet`] that holds them.
#[derive(Clone, Debug, Default)]
struct Labels {
    /// Per base entry (removed or not), its label.
    base: Vec<Label>,
    /// Per key of [`EdgeSet::added`], its label.
    added: HashMap<u64, Label, FixedState>,
}

/// Where a lookup ([`EdgeSet::find`]) found a key: its index in the base
/// (removed or not), not in the base, or not looked up. Valid for the
/// [`EdgeSet::generation`] it was found in, so that a batch's changes can
/// reuse the lookups its validation made ([`EdgeSet::apply_changes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseSlot(u32);

impl BaseSlot {
    /// Not looked up.
    pub const UNKNOWN: BaseSlot = BaseSlot(u32::MAX);
    /// Looked up, not in the base.
    const NOT_IN_BASE: BaseSlot = BaseSlot(u32::MAX - 1);

    fn of(index: Option<usize>) -> BaseSlot {
        index.map_or(BaseSlot::NOT_IN_BASE, |i| BaseSlot(i as u32))
    }
}

/// The most edges a base holds (base indices stay below the
/// [`BaseSlot`] markers).
const MAX_BASE: usize = u32::MAX as usize - 2;

impl Default for EdgeSet {
    fn default() -> Self {
        Self::from_sorted(std::iter::empty(), 0, MERGE_SLACK)
    }
}

#[inline]
fn pack(key: EdgeKey) -> u64 {
    (key.0 as u64) << 32 | key.1 as u64
}

#[inline]
fn unpack(k: u64) -> EdgeKey {
    ((k >> 32) as VertexId, k as VertexId)
}

/// Sorts `items` by `key`; `Err` with a key given twice, or with the first
/// key when there are more than a base holds ([`MAX_BASE`]).
fn sort_distinct<T: Send>(items: &mut [T], key: impl Fn(&T) -> EdgeKey + Sync) -> Result<(), EdgeKey> {
    if items.len() > MAX_BASE {
        return Err(key(&items[0]));
    }
    // (on rayon's pool: equal keys are an error, so the order is one)
    items.par_sort_unstable_by_key(&key);
    match items.windows(2).find(|w| key(&w[0]) == key(&w[1])) {
        Some(w) => Err(key(&w[0])),
        None => Ok(()),
    }
}

impl EdgeSet {
    /// The set of `keys` (each `u < v`), without labels ([`EdgeSet::label`]
    /// gives [`NO_EDGE_LABEL`] for each); `Err` with a key given twice, or
    /// with the first key when the base would pass `u32::MAX - 2` edges.
    pub fn from_keys(mut keys: Vec<EdgeKey>) -> Result<EdgeSet, EdgeKey> {
        sort_distinct(&mut keys, |&k| k)?;
        Ok(Self::from_sorted(keys.iter().copied(), keys.len(), MERGE_SLACK))
    }

    /// The set of `edges` (each key `u < v`) and their labels, which
    /// [`EdgeSet::label`] gives back; `Err` as for [`EdgeSet::from_keys`].
    pub fn from_labelled(mut edges: Vec<(EdgeKey, Label)>) -> Result<EdgeSet, EdgeKey> {
        sort_distinct(&mut edges, |e| e.0)?;
        let mut set = Self::from_sorted(edges.iter().map(|e| e.0), edges.len(), MERGE_SLACK);
        set.labels = Some(Labels {
            base: edges.iter().map(|e| e.1).collect(),
            added: HashMap::default(),
        });
        Ok(set)
    }

    /// The base of `len` keys given in increasing order, distinct.
    fn from_sorted(keys: impl Iterator<Item = EdgeKey>, len: usize, slack: usize) -> EdgeSet {
        let mut offsets = vec![0u32];
        let mut high = Vec::with_capacity(len);
        for (u, v) in keys {
            debug_assert!(u < v);
            while offsets.len() <= u as usize {
                offsets.push(high.len() as u32);
            }
            high.push(v);
        }
        offsets.push(high.len() as u32);
        offsets.shrink_to_fit();
        EdgeSet {
            offsets,
            high,
            n_gone: 0,
            added: HashSet::default(),
            labels: None,
            slack,
            generation: 0,
        }
    }

    /// The base index of `key`, removed or not.
    #[inline]
    fn base_index(&self, (u, v): EdgeKey) -> Option<usize> {
        let u = u as usize;
        if u + 1 >= self.offsets.len() {
            return None;
        }
        let (lo, hi) = (self.offsets[u] as usize, self.offsets[u + 1] as usize);
        self.high[lo..hi]
            .binary_search_by_key(&v, |&x| x & !GONE)
            .ok()
            .map(|i| lo + i)
    }

    #[inline]
    fn is_gone(&self, i: usize) -> bool {
        self.high[i] & GONE != 0
    }

    #[inline]
    fn flip_gone(&mut self, i: usize) {
        self.high[i] ^= GONE;
    }

    /// Whether `key` (`u < v`) is in the set.
    #[inline]
    pub fn contains(&self, key: EdgeKey) -> bool {
        self.find(key).0
    }

    /// Whether the set holds its edges' labels ([`EdgeSet::from_labelled`]).
    pub fn is_labelled(&self) -> bool {
        self.labels.is_some()
    }

    /// Whether `key` (`u < v`) is in the set, and where it was looked up
    /// (valid in this [`EdgeSet::generation`]).
    #[inline]
    pub fn find(&self, key: EdgeKey) -> (bool, BaseSlot) {
        let i = self.base_index(key);
        let present = match i {
            Some(i) => !self.is_gone(i),
            None => self.added.contains(&pack(key)),
        };
        (present, BaseSlot::of(i))
    }

    /// The label of `key` (`u < v`) when it is in the set
    /// ([`NO_EDGE_LABEL`] in a set without labels).
    pub fn label(&self, key: EdgeKey) -> Option<Label> {
        let (present, slot) = self.find(key);
        present.then(|| self.label_at(key, slot))
    }

    /// The label of `key`, which is in the set, found at `slot` by
    /// [`EdgeSet::find`] in this generation (or [`BaseSlot::UNKNOWN`]);
    /// [`NO_EDGE_LABEL`] in a set without labels. Apart from `find`, so
    /// that lookups that need no label leave the labels' memory alone.
    pub fn label_at(&self, key: EdgeKey, slot: BaseSlot) -> Label {
        let Some(labels) = &self.labels else {
            return NO_EDGE_LABEL;
        };
        let i = match slot {
            BaseSlot::UNKNOWN => self.base_index(key),
            BaseSlot::NOT_IN_BASE => None,
            BaseSlot(i) => Some(i as usize),
        };
        match i {
            Some(i) => labels.base[i],
            None => labels.added[&pack(key)],
        }
    }

    /// Merges of the base so far ([`BaseSlot`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Adds `key` (`u < v`) with `label` (kept in a set that holds
    /// labels); whether it was new (a present key keeps its label).
    pub fn insert(&mut self, key: EdgeKey, label: Label) -> bool {
        let new = self.change_at(key, self.base_index(key), Some(label));
        self.merge_if_due();
        new
    }

    /// Removes `key` (`u < v`); whether it was there.
    pub fn remove(&mut self, key: EdgeKey) -> bool {
        let was = self.change_at(key, self.base_index(key), None);
        self.merge_if_due();
        was
    }

    /// Inserts (`Some` label) or removes (`None`) each key of `changes`, in
    /// order (a key may repeat), calling `on_change` for each change that
    /// changed the set (an insertion of a new key, a removal of a present
    /// one; `true` for an insertion). Each
    /// change comes with where a lookup found its key in `generation`: when
    /// that is still this set's generation, known slots skip the lookup
    /// (a binary search). They stay valid through the changes because a
    /// due merge waits for the last one.
    pub fn apply_changes(
        &mut self,
        changes: impl IntoIterator<Item = (EdgeKey, Option<Label>, BaseSlot)>,
        generation: u64,
        mut on_change: impl FnMut(EdgeKey, bool),
    ) {
        let fresh = generation == self.generation;
        for (key, insert, slot) in changes {
            let i = match slot {
                BaseSlot::UNKNOWN => self.base_index(key),
                _ if !fresh => self.base_index(key),
                BaseSlot::NOT_IN_BASE => None,
                BaseSlot(i) => Some(i as usize),
            };
            debug_assert_eq!(i, self.base_index(key), "a stale slot for {key:?}");
            if self.change_at(key, i, insert) {
                on_change(key, insert.is_some());
            }
        }
        self.merge_if_due();
    }

    /// Inserts `key` with a label (`Some`) or removes it (`None`), whose
    /// base index is `i`; whether the set changed. No merge.
    #[inline]
    fn change_at(&mut self, key: EdgeKey, i: Option<usize>, insert: Option<Label>) -> bool {
        match (i, insert) {
            (Some(i), _) if self.is_gone(i) == insert.is_some() => {
                self.flip_gone(i);
                if let Some(label) = insert {
                    self.n_gone -= 1;
                    if let Some(l) = &mut self.labels {
                        l.base[i] = label;
                    }
                } else {
                    self.n_gone += 1;
                }
                true
            }
            (Some(_), _) => false,
            (None, Some(label)) => {
                let new = self.added.insert(pack(key));
                if let (true, Some(l)) = (new, &mut self.labels) {
                    l.added.insert(pack(key), label);
                }
                new
            }
            (None, None) => {
                let was = self.added.remove(&pack(key));
                if let (true, Some(l)) = (was, &mut self.labels) {
                    l.added.remove(&pack(key));
                }
                was
            }
        }
    }

    pub fn len(&self) -> usize {
        self.high.len() - self.n_gone + self.added.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every key, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = EdgeKey> + '_ {
        self.base_keys().chain(self.added.iter().map(|&k| unpack(k)))
    }

    /// The base keys not removed, in increasing order.
    fn base_keys(&self) -> impl Iterator<Item = EdgeKey> + '_ {
        self.offsets.windows(2).enumerate().flat_map(move |(u, w)| {
            (w[0] as usize..w[1] as usize)
                .filter(move |&i| !self.is_gone(i))
                .map(move |i| (u as VertexId, self.high[i]))
        })
    }

    /// The keys with an endpoint in `vs`, sorted, each once: the ranges of
    /// `vs`, then one scan of the whole base (4 bytes an edge, read in
    /// order) for those where a vertex of `vs` is the larger endpoint, and
    /// of the inserted edges.
    pub fn keys_at_any(&self, vs: &[VertexId]) -> Vec<EdgeKey> {
        let Some(&top) = vs.iter().max() else {
            return Vec::new();
        };
        let mut marked = vec![0u64; top as usize / 64 + 1];
        for &v in vs {
            marked[v as usize / 64] |= 1 << (v % 64);
        }
        let hit = |x: VertexId| marked.get(x as usize / 64).is_some_and(|w| w >> (x % 64) & 1 != 0);
        let mut out = Vec::new();
        for &v in vs {
            if let Some(w) = self.offsets.get(v as usize..v as usize + 2) {
                let range = w[0] as usize..w[1] as usize;
                out.extend(self.high[range].iter().filter(|&&x| x & GONE == 0).map(|&x| (v, x)));
            }
        }
        // the vertex ids present stay below GONE, so a removed entry never hits
        for (i, &x) in self.high.iter().enumerate() {
            if x <= top && hit(x) {
                let u = self.offsets.partition_point(|&o| o as usize <= i) - 1;
                out.push((u as VertexId, x));
            }
        }
        out.extend(self.added.iter().map(|&k| unpack(k)).filter(|&(a, b)| hit(a) || hit(b)));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        // a hash set slot: the key and a control byte; a label map's: the
        // key, the label, padding and a control byte
        let labels = self
            .labels
            .as_ref()
            .map_or(0, |l| l.base.capacity() * 4 + l.added.capacity() * 17);
        self.offsets.capacity() * 4 + self.high.capacity() * 4 + self.added.capacity() * 9 + labels
    }

    /// Merges the changes into a new base once the inserted edges pass an
    /// eighth of the base or the removed ones a quarter (amortised O(1) an
    /// update: the merge is linear in the set plus a sort of the inserted
    /// edges). Memory stays under 9 bytes a present edge in the worst case
    /// (a base a quarter removed and a full hash set), 4-5.5 typically
    /// (labels add 5-7 and 4.5-8.5 more).
    fn merge_if_due(&mut self) {
        let base = self.high.len();
        if self.added.len() <= self.slack + base / 8 && self.n_gone <= self.slack + base / 4 {
            return;
        }
        let len = self.len();
        if len > MAX_BASE {
            return;
        }
        let mut added: Vec<EdgeKey> = self.added.drain().map(unpack).collect();
        added.sort_unstable();
        let n_low = (self.offsets.len().saturating_sub(1)).max(added.last().map_or(0, |k| k.0 as usize + 1));
        let mut offsets = Vec::with_capacity(n_low + 1);
        let mut high = Vec::with_capacity(len);
        // the new base's labels: each kept base entry's, each inserted key's
        let mut labels = self.labels.take().map(|l| (l, Vec::with_capacity(len)));
        let mut rest = &added[..];
        for u in 0..n_low {
            offsets.push(high.len() as u32);
            let (lo, hi) = match self.offsets.get(u..u + 2) {
                Some(w) => (w[0] as usize, w[1] as usize),
                None => (0, 0),
            };
            let n_new = rest.iter().take_while(|k| k.0 as usize == u).count();
            let (new, after) = rest.split_at(n_new);
            rest = after;
            let mut new = new.iter().map(|k| k.1).peekable();
            // `Ok(i)`: base entry `i`; `Err(w)`: the inserted key `(u, w)`
            let mut push = |high: &mut Vec<VertexId>, from: Result<usize, VertexId>| {
                high.push(from.map_or_else(|w| w, |i| self.high[i]));
                if let Some((old, base)) = &mut labels {
                    base.push(from.map_or_else(|w| old.added[&pack((u as VertexId, w))], |i| old.base[i]));
                }
            };
            for i in lo..hi {
                if self.high[i] & GONE != 0 {
                    continue;
                }
                let v = self.high[i];
                while let Some(w) = new.next_if(|&w| w < v) {
                    push(&mut high, Err(w));
                }
                push(&mut high, Ok(i));
            }
            for w in new {
                push(&mut high, Err(w));
            }
        }
        offsets.push(high.len() as u32);
        debug_assert_eq!(high.len(), len);
        self.n_gone = 0;
        self.offsets = offsets;
        self.high = high;
        self.labels = labels.map(|(_, base)| Labels {
            base,
            added: HashMap::default(),
        });
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn duplicates_are_refused() {
        assert_eq!(EdgeSet::from_keys(vec![(1, 2), (0, 3), (1, 2)]).unwrap_err(), (1, 2));
        let s = EdgeSet::from_keys(vec![(1, 2), (0, 3), (5, 9)]).unwrap();
        assert!(s.contains((0, 3)) && s.contains((5, 9)) && !s.contains((0, 2)) && !s.contains((9, 10)));
    }

    #[test]
    fn stays_compact_over_a_long_history() {
        let keys: Vec<EdgeKey> = (0..20_000u32).map(|i| (i, i + 1 + i % 7)).collect();
        let mut s = EdgeSet::from_keys(keys.clone()).unwrap();
        let mut oracle: BTreeSet<EdgeKey> = keys.iter().copied().collect();
        for (round, &(u, v)) in keys.iter().enumerate().cycle().take(200_000) {
            let k = if round % 3 == 0 { (u, v) } else { (u, v + 100) };
            let present = oracle.contains(&k);
            if present {
                assert!(s.remove(k));
                oracle.remove(&k);
            } else {
                assert!(s.insert(k, NO_EDGE_LABEL));
                oracle.insert(k);
            }
            assert!(s.memory_bytes() <= 7 * s.len() + 4 * 40_000 + 64 * MERGE_SLACK);
        }
        assert_eq!(s.len(), oracle.len());
        let mut all: Vec<EdgeKey> = s.keys().collect();
        all.sort_unstable();
        assert!(all.iter().eq(oracle.iter()));
    }

    /// A set of `base` (keys made `u < v`, self-loops dropped, a key's
    /// first label kept), with or without labels, and its oracle: a map to
    /// each key's label (0 without labels).
    fn labelled_set(base: Vec<(u32, u32, Label)>, labelled: bool, slack: usize) -> (EdgeSet, BTreeMap<EdgeKey, Label>) {
        let mut oracle = BTreeMap::new();
        for (a, b, l) in base.into_iter().filter(|(a, b, _)| a != b) {
            oracle
                .entry((a.min(b), a.max(b)))
                .or_insert(if labelled { l } else { NO_EDGE_LABEL });
        }
        let edges: Vec<(EdgeKey, Label)> = oracle.iter().map(|(&k, &l)| (k, l)).collect();
        let mut s = if labelled {
            EdgeSet::from_labelled(edges).unwrap()
        } else {
            EdgeSet::from_keys(edges.into_iter().map(|e| e.0).collect()).unwrap()
        };
        s.slack = slack;
        (s, oracle)
    }

    #[test]
    fn a_labelled_set_gives_back_each_label() {
        let mut s = EdgeSet::from_labelled(vec![((1, 2), 7), ((0, 3), 4)]).unwrap();
        assert_eq!(s.label((1, 2)), Some(7));
        assert!(s.insert((2, 5), 9) && !s.insert((2, 5), 1));
        assert!(s.remove((0, 3)) && s.insert((0, 3), 6));
        assert_eq!(
            [s.label((2, 5)), s.label((0, 3)), s.label((0, 2))],
            [Some(9), Some(6), None]
        );
        let u = EdgeSet::from_keys(vec![(1, 2)]).unwrap();
        assert!(!u.is_labelled() && u.label((1, 2)) == Some(NO_EDGE_LABEL));
        assert_eq!(
            EdgeSet::from_labelled(vec![((1, 2), 7), ((1, 2), 3)]).unwrap_err(),
            (1, 2)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Against a `BTreeMap` of each key's label, with merges forced
        /// often (a small base), with and without labels.
        #[test]
        fn behaves_as_a_set(
            base in proptest::collection::vec((0u32..40, 0u32..40, 0u32..4), 0..60),
            ops in proptest::collection::vec((any::<bool>(), 0u32..40, 0u32..40, 0u32..4), 0..3000),
            slack in 0usize..40,
            vs in proptest::collection::vec(0u32..45, 0..6),
            labelled in any::<bool>(),
        ) {
            let (mut s, mut oracle) = labelled_set(base, labelled, slack);
            for (insert, a, b, l) in ops {
                if a == b { continue; }
                let k = (a.min(b), a.max(b));
                if insert {
                    let l = if labelled { l } else { NO_EDGE_LABEL };
                    let new = !oracle.contains_key(&k);
                    if new {
                        oracle.insert(k, l);
                    }
                    prop_assert_eq!(s.insert(k, l), new);
                } else {
                    prop_assert_eq!(s.remove(k), oracle.remove(&k).is_some());
                }
                prop_assert_eq!(s.len(), oracle.len());
                prop_assert_eq!(s.label(k), oracle.get(&k).copied());
            }
            let keys: BTreeSet<EdgeKey> = oracle.keys().copied().collect();
            for a in 0..41 {
                for b in a + 1..41 {
                    prop_assert_eq!(s.label((a, b)), oracle.get(&(a, b)).copied());
                }
                let mut at = s.keys_at_any(&[a]);
                at.sort_unstable();
                let want: Vec<EdgeKey> = keys.iter().copied().filter(|&(x, y)| x == a || y == a).collect();
                prop_assert_eq!(at, want);
            }
            let want: Vec<EdgeKey> =
                keys.iter().copied().filter(|&(x, y)| vs.contains(&x) || vs.contains(&y)).collect();
            prop_assert_eq!(s.keys_at_any(&vs), want);
        }

        /// Batches of changes (keys repeat), against a `BTreeMap`: the same
        /// set, labels and changes reported, with slots found before the
        /// batch for some keys, and stale slots after a merge.
        #[test]
        fn applies_batches_of_changes_as_a_set(
            base in proptest::collection::vec((0u32..40, 0u32..40, 0u32..4), 0..60),
            batches in proptest::collection::vec(
                proptest::collection::vec((any::<bool>(), 0u32..40, 0u32..40, 0u32..4, any::<bool>()), 0..600), 0..8),
            slack in 0usize..40,
            stale in any::<bool>(),
            labelled in any::<bool>(),
        ) {
            let (mut s, mut oracle) = labelled_set(base, labelled, slack);
            for ops in batches {
                let stale = stale && s.generation() > 0;
                let generation = s.generation() - u64::from(stale);
                let changes: Vec<(EdgeKey, Option<Label>, BaseSlot)> = ops
                    .into_iter()
                    .filter(|&(_, a, b, _, _)| a != b)
                    .map(|(insert, a, b, l, look)| {
                        let k = (a.min(b), a.max(b));
                        let slot = if look { s.find(k).1 } else { BaseSlot::UNKNOWN };
                        // a stale generation's slots point anywhere
                        let slot = if stale && look { BaseSlot(0) } else { slot };
                        let l = if labelled { l } else { NO_EDGE_LABEL };
                        (k, insert.then_some(l), slot)
                    })
                    .collect();
                let mut want = Vec::new();
                for &(k, insert, _) in &changes {
                    let changed = match insert {
                        Some(l) => !oracle.contains_key(&k) && oracle.insert(k, l).is_none(),
                        None => oracle.remove(&k).is_some(),
                    };
                    if changed {
                        want.push((k, insert.is_some()));
                    }
                }
                let mut got = Vec::new();
                s.apply_changes(changes, generation, |k, insert| got.push((k, insert)));
                prop_assert_eq!(got, want);
                prop_assert_eq!(s.len(), oracle.len());
                let mut all: Vec<EdgeKey> = s.keys().collect();
                all.sort_unstable();
                prop_assert!(all.iter().eq(oracle.keys()));
                for (&k, &l) in &oracle {
                    let (present, slot) = s.find(k);
                    prop_assert!(present);
                    prop_assert_eq!(s.label_at(k, slot), l);
                    prop_assert_eq!(s.label_at(k, BaseSlot::UNKNOWN), l);
                }
            }
        }
    }
}
