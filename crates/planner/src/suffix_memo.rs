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

use std::sync::atomic::{AtomicU64, Ordering};

use csm_graph::VertexId;

use crate::plan::{Plan, SUFFIX_KEY_MAX};

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
}
