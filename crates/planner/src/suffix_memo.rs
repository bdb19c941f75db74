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

/// The depth, then the key bindings (`VertexId::MAX` where unused).
type Key = [VertexId; 1 + SUFFIX_KEY_MAX];

/// One entry.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    scope: u64,
    plan: usize,
    hash: u64,
    key: Key,
    n: u64,
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
    hash: u64,
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
        let mut key = [VertexId::MAX; 1 + SUFFIX_KEY_MAX];
        key[0] = d as VertexId;
        let id = plan as *const Plan as usize;
        let mut hash = id as u64 ^ d as u64;
        let mut mask = plan.suffix_deps[d];
        let mut k = 1;
        while mask != 0 {
            let p = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            key[k] = emb[p];
            hash = (hash ^ emb[p] as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            k += 1;
        }
        let slot = self.index(hash);
        let e = &self.slots[slot];
        if e.scope == scope && e.plan == id && e.key == key {
            Ok(e.n)
        } else {
            Err(Pending { slot, hash, key })
        }
    }

    /// Stores `n`, the completions of the node `pending` came from.
    #[inline]
    pub(crate) fn store(&mut self, scope: u64, plan: &Plan, pending: Pending, n: u64) {
        let new = Slot {
            scope,
            plan: plan as *const Plan as usize,
            hash: pending.hash,
            key: pending.key,
            n,
        };
        let old = std::mem::replace(&mut self.slots[pending.slot], new);
        if old.scope == scope && (old.plan, old.key) != (new.plan, new.key) {
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
            let i = self.index(e.hash);
            self.slots[i] = e;
        }
        self.evicted = 0;
    }
}
