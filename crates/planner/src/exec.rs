//! The generic plan executor: a depth-first nested loop over any
//! [`GraphView`], with a [`Visitor`] hook at every execution-tree node
//! (GCSM Fig. 4a) and reusable per-depth buffers (no allocation per node).
//!
//! Two shortcuts keep work proportional to what must be computed:
//! * counting does not enumerate what it can count: at the last level the
//!   number of matches is the candidate-set size minus the earlier same-label
//!   bindings that fall inside it (injectivity conflicts);
//! * a level whose lists include all lists of an earlier level
//!   ([`Level::reuse`]) starts from that level's candidate buffer instead of
//!   intersecting those lists again (cliques, diamonds);
//! * a level's reads bound well above it ([`Level::partial`]) are
//!   intersected once per node at the depth where the last of them is
//!   bound, into a buffer of their own, and each node of the level
//!   intersects that buffer with its remaining lists;
//! * a list that stays fixed while a parent loops over many siblings (N(x)
//!   in a 4-cycle's last level) is marked once in a bitmap, and each sibling
//!   probes only its own lists against it;
//! * failing sets (DAF, Han et al. SIGMOD'19 Sec. 5) skip siblings that
//!   must fail too. A subtree that counts 0 returns the positions whose
//!   bindings alone rule it out: a level without candidates, those its
//!   candidate set depends on ([`Plan::fail_deps`]); a level whose every
//!   child failed, the union of the children's sets without its own
//!   position, plus its own dependencies. When a child's set leaves out
//!   the position its parent loops over, rebinding that position cannot
//!   help, and the parent's loop stops: a tree query's dead branch (a leaf
//!   label absent around a bound vertex) is found once, not once per
//!   binding of every unrelated level ordered before it. Counting and
//!   enumeration prune so; observing visitors (the sampler) see the whole
//!   tree;
//! * the completions of a node depend only on the few bindings its subtree
//!   reads or checks ([`Plan::suffix_deps`]): a count caches them by those
//!   bindings ([`Plan::suffix_memo`], `suffix_memo.rs`), so a path-shaped
//!   part is counted by dynamic programming instead of path by path.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use csm_graph::{GraphView, Label, Nbrs, Version, VertexId};

use crate::count;
use crate::intersect::{intersect_into, intersect_len, sorted_intersection_into, sorted_overlap, Operand};
use crate::plan::{below, Level, Plan, Read, WideTail};
use crate::query::MAX_QUERY_VERTICES;
use crate::quota::{Quota, Tally};
use crate::suffix_memo::{MemoScope, Pending, SharedSuffixMemo, SharedUse, SuffixMemo};

/// Observes (and may prune) the execution tree.
///
/// `enter` is called when a node with `depth` bound vertices is about to read
/// the lists of `plan.levels[depth].reads` to compute its children; returning
/// `false` skips the node (its subtree counts 0). `leave` pairs with every
/// `enter` that returned `true`. Leaves (complete matches) read nothing and
/// are not visited.
pub trait Visitor {
    /// False for visitors that ignore every call: counting may then skip
    /// whole levels of the tree (see [`Plan::independent_tail`]).
    const OBSERVES: bool = true;

    #[inline(always)]
    fn enter(&mut self, _depth: usize, _emb: &[VertexId], _level: &Level) -> bool {
        true
    }
    #[inline(always)]
    fn leave(&mut self, _depth: usize) {}
}

/// The visitor that does nothing (compiled away).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoVisitor;
impl Visitor for NoVisitor {
    const OBSERVES: bool = false;
}

/// Reusable state for running plans; one per thread.
#[derive(Clone, Debug)]
pub struct Executor {
    bufs: Vec<Vec<VertexId>>,
    /// Per level: its [`Level::partial`] intersection, label-filtered,
    /// valid where `partials_fresh` has the level's bit (computed on first
    /// use below the node that bound its last input, so that a subtree that
    /// dies before the level costs nothing).
    partials: Vec<Vec<VertexId>>,
    partials_fresh: u32,
    tmp: Vec<VertexId>,
    emb: [VertexId; MAX_QUERY_VERTICES],
    /// Per level: membership bitmap of its pinned list (see the module docs).
    bits: Vec<Vec<u64>>,
    /// Per level: index into its `extra` of the pinned read, if any.
    pinned: [Option<u8>; MAX_QUERY_VERTICES],
    /// Bit d: level d's pinned list is a label group (see [`list_of`]).
    pinned_grouped: u32,
    /// Last-level intersection sizes by the vertex bound just above it (see
    /// [`Plan::memo_from`]), valid while `memo_epoch` is unchanged.
    memo: Vec<MemoSlot>,
    memo_epoch: u64,
    /// A memo shared with the other parts of a split node, used instead of
    /// `memo` while set ([`Executor::share_memo`]).
    shared: Option<Arc<SharedMemo>>,
    /// Matches counted against a [`Quota`], if one is set.
    tally: Tally,
    /// After a subtree counted 0 (with a visitor that does not observe):
    /// its failing set, the positions whose bindings alone rule out every
    /// completion (see the module docs).
    fail: u32,
    /// Per level: the positions whose bindings its last [`Executor::fill`]
    /// left out of its candidates (injectivity).
    hits: [u32; MAX_QUERY_VERTICES],
    /// Counts the parts of a [`Plan::split`] (made at the first split).
    parts: Option<Box<Executor>>,
    /// Completions of nodes by plan, depth and [`Plan::suffix_deps`]
    /// bindings ([`Plan::suffix_memo`]), valid within one count: entries of
    /// another `scope` are stale.
    suffix: SuffixMemo,
    /// A suffix memo shared with other threads, asked after `suffix`
    /// misses while set ([`Executor::share_suffix`]; kept, unset, between
    /// uses).
    shared_suffix: Option<Box<SharedUse>>,
    /// The scope of the count in progress ([`MemoScope`]; the executor of
    /// split parts counts in its parent's).
    scope: u64,
    /// Inner nodes visited so far (what a memoised subtree cost, for
    /// [`SharedUse::store`]).
    work: u64,
}

