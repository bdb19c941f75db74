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

use std::collections::HashSet;

use foldhash::fast::FixedState;

use crate::types::VertexId;

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
    /// [`MERGE_SLACK`], smaller in tests that want merges.
    slack: usize,
    /// Merges so far: a [`BaseSlot`] found before the last one is stale.
    generation: u64,
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

impl EdgeSet {
    /// The set of `keys` (each `u < v`); `Err` with a key given twice, or
    /// with the first key when the base would pass `u32::MAX - 2` edges.
    pub fn from_keys(mut keys: Vec<EdgeKey>) -> Result<EdgeSet, EdgeKey> {
        if keys.len() > MAX_BASE {
            return Err(keys[0]);
        }
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(w[0]);
        }
        Ok(Self::from_sorted(keys.iter().copied(), keys.len(), MERGE_SLACK))
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

    /// Merges of the base so far ([`BaseSlot`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Adds `key` (`u < v`); whether it was new.
    pub fn insert(&mut self, key: EdgeKey) -> bool {
        let new = self.change_at(key, self.base_index(key), true);
        self.merge_if_due();
        new
    }

    /// Removes `key` (`u < v`); whether it was there.
    pub fn remove(&mut self, key: EdgeKey) -> bool {
        let was = self.change_at(key, self.base_index(key), false);
        self.merge_if_due();
        was
    }

