//! The suffix memo ([`Plan::suffix_memo`]): the completions of a node at
//! depth d depend only on the bindings at [`Plan::suffix_deps`]`[d]`, so a
//! counting run caches them by those bindings and every later node that
//! agrees on them takes the cached count instead of searching its subtree.
//! Along a path-shaped part of a query this is dynamic programming: the
//! completions from a vertex onwards are found once per data vertex (and
//! per binding of the few same-label vertices the rest must avoid), not
//! once per path that reaches it.
//!
//! Entries live for one *scope* ([`MemoScope`]): counts that read one
//! unchanged graph view. [`crate::Executor::count`] takes a fresh scope
//! for each count; a caller that runs many counts on one view (a batch's
//! seeds, a static count's start vertices) passes one scope to all of them
//! ([`crate::Executor::count_within`]), so that they share entries. The
//! executor of split parts counts in its parent's scope.
//!
//! The table is direct-mapped (a collision evicts); it starts small, so
//! that the many short counts of a one-update-at-a-time stream do not
//! each pay for clearing a large table, and grows while live entries keep
//! evicting each other.
//!
//! Each executor has its own table. Threads that count one scope together
//! (a static count's start vertices on a pool) would each find the same
//! completions again, so they may also share a [`SharedSuffixMemo`]
//! ([`crate::Executor::share_suffix`]): a fixed table of seqlocked slots,
//! asked after the executor's own table misses. Only completions whose
//! subtree took at least [`SHARE_MIN_WORK`] nodes are offered to it (a
//! cheaper one is quicker to count again than the shared slot's line is to
//! fetch), a count asks it only at depths where its scope stored, and a
//! depth whose lookups rarely hit stops asking (`SharedUse`). Static
//! counts on several threads share the process's table; batches do not
//! (it made batches of 512 and runs of single updates 3-8% slower on two
//! threads). Figures in docs/ENGINE.md ("Suffix memo").

use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::OnceLock;

use csm_graph::VertexId;

use crate::plan::{Plan, SUFFIX_KEY_MAX};
use crate::query::MAX_QUERY_VERTICES;

/// The key bindings (`VertexId::MAX` where unused).
type Key = [VertexId; SUFFIX_KEY_MAX];

/// One entry: 40 bytes, so that a table of the most slots stays within a
/// few megabytes (a lookup is mostly the wait for its slot's line).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    scope: u64,
    /// The plan's address shifted up past the depth ([`tag`]).
    tag: u64,
    key: Key,
    n: u64,
}

/// A plan and depth as one word: user-space addresses are below 2^57, so
/// the shift loses no bit of the plan's, and depths are below 32.
#[inline]
fn tag(plan: &Plan, d: usize) -> u64 {
    debug_assert!(d < 32);
    ((plan as *const Plan as u64) << 5) | d as u64
}

/// The bindings at `plan.suffix_deps[d]`, in position order.
#[inline]
fn key(plan: &Plan, d: usize, emb: &[VertexId]) -> Key {
    let mut key = [VertexId::MAX; SUFFIX_KEY_MAX];
    let mut mask = plan.suffix_deps[d];
    let mut k = 0;
    while mask != 0 {
        let p = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        key[k] = emb[p];
        k += 1;
    }
    key
}