/// Last-level intersection sizes ([`Plan::memo_from`]) shared by the
/// threads that count the parts of one node split across a pool, so that
/// the parts do not each fill a memo of their own. Valid for the subtree of
/// a node with at least `memo_from` bound vertices (every binding the sizes
/// depend on, besides the key, is then fixed). Entries are one atomic word
/// each (key + 1, size); racing writers store the same value, and a
/// collision just evicts.
#[derive(Debug)]
pub struct SharedMemo {
    slots: Box<[AtomicU64]>,
    /// `32 - log2(slots)`: a key's slot is the top bits of its hash.
    shift: u32,
}

impl SharedMemo {
    /// A memo of the per-thread memo's size.
    pub fn new() -> Self {
        Self::with_capacity(MEMO_SLOTS)
    }

    /// A memo of about `keys` slots (a power of two from 2^10 up to the
    /// per-thread memo's size): a node with little work below it has few
    /// keys, and clearing a table larger than its work would cost more
    /// than the memo saves.
    pub fn with_capacity(keys: usize) -> Self {
        let n = keys.min(MEMO_SLOTS).next_power_of_two().max(1 << 10);
        SharedMemo {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            shift: 32 - n.trailing_zeros(),
        }
    }

    #[inline]
    fn slot(&self, key: VertexId) -> &AtomicU64 {
        &self.slots[memo_index(key, self.shift)]
    }

    #[inline]
    fn get(&self, key: VertexId) -> Option<u64> {
        let w = self.slot(key).load(Ordering::Relaxed);
        (w >> 32 == key as u64 + 1).then_some(w & 0xFFFF_FFFF)
    }

    #[inline]
    fn put(&self, key: VertexId, n: u64) {
        self.slot(key)
            .store((key as u64 + 1) << 32 | (n & 0xFFFF_FFFF), Ordering::Relaxed);
    }
}

impl Default for SharedMemo {
    fn default() -> Self {
        Self::new()
    }
}

/// One direct-mapped memo entry.
#[derive(Clone, Copy, Debug, Default)]
struct MemoSlot {
    key: VertexId,
    n: u32,
    epoch: u64,
}

/// Slots of the last-level memo (direct-mapped; collisions just evict).
const MEMO_SLOTS: usize = 1 << 15;

/// The multiplier of the memos' key hash (Fibonacci hashing: a slot is the
/// product's top bits).
const MEMO_HASH: VertexId = 0x9E37_79B9;

/// `key`'s slot in a memo of `2^(32 - shift)` slots: the top bits of its hash.
#[inline]
fn memo_index(key: VertexId, shift: u32) -> usize {
    (key.wrapping_mul(MEMO_HASH) >> shift) as usize
}

/// `key`'s slot in the per-thread memo ([`MEMO_SLOTS`]).
#[inline]
fn memo_slot(key: VertexId) -> usize {
    memo_index(key, 32 - MEMO_SLOTS.trailing_zeros())
}

impl Default for Executor {
    fn default() -> Self {
        Executor {
            bufs: vec![Vec::new(); MAX_QUERY_VERTICES],
            partials: vec![Vec::new(); MAX_QUERY_VERTICES],
            partials_fresh: 0,
            tmp: Vec::new(),
            emb: [0; MAX_QUERY_VERTICES],
            bits: vec![Vec::new(); MAX_QUERY_VERTICES],
            pinned: [None; MAX_QUERY_VERTICES],
            pinned_grouped: 0,
            memo: Vec::new(),
            memo_epoch: 1,
            shared: None,
            tally: Tally::default(),
            fail: 0,
            hits: [0; MAX_QUERY_VERTICES],
            parts: None,
            suffix: SuffixMemo::default(),
            shared_suffix: None,
            scope: 0,
            work: 0,
        }
    }
}

/// Parent loops shorter than this do not pin a list.
const PIN_MIN_SIBLINGS: usize = 8;

#[inline]
fn bit(bits: &[u64], x: VertexId) -> bool {
    bits[x as usize >> 6] >> (x & 63) & 1 == 1
}

/// The smallest vertex id `level` may bind given the bindings at positions
/// below `bound`: one above the largest of those it must exceed
/// ([`Level::above`]; 0 without bounds). Callers pass the level's own depth
/// (every bound applies) or less (bounds on unbound positions are left out).
#[inline]
fn first_allowed(emb: &[VertexId], level: &Level, bound: usize) -> VertexId {
    level
        .above
        .iter()
        .filter(|&&p| (p as usize) < bound)
        .map(|&p| emb[p as usize] + 1)
        .max()
        .unwrap_or(0)
}

/// Whether `conflicts[k]`'s binding `x` is among `level`'s candidates (cut
/// below `first`): admitted by the bounds, and certainly in every list read
/// ([`Level::certain`]) or else found by `found`.
#[inline]
fn collides(level: &Level, k: usize, x: VertexId, first: VertexId, found: impl FnOnce(VertexId) -> bool) -> bool {
    x >= first && (level.certain >> k & 1 == 1 || found(x))
}

/// A hoisted level's candidates (label-filtered, conflicts not removed)
/// from the first vertex its bounds on the bindings below `bound` allow,
/// and the positions below `bound` whose bindings collide with them, with
/// those bindings (each a candidate the count must leave out).
#[inline]
fn hoisted_cut<'a>(
    emb: &'a [VertexId],
    level: &'a Level,
    cands: &'a [VertexId],
    bound: usize,
) -> (&'a [VertexId], impl Iterator<Item = (u8, VertexId)> + 'a) {
    let first = first_allowed(emb, level, bound);
    let cands = &cands[cands.partition_point(|&x| x < first)..];
    let hits = level.conflicts.iter().enumerate().filter_map(move |(k, &r)| {
        let x = emb[r as usize];
        ((r as usize) < bound && collides(level, k, x, first, |x| cands.binary_search(&x).is_ok())).then_some((r, x))
    });
    (cands, hits)
}

/// The label a level's lists are read with: `Some` when `g` keeps (some)
/// lists grouped by label ([`GraphView::nbrs_with_label`]) and the plan
/// checks labels or reads edge labels: an intersection with one label group
/// holds only that label, and needs no label filter afterwards; a group by
/// both labels needs no edge-label filter either.
#[inline]
fn read_label<G: GraphView + ?Sized>(g: &G, plan: &Plan, level: &Level) -> Option<Label> {
    let labelled = plan.check_labels || level.reads.iter().any(|r| r.elabel.is_some());
    (labelled && g.has_label_groups()).then_some(level.label)
}