    /// Inserts (`true`) or removes each key of `changes`, in order (a key
    /// may repeat), calling `on_change` for each change that changed the
    /// set (an insertion of a new key, a removal of a present one). Each
    /// change comes with where a lookup found its key in `generation`: when
    /// that is still this set's generation, known slots skip the lookup
    /// (a binary search). They stay valid through the changes because a
    /// due merge waits for the last one.
    pub fn apply_changes(
        &mut self,
        changes: impl IntoIterator<Item = (EdgeKey, bool, BaseSlot)>,
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
                on_change(key, insert);
            }
        }
        self.merge_if_due();
    }

    /// Inserts or removes `key`, whose base index is `i`; whether the set
    /// changed. No merge.
    #[inline]
    fn change_at(&mut self, key: EdgeKey, i: Option<usize>, insert: bool) -> bool {
        match i {
            Some(i) if self.is_gone(i) == insert => {
                self.flip_gone(i);
                if insert {
                    self.n_gone -= 1;
                } else {
                    self.n_gone += 1;
                }
                true
            }
            Some(_) => false,
            None if insert => self.added.insert(pack(key)),
            None => self.added.remove(&pack(key)),
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
        // a hash set slot: the key and a control byte
        self.offsets.capacity() * 4 + self.high.capacity() * 4 + self.added.capacity() * 9
    }

    /// Merges the changes into a new base once the inserted edges pass an
    /// eighth of the base or the removed ones a quarter (amortised O(1) an
    /// update: the merge is linear in the set plus a sort of the inserted
    /// edges). Memory stays under 9 bytes a present edge in the worst case
    /// (a base a quarter removed and a full hash set), 4-5.5 typically.
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
            for i in lo..hi {
                if self.is_gone(i) {
                    continue;
                }
                let v = self.high[i];
                while let Some(w) = new.next_if(|&w| w < v) {
                    high.push(w);
                }
                high.push(v);
            }
            high.extend(new);
        }
        offsets.push(high.len() as u32);
        debug_assert_eq!(high.len(), len);
        self.n_gone = 0;
        self.offsets = offsets;
        self.high = high;
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

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
                assert!(s.insert(k));
                oracle.insert(k);
            }
            assert!(s.memory_bytes() <= 7 * s.len() + 4 * 40_000 + 64 * MERGE_SLACK);
        }
        assert_eq!(s.len(), oracle.len());
        let mut all: Vec<EdgeKey> = s.keys().collect();
        all.sort_unstable();
        assert!(all.iter().eq(oracle.iter()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Against a `BTreeSet`, with merges forced often (a small base).
        #[test]
        fn behaves_as_a_set(
            base in proptest::collection::vec((0u32..40, 0u32..40), 0..60),
            ops in proptest::collection::vec((any::<bool>(), 0u32..40, 0u32..40), 0..3000),
            slack in 0usize..40,
            vs in proptest::collection::vec(0u32..45, 0..6),
        ) {
            let base: BTreeSet<EdgeKey> =
                base.into_iter().filter(|(a, b)| a != b).map(|(a, b)| (a.min(b), a.max(b))).collect();
            let mut s = EdgeSet::from_keys(base.iter().copied().collect()).unwrap();
            s.slack = slack;
            let mut oracle = base;
            for (insert, a, b) in ops {
                if a == b { continue; }
                let k = (a.min(b), a.max(b));
                if insert {
                    prop_assert_eq!(s.insert(k), oracle.insert(k));
                } else {
                    prop_assert_eq!(s.remove(k), oracle.remove(&k));
                }
                prop_assert_eq!(s.len(), oracle.len());
                prop_assert!(s.contains(k) == oracle.contains(&k));
            }
            for a in 0..41 {
                for b in a + 1..41 {
                    prop_assert_eq!(s.contains((a, b)), oracle.contains(&(a, b)));
                }
                let mut at = s.keys_at_any(&[a]);
                at.sort_unstable();
                let want: Vec<EdgeKey> = oracle.iter().copied().filter(|&(x, y)| x == a || y == a).collect();
                prop_assert_eq!(at, want);
            }
            let want: Vec<EdgeKey> =
                oracle.iter().copied().filter(|&(x, y)| vs.contains(&x) || vs.contains(&y)).collect();
            prop_assert_eq!(s.keys_at_any(&vs), want);
        }

        /// Batches of changes (keys repeat), against a `BTreeSet`: the same
        /// set and the same changes reported, with slots found before the
        /// batch for some keys, and stale slots after a merge.
        #[test]
        fn applies_batches_of_changes_as_a_set(
            base in proptest::collection::vec((0u32..40, 0u32..40), 0..60),
            batches in proptest::collection::vec(
                proptest::collection::vec((any::<bool>(), 0u32..40, 0u32..40, any::<bool>()), 0..600), 0..8),
            slack in 0usize..40,
            stale in any::<bool>(),
        ) {
            let base: BTreeSet<EdgeKey> =
                base.into_iter().filter(|(a, b)| a != b).map(|(a, b)| (a.min(b), a.max(b))).collect();
            let mut s = EdgeSet::from_keys(base.iter().copied().collect()).unwrap();
            s.slack = slack;
            let mut oracle = base;
            for ops in batches {
                let stale = stale && s.generation() > 0;
                let generation = s.generation() - u64::from(stale);
                let changes: Vec<(EdgeKey, bool, BaseSlot)> = ops
                    .into_iter()
                    .filter(|&(_, a, b, _)| a != b)
                    .map(|(insert, a, b, look)| {
                        let k = (a.min(b), a.max(b));
                        let slot = if look { s.find(k).1 } else { BaseSlot::UNKNOWN };
                        // a stale generation's slots point anywhere
                        let slot = if stale && look { BaseSlot(0) } else { slot };
                        (k, insert, slot)
                    })
                    .collect();
                let mut want = Vec::new();
                for &(k, insert, _) in &changes {
                    let changed = if insert { oracle.insert(k) } else { oracle.remove(&k) };
                    if changed {
                        want.push((k, insert));
                    }
                }
                let mut got = Vec::new();
                s.apply_changes(changes, generation, |k, insert| got.push((k, insert)));
                prop_assert_eq!(got, want);
                prop_assert_eq!(s.len(), oracle.len());
                let mut all: Vec<EdgeKey> = s.keys().collect();
                all.sort_unstable();
                prop_assert!(all.iter().eq(oracle.iter()));
            }
        }
    }
}