/// Where an entry of `tag` and `key` goes in a table (before masking).
#[inline]
fn hash(tag: u64, key: &Key) -> u64 {
    key.iter()
        .fold(tag, |h, &b| (h ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Slots of a new table, and the most a table grows to.
const MIN_SLOTS: usize = 1 << 10;
const MAX_SLOTS: usize = 1 << 16;

/// Source of scope numbers (0, the empty slots' scope, is never handed out).
static SCOPES: AtomicU64 = AtomicU64::new(1);

/// Counts that read one unchanged graph view, across which the suffix
/// memo keeps its entries (see the module docs). Every count given a scope
/// must read the same view, with the same lists, as every other count
/// given it; a scope made anew shares nothing with earlier ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoScope(pub(crate) u64);

impl MemoScope {
    /// A fresh scope: no entry of another scope is ever returned in it.
    #[allow(clippy::new_without_default)]
    pub fn new() -> MemoScope {
        MemoScope(SCOPES.fetch_add(1, Ordering::Relaxed))
    }
}

/// Where a node's count goes once computed ([`SuffixMemo::lookup`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    slot: usize,
    tag: u64,
    key: Key,
}

/// Cached completions by plan, depth and key bindings.
#[derive(Clone, Debug, Default)]
pub(crate) struct SuffixMemo {
    slots: Vec<Slot>,
    /// Live entries (of the scope being stored) evicted since the table
    /// last grew.
    evicted: usize,
}

impl SuffixMemo {
    /// The cached completions of the node at depth `d` of `plan` whose
    /// bindings are `emb`, or where to store them once counted.
    #[inline]
    pub(crate) fn lookup(&mut self, scope: u64, plan: &Plan, d: usize, emb: &[VertexId]) -> Result<u64, Pending> {
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); MIN_SLOTS];
        }
        let key = key(plan, d, emb);
        let tag = tag(plan, d);
        let slot = self.index(hash(tag, &key));
        let e = &self.slots[slot];
        if e.scope == scope && e.tag == tag && e.key == key {
            Ok(e.n)
        } else {
            Err(Pending { slot, tag, key })
        }
    }

    /// Stores `n`, the completions of the node `pending` came from.
    #[inline]
    pub(crate) fn store(&mut self, scope: u64, pending: Pending, n: u64) {
        let new = Slot {
            scope,
            tag: pending.tag,
            key: pending.key,
            n,
        };
        let old = std::mem::replace(&mut self.slots[pending.slot], new);
        if old.scope == scope && (old.tag, old.key) != (new.tag, new.key) {
            self.evicted += 1;
            if self.evicted > self.slots.len() && self.slots.len() < MAX_SLOTS {
                self.grow(scope);
            }
        }
    }

    fn index(&self, hash: u64) -> usize {
        (hash >> 40) as usize & (self.slots.len() - 1)
    }

    /// Four times the slots, keeping the entries of `scope`.
    #[cold]
    fn grow(&mut self, scope: u64) {
        let len = (self.slots.len() * 4).min(MAX_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); len]);
        for e in old.into_iter().filter(|e| e.scope == scope) {
            let i = self.index(hash(e.tag, &e.key));
            self.slots[i] = e;
        }
        self.evicted = 0;
    }
}

/// Words of a [`SharedSuffixMemo`] slot: sequence, scope, tag, the key's
/// two pairs of bindings, count.
const WORDS: usize = 6;

/// The suffix memo shared by the threads of one count (see the module
/// docs): direct-mapped like `SuffixMemo`, but of a fixed size, each
/// slot guarded by a sequence number (a seqlock): a writer makes it odd,
/// writes, and makes it even again; a reader takes the entry only if the
/// number was even and unchanged across its reads. A writer that finds the
/// slot being written skips its store; a collision evicts.
#[derive(Debug)]
pub struct SharedSuffixMemo {
    words: Box<[AtomicU64]>,
    mask: usize,
    /// Per depth, the last scope that stored an entry there: a count looks
    /// the table up only at depths where its own scope stored one.
    stored_in: [AtomicU64; MAX_QUERY_VERTICES],
}

/// Nodes (calls below a memoised node) a subtree must have taken before
/// its count is offered to the shared table: cheaper ones are quicker to
/// count again than the shared slot's cache line is to fetch.
pub const SHARE_MIN_WORK: u64 = 32;

/// Lookups of the shared table at one depth (in one scope) before their
/// hit rate may shut that depth's lookups.
const GATE_TRIES: u32 = 512;

/// One executor's use of a [`SharedSuffixMemo`]: the table (none while
/// unset) and, per depth, how often the table answered in the current
/// scope, so that a depth whose lookups rarely hit stops asking (after
/// [`GATE_TRIES`] lookups, below 1 hit in 32).
#[derive(Clone, Debug)]
pub(crate) struct SharedUse {
    table: Option<&'static SharedSuffixMemo>,
    scope: u64,
    tries: [u32; MAX_QUERY_VERTICES],
    hits: [u32; MAX_QUERY_VERTICES],
}

impl SharedUse {
    pub(crate) fn new(table: &'static SharedSuffixMemo) -> SharedUse {
        SharedUse {
            table: Some(table),
            scope: 0,
            tries: [0; MAX_QUERY_VERTICES],
            hits: [0; MAX_QUERY_VERTICES],
        }
    }