/// `v`'s list of version `ver`, and the edge label still to match: only its
/// vertices of `label` when given and the view has them grouped (then
/// `true`), else the whole list; `elabel` is `None` when the group holds
/// only that edge label.
#[inline]
fn list_of<G: GraphView + ?Sized>(
    g: &G,
    v: VertexId,
    ver: Version,
    label: Option<Label>,
    elabel: Option<Label>,
) -> (Nbrs<'_>, bool, Option<Label>) {
    match label.and_then(|l| g.nbrs_with_label(v, ver, l, elabel)) {
        Some(group) => (group.list, true, elabel.filter(|_| !group.elabel_applied)),
        None => (g.nbrs(v, ver), false, elabel),
    }
}

/// The candidate set level `d` starts from: the reused level's candidates
/// (in `bufs`) or the level's partial intersection (in `partials`), if any.
#[inline]
fn source<'b>(
    bufs: &'b [Vec<VertexId>],
    partials: &'b [Vec<VertexId>],
    level: &Level,
    d: usize,
) -> Option<&'b [VertexId]> {
    match (level.reuse, &level.partial) {
        (Some(e), _) => Some(bufs[e as usize].as_slice()),
        (None, Some(_)) => Some(partials[d].as_slice()),
        (None, None) => None,
    }
}