    pub(crate) fn set_table(&mut self, table: Option<&'static SharedSuffixMemo>) {
        self.table = table;
    }

    pub(crate) fn table(&self) -> Option<&'static SharedSuffixMemo> {
        self.table
    }

    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        self.table.is_some()
    }

    /// The table's count for the node `pending` came from (a miss of the
    /// executor's own table), at depth `d` of a count in `scope`.
    #[inline(never)]
    pub(crate) fn lookup(&mut self, scope: u64, d: usize, pending: &Pending) -> Option<u64> {
        let table = self.table?;
        if self.scope != scope {
            self.scope = scope;
            self.tries = [0; MAX_QUERY_VERTICES];
            self.hits = [0; MAX_QUERY_VERTICES];
        }
        let worth = self.tries[d] < GATE_TRIES || self.hits[d] * 32 >= self.tries[d];
        if !worth || !table.holds(scope, d) {
            return None;
        }
        self.tries[d] += 1;
        let n = table.lookup(scope, pending)?;
        self.hits[d] += 1;
        Some(n)
    }

    /// Offers `n`, the completions of the node `pending` came from (at depth
    /// `d`, after `work` nodes), to the table: kept if `work` is at least
    /// [`SHARE_MIN_WORK`].
    #[inline(never)]
    pub(crate) fn store(&self, scope: u64, d: usize, pending: &Pending, n: u64, work: u64) {
        if let Some(table) = self.table.filter(|_| work >= SHARE_MIN_WORK) {
            table.store(scope, d, pending, n);
        }
    }
}

impl SharedSuffixMemo {
    /// A table of `slots` slots (rounded up to a power of two, at least 64).
    pub fn new(slots: usize) -> SharedSuffixMemo {
        let slots = slots.max(64).next_power_of_two();
        let words: Box<[AtomicU64]> = (0..slots * WORDS).map(|_| AtomicU64::new(0)).collect();
        // Written once here, on one thread: the allocation comes zeroed and
        // unmapped, and a first write to a page after other threads read it
        // costs a fault and a TLB shootdown on every core (15% of a 30 ms
        // count on two threads; about 3 ms here instead, once a process).
        // Huge pages (`madvise`) cut that to 1 ms but stalled some runs by
        // 13 ms (compaction), so they are not asked for.
        for w in words.iter().step_by(512) {
            w.store(0, Ordering::Relaxed);
        }
        SharedSuffixMemo {
            words,
            mask: slots - 1,
            stored_in: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// The process's table, made at first use: 2^17 slots (6 MB; fewer
    /// made q12s2 below slower by evictions: 2^15 1.2×, 2^13 1.6×).
    /// Entries are tied to their scope, so every count may use it, one
    /// after another or at once, without clearing it. Measured on Enron with
    /// 16 labels, static 12-vertex sparse queries on two threads: 2^17
    /// slots was quickest or within 5% of it on three queries; 2^19 was
    /// 1.2× slower on two of them (the wait for a slot's line), 2^16 1.5×
    /// slower on the third (evictions).
    pub fn global() -> &'static SharedSuffixMemo {
        static GLOBAL: OnceLock<SharedSuffixMemo> = OnceLock::new();
        GLOBAL.get_or_init(|| SharedSuffixMemo::new(1 << 17))
    }

    fn slot(&self, tag: u64, key: &Key) -> usize {
        (hash(tag, key) >> 40) as usize & self.mask
    }

    /// Whether any count stored an entry (for tests and diagnostics).
    pub fn used(&self) -> bool {
        self.stored_in.iter().any(|s| s.load(Ordering::Relaxed) != 0)
    }

    /// Whether a count of `scope` stored an entry at depth `d`.
    #[inline]
    pub(crate) fn holds(&self, scope: u64, d: usize) -> bool {
        self.stored_in[d].load(Ordering::Relaxed) == scope
    }

    /// The count the table holds for the node `pending` came from (a miss
    /// of an executor's own table), if any.
    #[inline]
    pub(crate) fn lookup(&self, scope: u64, pending: &Pending) -> Option<u64> {
        let w = &self.words[self.slot(pending.tag, &pending.key) * WORDS..][..WORDS];
        let seq = w[0].load(Ordering::Acquire);
        if seq & 1 == 1 {
            return None;
        }
        let (e_scope, e_tag) = (w[1].load(Ordering::Relaxed), w[2].load(Ordering::Relaxed));
        let (k01, k23) = (w[3].load(Ordering::Relaxed), w[4].load(Ordering::Relaxed));
        let n = w[5].load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        if w[0].load(Ordering::Relaxed) != seq {
            return None;
        }
        (e_scope == scope && e_tag == pending.tag && (k01, k23) == pairs(&pending.key)).then_some(n)
    }

    /// Stores `n`, the completions of the node `pending` came from, at depth `d`.
    #[inline]
    pub(crate) fn store(&self, scope: u64, d: usize, pending: &Pending, n: u64) {
        if self.stored_in[d].load(Ordering::Relaxed) != scope {
            self.stored_in[d].store(scope, Ordering::Relaxed);
        }
        let w = &self.words[self.slot(pending.tag, &pending.key) * WORDS..][..WORDS];
        let seq = w[0].load(Ordering::Relaxed);
        if seq & 1 == 1
            || w[0]
                .compare_exchange(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        fence(Ordering::Release);
        let (k01, k23) = pairs(&pending.key);
        w[1].store(scope, Ordering::Relaxed);
        w[2].store(pending.tag, Ordering::Relaxed);
        w[3].store(k01, Ordering::Relaxed);
        w[4].store(k23, Ordering::Relaxed);
        w[5].store(n, Ordering::Relaxed);
        w[0].store(seq + 2, Ordering::Release);
    }
}

const _: () = assert!(SUFFIX_KEY_MAX == 4, "a shared slot holds four bindings");

/// A key as two words.
#[inline]
fn pairs(key: &Key) -> (u64, u64) {
    let pair = |a: VertexId, b: VertexId| (a as u64) << 32 | b as u64;
    (pair(key[0], key[1]), pair(key[2], key[3]))
}

#[cfg(test)]
mod tests {
    use csm_graph::Version;

    use super::*;
    use crate::order::GcsmOrder;
    use crate::plan::static_plan;
    use crate::query::QueryGraph;
    use crate::stats::GraphStats;

    /// A path of five distinct labels: the completions at depths 2 and 3
    /// depend on as many bindings each.
    fn path_plan() -> Plan {
        let edges = [(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 4, 0)];
        let q = QueryGraph::new(vec![0, 1, 2, 3, 4], &edges, false).unwrap();
        let plan = static_plan(&q, &GcsmOrder, &GraphStats::default(), Version::Common);
        let deps = |d: usize| plan.suffix_deps[d];
        assert!(deps(2) != 0 && deps(2).count_ones() == deps(3).count_ones());
        plan
    }

    /// Bindings for depth `d` whose key is `key` (other positions 100+).
    fn holding(plan: &Plan, d: usize, key: &[VertexId]) -> Vec<VertexId> {
        let mut emb: Vec<VertexId> = (100..104).collect();
        let positions = (0..4).filter(|&p| plan.suffix_deps[d] >> p & 1 == 1);
        for (p, &v) in positions.zip(key) {
            emb[p] = v;
        }
        emb
    }

    /// Counts `n` for `d` and `emb` in `scope`, then asks again: whether
    /// the other lookup (`d2`, `emb2`, `scope2`, `plan2`) hits, and with what.
    fn after_store(
        (plan, d, emb, scope): (&Plan, usize, &[VertexId], u64),
        (plan2, d2, emb2, scope2): (&Plan, usize, &[VertexId], u64),
    ) -> Result<u64, Pending> {
        let mut memo = SuffixMemo::default();
        let pending = memo
            .lookup(scope, plan, d, emb)
            .expect_err("an empty memo holds nothing");
        memo.store(scope, pending, 42);
        assert_eq!(memo.lookup(scope, plan, d, emb).ok(), Some(42));
        memo.lookup(scope2, plan2, d2, emb2)
    }

    #[test]
    fn an_entry_answers_only_its_own_plan_depth_key_and_scope() {
        let (plan, other) = (path_plan(), path_plan());
        let scope = MemoScope::new().0;
        let k = plan.suffix_deps[2].count_ones() as usize;
        let key: Vec<VertexId> = (7..7 + k as VertexId).collect();
        let emb = &holding(&plan, 2, &key);
        // another node agreeing on the key bindings hits
        let mut agreeing = holding(&plan, 2, &key);
        agreeing.iter_mut().filter(|v| **v >= 100).for_each(|v| *v += 50);
        assert_eq!(
            after_store((&plan, 2, emb, scope), (&plan, 2, &agreeing, scope)).ok(),
            Some(42)
        );
        // the same key values at another depth do not
        let deeper = holding(&plan, 3, &key);
        assert!(after_store((&plan, 2, emb, scope), (&plan, 3, &deeper, scope)).is_err());
        // nor another key, plan or scope
        let moved = holding(&plan, 2, &(8..8 + k as VertexId).collect::<Vec<_>>());
        assert!(after_store((&plan, 2, emb, scope), (&plan, 2, &moved, scope)).is_err());
        assert!(after_store((&plan, 2, emb, scope), (&other, 2, emb, scope)).is_err());
        assert!(after_store((&plan, 2, emb, scope), (&plan, 2, emb, MemoScope::new().0)).is_err());
    }

    fn pending(plan: &Plan, d: usize, key: &[VertexId]) -> Pending {
        SuffixMemo::default()
            .lookup(1, plan, d, &holding(plan, d, key))
            .expect_err("an empty memo holds nothing")
    }

    /// The shared table answers like an executor's own: its own plan,
    /// depth, key and scope only, and only at depths where the scope stored;
    /// a use of it offers only subtrees of [`SHARE_MIN_WORK`] nodes.
    #[test]
    fn the_shared_table_answers_only_its_own_entries() {
        let plan = path_plan();
        let k = plan.suffix_deps[2].count_ones() as usize;
        let key: Vec<VertexId> = (7..7 + k as VertexId).collect();
        let p = pending(&plan, 2, &key);
        let t: &'static SharedSuffixMemo = Box::leak(Box::new(SharedSuffixMemo::new(64)));
        let (scope, other) = (MemoScope::new().0, MemoScope::new().0);
        assert!(!t.holds(scope, 2));
        t.store(scope, 2, &p, 42);
        assert!(t.holds(scope, 2) && !t.holds(scope, 3) && !t.holds(other, 2));
        assert_eq!(t.lookup(scope, &p), Some(42));
        assert_eq!(t.lookup(other, &p), None);
        assert_eq!(t.lookup(scope, &pending(&plan, 3, &key)), None);
        let moved: Vec<VertexId> = (8..8 + k as VertexId).collect();
        assert_eq!(t.lookup(scope, &pending(&plan, 2, &moved)), None);

        let mut u = SharedUse::new(t);
        let fresh = MemoScope::new().0;
        u.store(fresh, 2, &p, 5, SHARE_MIN_WORK - 1);
        assert_eq!(u.lookup(fresh, 2, &p), None, "a cheap subtree is not shared");
        u.store(fresh, 2, &p, 5, SHARE_MIN_WORK);
        assert_eq!(u.lookup(fresh, 2, &p), Some(5));
        u.set_table(None);
        assert_eq!(u.lookup(fresh, 2, &p), None);
    }

    /// Threads storing and reading one small table at once never read a
    /// torn entry: every hit is the count stored for its key.
    #[test]
    fn concurrent_stores_never_tear_an_entry() {
        let plan = path_plan();
        let k = plan.suffix_deps[2].count_ones() as usize;
        let t: &'static SharedSuffixMemo = Box::leak(Box::new(SharedSuffixMemo::new(64)));
        let scope = MemoScope::new().0;
        let keys: Vec<(Pending, u64)> = (0..400u32)
            .map(|i| {
                let key: Vec<VertexId> = (0..k as u32).map(|j| i * 7 + j).collect();
                (pending(&plan, 2, &key), u64::from(i) * 1_000_003)
            })
            .collect();
        let hits = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for w in 0..4 {
                let (keys, hits) = (&keys, &hits);
                s.spawn(move || {
                    for round in 0..200 {
                        for (i, (p, n)) in keys.iter().enumerate() {
                            if (i + w + round) % 3 == 0 {
                                t.store(scope, 2, p, *n);
                            } else if let Some(got) = t.lookup(scope, p) {
                                assert_eq!(got, *n, "a torn or foreign entry");
                                hits.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert!(hits.load(Ordering::Relaxed) > 0);
    }
}