/// Builds the operands of `level.extra` (plus an optional reused candidate
/// set) on the stack (at most 32), each plain one cut to its entries from
/// `$first` on, each read with `$label` ([`list_of`]); `$cut` tells whether
/// the intersection is already free of smaller entries (some operand was
/// cut, or `$first` is 0), `$pure` whether it holds only `$label`'s vertices
/// (some operand is a label group or the reused set).
macro_rules! with_operands {
    ($g:expr, $reads:expr, $src:expr, $emb:expr, $skip:expr, $first:expr, $label:expr, |$ops:ident, $cut:ident, $pure:ident| $body:expr) => {{
        let mut storage: [MaybeUninit<Operand<'_>>; MAX_QUERY_VERTICES] =
            [const { MaybeUninit::uninit() }; MAX_QUERY_VERTICES];
        let first: VertexId = $first;
        let mut n = 0;
        #[allow(unused_mut)]
        let mut $cut = first == 0;
        #[allow(unused_mut)]
        let mut $pure = false;
        if let Some(src) = $src {
            let src: &[VertexId] = src;
            let k = if first == 0 {
                0
            } else {
                src.partition_point(|&x| x < first)
            };
            storage[0].write(Operand {
                list: Nbrs::plain(&src[k..], &[]),
                elabel: None,
            });
            $cut = true;
            $pure = true;
            n = 1;
        }
        for (k, r) in $reads.iter().enumerate() {
            if Some(k) == $skip {
                continue;
            }
            let (mut list, grouped, elabel) = list_of($g, $emb[r.pos as usize], r.version, $label, r.elabel);
            $pure |= grouped;
            if first > 0 {
                if let Some(cut) = list.plain_from(first) {
                    list = cut;
                    $cut = true;
                }
            }
            storage[n].write(Operand { list, elabel });
            n += 1;
        }
        // SAFETY: the first `n` entries were just written; Operand is Copy (no drop).
        let $ops: &mut [Operand<'_>] =
            unsafe { std::slice::from_raw_parts_mut(storage.as_mut_ptr() as *mut Operand<'_>, n) };
        $body
    }};
}

/// The intersection of `reads` (lists of the vertices bound in `emb`) into
/// `out`, keeping only `level`'s label: no injectivity checks and no bounds
/// (the hoisted last level, a level's partial intersection).
fn labelled_intersection<G: GraphView + ?Sized>(
    g: &G,
    plan: &Plan,
    level: &Level,
    reads: &[Read],
    emb: &[VertexId; MAX_QUERY_VERTICES],
    out: &mut Vec<VertexId>,
) {
    let label = read_label(g, plan, level);
    let pure = with_operands!(g, reads, None::<&[VertexId]>, emb, None, 0, label, |ops, _cut, pure| {
        intersect_into(ops, out);
        pure
    });
    if plan.check_labels && !pure {
        let labels = g.labels();
        out.retain(|&c| labels[c as usize] == level.label);
    }
}

impl Executor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Refills the buffers of materialised levels below `depth` that later
    /// levels reuse, for a run entered at `depth` with a given prefix.
    fn prepare<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, depth: usize) {
        if let Some(h) = plan.levels.last().and_then(|l| l.hoist) {
            if (h as usize) < depth {
                self.hoist(g, plan);
            }
        }
        self.partials_fresh = 0;
        for e in 0..depth {
            if plan.levels[e].reads.is_empty() || plan.reused >> e & 1 == 0 {
                continue;
            }
            self.fill_own(g, plan, e);
        }
    }

    /// Makes the following counts use `memo` for the last level instead of
    /// this executor's own (`None`: back to its own). The caller guarantees
    /// that their prefixes bind at least [`Plan::memo_from`] vertices, all
    /// but the later ones equal across the memo's users.
    pub fn share_memo(&mut self, memo: Option<Arc<SharedMemo>>) {
        self.shared = memo;
    }

    /// Makes the following counts keep their suffix-memo entries in `memo`,
    /// shared with the executors of other threads, instead of this
    /// executor's own table (`None`: back to its own). Entries stay tied
    /// to their scope, so the sharers need not count in one scope.
    pub fn share_suffix(&mut self, memo: Option<&'static SharedSuffixMemo>) {
        match (&mut self.shared_suffix, memo) {
            (Some(s), m) => s.set_table(m),
            (None, Some(m)) => self.shared_suffix = Some(Box::new(SharedUse::new(m))),
            (None, None) => {}
        }
    }

    /// Makes the following counts stop descending once `quota`'s limit is
    /// reached by the matches of every executor sharing it (`None`: no cap;
    /// see [`crate::quota`]). Their results are then partial but, summed
    /// over the run, at least the limit. Flushes the previous quota's tally.
    pub fn set_quota(&mut self, quota: Option<Arc<Quota>>) {
        self.tally.set(quota);
    }

    /// Counts the completions of `prefix` (bound to `plan.order[..prefix.len()]`).
    /// The caller guarantees the prefix itself is a valid partial match.
    pub fn count<G: GraphView + ?Sized, V: Visitor>(
        &mut self,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        vis: &mut V,
    ) -> u64 {
        self.count_within(MemoScope::new(), g, plan, prefix, vis)
    }

    /// [`Executor::count`] in `scope`: the suffix memo's entries of earlier
    /// counts in that scope serve this one. The caller guarantees that
    /// every count in `scope` reads the same graph view, unchanged.
    pub fn count_within<G: GraphView + ?Sized, V: Visitor>(
        &mut self,
        scope: MemoScope,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        vis: &mut V,
    ) -> u64 {
        self.scope = scope.0;
        self.count_in_scope(g, plan, prefix, vis)
    }

    /// [`Executor::count`] within the current suffix-memo scope.
    fn count_in_scope<G: GraphView + ?Sized, V: Visitor>(
        &mut self,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        vis: &mut V,
    ) -> u64 {
        if self.tally.stop {
            return 0;
        }
        self.emb[..prefix.len()].copy_from_slice(prefix);
        self.prepare(g, plan, prefix.len());
        // (a hoist at the prefix's own depth is computed and checked in `rec`)
        let hoisted_above = plan.levels[plan.depth() - 1]
            .hoist
            .is_some_and(|h| (h as usize) < prefix.len());
        if !V::OBSERVES && hoisted_above && self.hoisted_none(plan, prefix.len()) {
            self.fail = plan.fail_deps[plan.depth() - 1] & below(prefix.len());
            return 0;
        }
        self.memo_epoch += 1;
        let n = self.rec::<G, V, false>(g, plan, prefix.len(), vis, &mut |_| {});
        self.tally.flush();
        n
    }

    /// Calls `f` with every completion of `prefix`, in `plan.order` positions.
    pub fn enumerate<G: GraphView + ?Sized>(
        &mut self,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        f: &mut dyn FnMut(&[VertexId]),
    ) -> u64 {
        self.emb[..prefix.len()].copy_from_slice(prefix);
        self.prepare(g, plan, prefix.len());
        self.rec::<G, NoVisitor, true>(g, plan, prefix.len(), &mut NoVisitor, f)
    }

    /// Counts the completions of `prefix` whose next vertex is one of
    /// `cands[first]`, `cands[first + step]`, …, where `cands` is what
    /// [`Self::candidates`] gave for `prefix`: lets a caller split one node's
    /// children across threads while each part keeps the hoisted, reused and
    /// pinned state of that node (strided parts spread a skewed level's heavy
    /// children), in `scope` as [`Executor::count_within`]. Needs a level below the children
    /// (`prefix.len() + 1 < plan.depth()`).
    #[allow(clippy::too_many_arguments)]
    pub fn count_strided<G: GraphView + ?Sized>(
        &mut self,
        scope: MemoScope,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        cands: &[VertexId],
        first: usize,
        step: usize,
    ) -> u64 {
        let d = prefix.len();
        assert!(d + 1 < plan.depth(), "count_strided needs a level below the children");
        if self.tally.stop {
            return 0;
        }
        self.scope = scope.0;
        self.emb[..d].copy_from_slice(prefix);
        self.prepare(g, plan, d);
        self.memo_epoch += 1;
        if plan.levels[plan.depth() - 1].hoist == Some(d as u8) {
            self.hoist(g, plan);
        }
        if self.hoisted_none(plan, d) {
            return 0;
        }
        self.partials_fresh &= !plan.partials_due[d];
        // later levels may reuse the whole candidate set
        self.bufs[d].clear();
        self.bufs[d].extend_from_slice(cands);
        self.hits[d] = plan.fail_conflicts[d];
        let n = self.children::<G, NoVisitor, false>(g, plan, d, (first, step), &mut NoVisitor, &mut |_| {});
        self.tally.flush();
        n
    }

    /// The filtered candidates of `plan.order[depth]` given `prefix`
    /// (`prefix.len() == depth`), for callers that split work themselves.
    pub fn candidates<G: GraphView + ?Sized>(
        &mut self,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        out: &mut Vec<VertexId>,
    ) {
        let d = prefix.len();
        self.emb[..d].copy_from_slice(prefix);
        self.prepare(g, plan, d);
        self.fill(g, plan, d, out);
    }

    /// Whether the hoisted last level, once computed for the current prefix
    /// of `d` bindings (callers make sure it is), has no candidate while
    /// levels remain above it: then the prefix has no completion (the last
    /// level's candidates are a subset of the hoisted set).
    fn hoisted_none(&self, plan: &Plan, d: usize) -> bool {
        let last = plan.depth() - 1;
        let hoisted = plan.levels[last].hoist.is_some_and(|h| h as usize <= d);
        hoisted && d < last && self.bufs[last].is_empty()
    }

    /// Computes the hoisted last level's candidates (label-filtered, before
    /// injectivity) into its buffer.
    fn hoist<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan) {
        let last = plan.depth() - 1;
        let level = &plan.levels[last];
        let mut out = std::mem::take(&mut self.bufs[last]);
        labelled_intersection(g, plan, level, &level.extra, &self.emb, &mut out);
        self.bufs[last] = out;
    }

    /// Makes level `l`'s [`Level::partial`] set (label-filtered) current,
    /// computing it if a binding it depends on changed since.
    fn refresh_partial<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, l: usize) {
        let level = &plan.levels[l];
        let Some(partial) = level.partial.as_ref() else {
            return;
        };
        if self.partials_fresh >> l & 1 == 1 {
            return;
        }
        self.partials_fresh |= 1 << l;
        let mut out = std::mem::take(&mut self.partials[l]);
        labelled_intersection(g, plan, level, &partial.reads, &self.emb, &mut out);
        self.partials[l] = out;
    }

    /// The `extra` index of level `d`'s pinned read, if one is pinned.
    fn pinned_read(&self, d: usize) -> Option<usize> {
        self.pinned[d].map(usize::from)
    }

    /// Before the loop that binds `order[d - 1]`: pins a plain list of level
    /// `d` that the loop does not change (bound above depth `d - 1`), if the
    /// loop is long enough and another list remains to probe. Returns the
    /// entries pinned, which [`Self::unpin`] must get back: reading the list
    /// again there could give another list, since a view may start serving
    /// a label group of it meanwhile (a version of `csm_graph::VersionView`
    /// is grouped after a few reads by any thread), and the stale bits that
    /// left made later counts wrong.
    fn pin<'g, G: GraphView + ?Sized>(&mut self, g: &'g G, plan: &Plan, d: usize) -> Option<&'g [VertexId]> {
        if d >= plan.depth() || self.bufs[d - 1].len() < PIN_MIN_SIBLINGS {
            return None;
        }
        let level = &plan.levels[d];
        let sourced = level.reuse.is_some() || level.partial.is_some();
        if level.hoist.is_some() || level.extra.len() + usize::from(sourced) < 2 {
            return None;
        }
        let k = level
            .extra
            .iter()
            .position(|r| (r.pos as usize) < d - 1 && r.elabel.is_none())?;
        let r = level.extra[k];
        let (list, grouped, _) = list_of(g, self.emb[r.pos as usize], r.version, read_label(g, plan, level), None);
        if !list.is_plain() {
            return None;
        }
        let words = g.num_vertices().div_ceil(64);
        let bits = &mut self.bits[d];
        if bits.len() < words {
            bits.resize(words, 0);
        }
        for &x in list.base {
            bits[x as usize >> 6] |= 1 << (x & 63);
        }
        self.pinned[d] = Some(k as u8);
        self.pinned_grouped = self.pinned_grouped & !(1 << d) | u32::from(grouped) << d;
        Some(list.base)
    }

    /// Undoes [`Self::pin`] of level `d`, which pinned `entries`.
    fn unpin(&mut self, d: usize, entries: &[VertexId]) {
        self.pinned[d] = None;
        let bits = &mut self.bits[d];
        for &x in entries {
            bits[x as usize >> 6] &= !(1 << (x & 63));
        }
    }

    /// Whether level `d` has a pinned list that is a label group.
    fn pinned_is_group(&self, d: usize) -> bool {
        self.pinned[d].is_some() && self.pinned_grouped >> d & 1 == 1
    }

    /// Candidate set of level `d` into its own buffer `self.bufs[d]`.
    fn fill_own<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, d: usize) {
        let mut buf = std::mem::take(&mut self.bufs[d]);
        self.fill(g, plan, d, &mut buf);
        self.bufs[d] = buf;
    }

    /// Counts (or enumerates) the subtrees of the children at indices
    /// `first, first + step, …` of `self.bufs[d]`, pinning a list of level
    /// `d + 1` for the loop when that pays.
    fn children<G: GraphView + ?Sized, V: Visitor, const ENUM: bool>(
        &mut self,
        g: &G,
        plan: &Plan,
        d: usize,
        (first, step): (usize, usize),
        vis: &mut V,
        f: &mut dyn FnMut(&[VertexId]),
    ) -> u64 {
        let pinned = self.pin(g, plan, d + 1);
        let mut total = 0;
        // the union of the failed children's sets, until one leaves `d` out
        let (mut failed, mut cut) = (0u32, false);
        for k in (first..self.bufs[d].len()).step_by(step.max(1)) {
            if self.tally.tick() {
                break;
            }
            self.emb[d] = self.bufs[d][k];
            let n = self.rec::<G, V, ENUM>(g, plan, d + 1, vis, f);
            total = count::add(total, n);
            if !V::OBSERVES && n == 0 {
                if self.fail >> d & 1 == 0 {
                    // this child fails whatever `d` binds: so do the rest
                    (failed, cut) = (self.fail, true);
                    break;
                }
                failed |= self.fail;
            }
        }
        if let Some(entries) = pinned {
            self.unpin(d + 1, entries);
        }
        if !V::OBSERVES && total == 0 {
            self.fail = if cut {
                failed
            } else {
                failed & !(1 << d) | plan.fail_deps[d] | self.hits[d]
            };
        }
        total
    }

    /// Candidate set of level `d` into `out` (which is not one of `self.bufs`).
    fn fill<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, d: usize, out: &mut Vec<VertexId>) {
        let level = &plan.levels[d];
        let emb = self.emb;
        let first = first_allowed(&emb, level, d);
        self.refresh_partial(g, plan, d);
        let src = source(&self.bufs, &self.partials, level, d);
        let label = read_label(g, plan, level);
        // whether the candidates hold only the level's label (no filter needed)
        let grouped = if let (Some(src), true) = (src, level.extra.is_empty()) {
            out.clear();
            out.extend_from_slice(&src[src.partition_point(|&x| x < first)..]);
            true
        } else {
            let skip = self.pinned_read(d);
            let (cut, pure) = with_operands!(g, level.extra, src, emb, skip, first, label, |ops, cut, pure| {
                intersect_into(ops, out);
                (cut, pure)
            });
            if !cut {
                let k = out.partition_point(|&x| x < first);
                out.drain(..k);
            }
            if skip.is_some() {
                let bits = &self.bits[d];
                out.retain(|&c| bit(bits, c));
            }
            pure || self.pinned_is_group(d)
        };
        let check_label = plan.check_labels && !grouped;
        let mut hits = 0u32;
        if check_label || !level.conflicts.is_empty() {
            let labels = g.labels();
            out.retain(|&c| {
                if check_label && labels[c as usize] != level.label {
                    return false;
                }
                match level.conflicts.iter().find(|&&p| emb[p as usize] == c) {
                    Some(&p) => {
                        hits |= 1 << p;
                        false
                    }
                    None => true,
                }
            });
        }
        self.hits[d] = hits;
    }

    fn rec<G: GraphView + ?Sized, V: Visitor, const ENUM: bool>(
        &mut self,
        g: &G,
        plan: &Plan,
        d: usize,
        vis: &mut V,
        f: &mut dyn FnMut(&[VertexId]),
    ) -> u64 {
        let depth = plan.depth();
        if d == depth {
            if ENUM {
                f(&self.emb[..d]);
            }
            self.tally.note(1);
            return 1;
        }
        self.work += 1;
        let level = &plan.levels[d];
        if !vis.enter(d, &self.emb[..d], level) {
            // a pruning visitor's cut says nothing of the bindings: no
            // sibling may be skipped for it
            self.fail = u32::MAX;
            return 0;
        }
        if plan.memo_from == Some(d as u8) {
            // a new binding above: cached last-level sizes are stale
            self.memo_epoch += 1;
        }
        self.partials_fresh &= !plan.partials_due[d];
        // (a capped count notes every match as it is listed)
        let memo = !ENUM && !V::OBSERVES && plan.suffix_memo >> d & 1 == 1 && !self.tally.capped();
        let pending = if memo {
            match self.memo_lookup(plan, d) {
                Ok(n) => {
                    if n == 0 {
                        // (the entry's own failing set may name bindings
                        // this node does not share; the key's fail alike)
                        self.fail = plan.suffix_deps[d];
                    }
                    self.tally.note(n);
                    vis.leave(d);
                    return n;
                }
                Err(pending) => Some(pending),
            }
        } else {
            None
        };
        let work = self.work;
        let total = self.node::<G, V, ENUM>(g, plan, d, vis, f);
        if let Some(pending) = pending {
            self.memo_store(d, pending, total, self.work - work);
        }
        vis.leave(d);
        total
    }

    /// The suffix memo's count of the node at depth `d` bound to `emb`
    /// in the current scope: this thread's table first, then the one
    /// shared with others; else where to store it ([`Self::memo_store`]).
    #[inline]
    fn memo_lookup(&mut self, plan: &Plan, d: usize) -> Result<u64, Pending> {
        self.suffix.lookup(self.scope, plan, d, &self.emb).or_else(|pending| {
            let shared = self.shared_suffix.as_deref_mut().filter(|s| s.is_on());
            match shared.and_then(|s| s.lookup(self.scope, d, &pending)) {
                Some(n) => {
                    self.suffix.store(self.scope, pending, n);
                    Ok(n)
                }
                None => Err(pending),
            }
        })
    }

    /// Stores `total`, the count of the node `pending` came from (at depth
    /// `d`, after `work` nodes), in this thread's table and offers it to
    /// the shared one.
    #[inline]
    fn memo_store(&mut self, d: usize, pending: Pending, total: u64, work: u64) {
        if let Some(shared) = self.shared_suffix.as_deref().filter(|s| s.is_on()) {
            shared.store(self.scope, d, &pending, total, work);
        }
        self.suffix.store(self.scope, pending, total);
    }

    /// For callers that split a node's children across threads themselves
    /// ([`Self::count_strided`], [`Self::candidates`]): the suffix memo's
    /// count of the node bound to `prefix` in `scope`, if the plan caches
    /// that depth ([`Plan::suffix_memo`]) and an earlier count in `scope`
    /// on this thread (or in the shared table) stored it. Such a caller
    /// that skipped the lookup enumerated what the memo counts once: a
    /// star's twin leaves on two threads took minutes where one took 1 ms.
    pub fn cached_count(&mut self, scope: MemoScope, plan: &Plan, prefix: &[VertexId]) -> Option<u64> {
        self.node_lookup(scope, plan, prefix)?.ok()
    }

    /// Stores `n` as the count of the node bound to `prefix` in `scope`,
    /// for [`Self::cached_count`] (and this thread's counts in `scope`)
    /// to find; `n` must be what [`Self::count_within`] gives for it.
    pub fn cache_count(&mut self, scope: MemoScope, plan: &Plan, prefix: &[VertexId], n: u64) {
        if let Some(Err(pending)) = self.node_lookup(scope, plan, prefix) {
            self.memo_store(prefix.len(), pending, n, u64::MAX);
        }
    }

    /// [`Self::memo_lookup`] for the node bound to `prefix` in `scope`;
    /// `None` where the plan does not cache its depth or the count is capped.
    fn node_lookup(&mut self, scope: MemoScope, plan: &Plan, prefix: &[VertexId]) -> Option<Result<u64, Pending>> {
        let d = prefix.len();
        if d >= plan.depth() || plan.suffix_memo >> d & 1 == 0 || self.tally.capped() {
            return None;
        }
        self.scope = scope.0;
        self.emb[..d].copy_from_slice(prefix);
        Some(self.memo_lookup(plan, d))
    }

    /// A node at depth `d` past its visitor's `enter` ([`Executor::rec`]):
    /// its split, wide tail or counted levels, else its children.
    #[inline(always)]
    fn node<G: GraphView + ?Sized, V: Visitor, const ENUM: bool>(
        &mut self,
        g: &G,
        plan: &Plan,
        d: usize,
        vis: &mut V,
        f: &mut dyn FnMut(&[VertexId]),
    ) -> u64 {
        let depth = plan.depth();
        if !ENUM && !V::OBSERVES {
            // (a capped count notes every match as it is listed)
            let split = plan
                .split
                .as_deref()
                .filter(|s| s.at as usize == d && !self.tally.capped());
            if let Some(split) = split {
                let total = self.count_parts(g, split, d);
                self.tally.note(total);
                return total;
            }
            if let Some(tail) = plan.wide_tail.as_ref().filter(|t| t.start as usize == d) {
                let total = self.count_wide_tail(g, plan, tail);
                self.tally.note(total);
                return total;
            }
        }
        if !ENUM && plan.levels[depth - 1].hoist == Some(d as u8) {
            self.hoist(g, plan);
            if !V::OBSERVES && self.hoisted_none(plan, d) {
                // the last vertex has no candidate under this prefix (its
                // candidates only shrink below): no completion. A hoisted
                // closing vertex (a triangle's third vertex ordered last
                // so that it counts as a factor) prunes the whole subtree
                // here instead of after enumerating it. Observing visitors
                // (the sampler's walks and exact access counts) see the
                // whole tree, as the GPU kernel reads it.
                self.fail = plan.fail_deps[depth - 1] & below(d);
                return 0;
            }
        }
        if d + 1 == depth && !ENUM {
            let n = self.count_level(g, plan, d);
            self.tally.note(n);
            n
        } else if d + 2 == depth && !ENUM && !V::OBSERVES && plan.independent_tail {
            let n = self.count_tail_pair(g, plan, d);
            self.tally.note(n);
            n
        } else {
            self.fill_own(g, plan, d);
            self.children::<G, V, ENUM>(g, plan, d, (0, 1), vis, f)
        }
    }

    /// Completions of a node at depth `split.at` ([`Plan::split`],
    /// [`crate::plan::Split::completions`]), each part and overlap counted
    /// by another executor (their plans bind the same prefix). Sets the
    /// failing set of the first part that has none.
    #[inline(never)]
    fn count_parts<G: GraphView + ?Sized>(&mut self, g: &G, split: &crate::plan::Split, d: usize) -> u64 {
        let sub = self.parts.get_or_insert_with(Box::default);
        sub.scope = self.scope;
        sub.share_suffix(self.shared_suffix.as_deref().and_then(SharedUse::table));
        let emb = &self.emb[..d];
        match split.completions(|plan| sub.count_in_scope(g, plan, emb, &mut NoVisitor)) {
            None => {
                self.fail = sub.fail & below(d);
                0
            }
            Some(0) => {
                // every tuple collides: any binding may matter
                self.fail = below(d);
                0
            }
            Some(n) => n,
        }
    }

    /// Completions of a node at depth `tail.start` ([`Plan::wide_tail`]):
    /// each tail level's candidates (label-filtered, without earlier
    /// bindings, cut by its bounds), multiplied, minus the tuples binding
    /// two vertices of one label group to one data vertex, by
    /// inclusion–exclusion: |A||B| − |A∩B| for a pair, and for a triple
    /// |A||B||C| − |A∩B||C| − |A∩C||B| − |B∩C||A| + 2|A∩B∩C|; t twins
    /// (one set S) |S|·(|S| − 1)···(|S| − t + 1).
    /// Sets the failing set when it returns 0: an empty level's
    /// dependencies, or all the tail's.
    fn count_wide_tail<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, tail: &WideTail) -> u64 {
        let (start, n) = (tail.start as usize, plan.depth());
        let all = |t: usize| plan.fail_deps[t] | plan.fail_conflicts[t];
        self.fail = (start..n).fold(0, |m, t| m | all(t)) & below(start);
        // tail positions hold no binding: no candidate conflicts with them
        self.emb[start..n].fill(VertexId::MAX);
        for t in start..n {
            self.fill_own(g, plan, t);
            if self.bufs[t].is_empty() {
                self.fail = (plan.fail_deps[t] | self.hits[t]) & below(start);
                return 0;
            }
        }
        let bufs = &self.bufs;
        let size = |t: u8| bufs[t as usize].len() as u128;
        // nested sets (twins: equal) overlap in the smaller, no merge needed
        let within = |x: u8, y: u8| tail.nested.contains(&(x, y));
        let both = |a: u8, b: u8| match (within(a, b), within(b, a)) {
            (true, _) => size(a),
            (_, true) => size(b),
            _ => sorted_overlap(&bufs[a as usize], &bufs[b as usize]) as u128,
        };
        let mut total: u128 = 1;
        for group in &tail.groups {
            let tuples = match group[..] {
                [a] => size(a),
                [a, b] => size(a) * size(b) - both(a, b),
                [a, b, c] => {
                    let (ab, ac, bc) = (both(a, b), both(a, c), both(b, c));
                    let abc = match [a, b, c]
                        .iter()
                        .find(|&&x| [a, b, c].iter().all(|&y| y == x || within(x, y)))
                    {
                        // one set lies within both others
                        Some(&x) => size(x),
                        None => {
                            self.tmp.clear();
                            sorted_intersection_into(&bufs[a as usize], &bufs[b as usize], &mut self.tmp);
                            sorted_overlap(&self.tmp, &bufs[c as usize]) as u128
                        }
                    };
                    size(a) * size(b) * size(c) + 2 * abc - ab * size(c) - ac * size(b) - bc * size(a)
                }
                // twins (WideTail::of): one set, |S|·(|S| − 1)···(|S| − t + 1);
                // or two classes of twins
                [a, ..] => match &crate::plan::twin_classes(group, &tail.nested)[..] {
                    [c] => count::falling(size(a), c.len() as u128),
                    [c, d] => count::two_classes(size(c[0]), c.len(), size(d[0]), d.len(), both(c[0], d[0])),
                    _ => unreachable!("WideTail::of keeps groups of at most two classes"),
                },
                [] => unreachable!("tail groups are not empty"),
            };
            total = total.saturating_mul(tuples);
            if total == 0 {
                return 0;
            }
        }
        count::from_wide(total)
    }

    /// Completions at depth `d = depth − 2` when the last two vertices p, q
    /// are independent ([`Plan::independent_tail`], so q's candidates C_q are
    /// hoisted above d): |C_p|·|C_q'| − |C_p ∩ C_q|, or, when symmetry
    /// breaking requires q above p, the ordered pairs counted by one merge;
    /// where C_q' is C_q without earlier conflicting bindings and the
    /// subtracted pairs bind p and q to one vertex (only when q lists p's
    /// position among its conflicts). No vertex of C_p equals an earlier
    /// binding of its label, so C_p ∩ C_q' = C_p ∩ C_q.
    /// Sets the failing set when it returns 0: p's dependencies when C_p
    /// is empty, else both levels' (less p's position).
    fn count_tail_pair<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, d: usize) -> u64 {
        let last = d + 1;
        let lq = &plan.levels[last];
        let both =
            (plan.fail_deps[d] | plan.fail_conflicts[d] | plan.fail_deps[last] | plan.fail_conflicts[last]) & below(d);
        if plan.twin_tail {
            self.fail = both;
            return self.count_twin_pair(plan, d);
        }
        // C_p itself is needed only where p and q may meet (an order
        // between them, or q conflicting with p); else its size
        let meet = lq.above.contains(&(d as u8)) || lq.conflicts.contains(&(d as u8));
        let cp_len = if meet {
            self.fill_own(g, plan, d);
            self.bufs[d].len() as u64
        } else {
            self.count_level(g, plan, d)
        };
        if cp_len == 0 {
            // (count_level set the failing set)
            if meet {
                self.fail = plan.fail_deps[d] | self.hits[d];
            }
            return 0;
        }
        self.fail = both;
        // the hoisted candidates: label-filtered, conflicts not yet removed,
        // cut by q's bounds on bindings above d
        let cp = &self.bufs[d];
        let (cq, hits) = hoisted_cut(&self.emb, lq, &self.bufs[last], d);
        if lq.above.contains(&(d as u8)) {
            // symmetry breaking orders the pair: count x < y, and an earlier
            // binding z in C_q pairs with the x < z only
            let mut j = 0;
            let mut pairs = 0u64;
            for &x in cp {
                j += cq[j..].partition_point(|&y| y <= x);
                pairs += (cq.len() - j) as u64;
            }
            let lost: usize = hits.map(|(_, z)| cp.partition_point(|&x| x < z)).sum();
            return pairs - lost as u64;
        }
        let hits = hits.count();
        let both = if lq.conflicts.contains(&(d as u8)) {
            sorted_overlap(cp, cq)
        } else {
            0
        };
        cp_len * (cq.len() - hits) as u64 - both
    }

    /// [`Executor::count_tail_pair`] for twins ([`Plan::twin_tail`]): the
    /// hoisted C_q, cut by the bounds both levels share, less the earlier
    /// bindings among it (p's conflicts) is S, the set both bind from, and
    /// the pairs are |S|·(|S| − 1), or half of that when ordered.
    fn count_twin_pair(&self, plan: &Plan, d: usize) -> u64 {
        let lq = &plan.levels[d + 1];
        let (cq, hits) = hoisted_cut(&self.emb, lq, &self.bufs[d + 1], d);
        let s = (cq.len() - hits.count()) as u64;
        let pairs = s * s.saturating_sub(1);
        if lq.above.contains(&(d as u8)) {
            pairs / 2
        } else {
            pairs
        }
    }

    /// |candidates| of level `d` without listing them: the last level's or
    /// an independent tail pair's first level's, cached by the vertex bound
    /// above it when `d` is the plan's [`Plan::memo_level`] with a
    /// [`Plan::memo_from`].
    /// Sets the failing set when it returns 0: the level's dependencies
    /// and the positions whose bindings it had to leave out.
    fn count_level<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, d: usize) -> u64 {
        let level = &plan.levels[d];
        if level.hoist.is_some() {
            let (cands, hits) = hoisted_cut(&self.emb, level, &self.bufs[d], d);
            let (n, hit) = hits.fold((cands.len(), 0u32), |(n, m), (r, _)| (n - 1, m | 1 << r));
            self.fail = plan.fail_deps[d] | hit;
            return n as u64;
        }
        let emb = self.emb;
        let first = first_allowed(&emb, level, d);
        self.refresh_partial(g, plan, d);
        let src = source(&self.bufs, &self.partials, level, d);
        let pinned_grouped = self.pinned_is_group(d);
        let tmp = &mut self.tmp;
        let label = read_label(g, plan, level);
        let extra: &[Read] = &level.extra;
        let skip = self.pinned[d].map(usize::from);
        let bits = &self.bits[d];
        let in_pinned = |x: VertexId| skip.is_none() || bit(bits, x);
        let key = emb[d.max(1) - 1];
        let memo_from = plan.memo_from.filter(|_| plan.memo_level() == Some(d));
        let shared = self.shared.as_deref().filter(|_| memo_from.is_some());
        let memo = if memo_from.is_some() && shared.is_none() {
            if self.memo.is_empty() {
                self.memo = vec![MemoSlot::default(); MEMO_SLOTS];
            }
            Some((&mut self.memo[memo_slot(key)], key, self.memo_epoch))
        } else {
            None
        };
        let cached = match (&memo, shared) {
            (Some((slot, key, epoch)), _) if slot.key == *key && slot.epoch == *epoch => Some(slot.n as u64),
            (_, Some(m)) => m.get(key),
            _ => None,
        };
        let all_certain = level.certain.count_ones() as usize == level.conflicts.len();
        if let (Some(n), true) = (cached, all_certain) {
            // every conflict is known to be in the lists (none, often): they
            // need not even be looked up
            let (n, hit) = (level.conflicts.iter())
                .filter(|&&p| emb[p as usize] >= first)
                .fold((n, 0u32), |(n, m), &p| (n - 1, m | 1 << p));
            self.fail = plan.fail_deps[d] | hit;
            return n;
        }
        let mut hit = 0u32;
        with_operands!(g, extra, src, emb, skip, first, label, |ops, cut, pure| {
            let check_label = plan.check_labels && !pure && !pinned_grouped;
            let mut n = match (cached, &*ops) {
                (Some(n), _) => n,
                (None, [o]) if cut && skip.is_some() && !check_label && o.elabel.is_none() && o.list.is_plain() => {
                    o.list.base.iter().filter(|&&x| bit(bits, x)).count() as u64
                }
                (None, _) if check_label || skip.is_some() || !cut => {
                    intersect_into(ops, tmp);
                    let labels = g.labels();
                    // the pinned list's bitmap first: it is small and
                    // rejects most entries, each label a likely cache miss
                    tmp.iter()
                        .filter(|&&c| c >= first && in_pinned(c) && (!check_label || labels[c as usize] == level.label))
                        .count() as u64
                }
                (None, _) => intersect_len(ops, tmp),
            };
            match (cached, memo, shared) {
                (None, Some((slot, key, epoch)), _) => {
                    *slot = MemoSlot {
                        key,
                        n: n as u32,
                        epoch,
                    }
                }
                (None, None, Some(m)) => m.put(key, n),
                _ => {}
            }
            for (k, &p) in level.conflicts.iter().enumerate() {
                let x = emb[p as usize];
                if in_pinned(x) && collides(level, k, x, first, |x| ops.iter().all(|o| o.contains(x))) {
                    n -= 1;
                    hit |= 1 << p;
                }
            }
            self.fail = plan.fail_deps[d] | hit;
            n
        })
    }
}
