//! Execution plans: nested loops over query vertices (GCSM Fig. 2).
//!
//! A [`Plan`] binds `order[0], order[1], …` one at a time; binding
//! `order[d]` intersects the neighbour lists named by `levels[d].reads`
//! (each of a chosen [`Version`]) and keeps the candidates with the right
//! vertex label that differ from every earlier same-label binding.
//!
//! [`DeltaPlan`]s implement the delta queries of GCSM Eq. (1). For query
//! edge i (relation R_i) the loop starts from batch edges mapped onto it
//! (both orientations) and reads, for every other relation R_j:
//!
//! | | j < i | j > i |
//! |---|---|---|
//! | Eq. (1), net ΔM_i | N (old) | N' (new) |
//! | csm, positive term | N ∩ N' (common) | N' (new) |
//! | csm, negative term | N ∩ N' (common) | N (old) |
//!
//! Eq. (1) with signed ΔR_i gives the exact *net* change, but in a batch that
//! mixes insertions and deletions an embedding using one inserted and one
//! deleted edge (in neither G nor G') shows up once with + and once with −.
//! csm splits the sum: a match of G' \ G is counted only at its *first*
//! inserted relation (earlier relations must be unchanged: common lists), a
//! match of G \ G' only at its first deleted relation. Each new or vanished
//! embedding is then counted exactly once and the spurious pairs never arise;
//! summed, the two terms still equal Eq. (1)'s net.

use std::sync::Arc;

use csm_graph::{GraphView, Label, Version};

use crate::count;
use crate::order::OrderStrategy;
use crate::query::{QVertex, QueryGraph};
use crate::stats::GraphStats;

/// One neighbour-list read: the list of the vertex bound at `pos`, in `version`,
/// restricted to edges labelled `elabel` (edge-labelled queries only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    pub pos: u8,
    pub version: Version,
    pub elabel: Option<Label>,
}

/// How to bind one query vertex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    pub qv: QVertex,
    pub label: Label,
    /// Lists to intersect (empty only for a static plan's first level).
    pub reads: Vec<Read>,
    /// Earlier positions with the same label that are not read at this level
    /// (injectivity checks; a read position can never collide).
    pub conflicts: Vec<u8>,
    /// Bit k: `conflicts[k]`'s binding is certainly in every list this
    /// level reads (the query joins it to each read vertex by an edge of the
    /// read's edge label, checked in the read's version), so it collides
    /// with a candidate whenever the level's bounds (`above`) admit it, and
    /// counting need not look it up. With `reuse`, only the reused level's
    /// own binding can be certain (the reused candidates lack that level's
    /// conflicts and what its bounds cut).
    pub certain: u32,
    /// An earlier level whose reads are a subset of this level's (same
    /// label): its filtered candidate set already is the intersection of
    /// those lists, so this level intersects it with `extra` only.
    pub reuse: Option<u8>,
    /// The reads not covered by `reuse` (all reads when `reuse` is `None`).
    pub extra: Vec<Read>,
    /// Earlier positions whose binding this level's vertex must exceed
    /// (symmetry breaking, [`crate::symmetry::break_symmetry`]; empty in
    /// plans that count every embedding).
    pub above: Vec<u8>,
    /// Last level only: every read refers to a position below `hoist`, so the
    /// candidate set is computed once per node at depth `hoist` and each
    /// deeper node only subtracts its injectivity conflicts.
    pub hoist: Option<u8>,
    /// Two or more reads bound well above this level ([`Partial`]), whose
    /// intersection is computed once per node at depth `Partial::at` and
    /// intersected here with `extra` only; `None` with `reuse` or `hoist`.
    pub partial: Option<Partial>,
}

/// The reads of a level bound above depth `at` (all but those of its latest
/// position): their intersection, filtered by the level's label, is the
/// same for every node below a node at depth `at`, so it is computed there
/// once instead of at each node of the level (a 6-vertex query whose last
/// vertex reads three lists intersects the first two once per binding of
/// the second, not once per binding of the third).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partial {
    pub at: u8,
    pub reads: Vec<Read>,
}

/// A nested-loop plan; `levels[d]` binds `order[d]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub order: Vec<QVertex>,
    pub levels: Vec<Level>,
    /// False when every data vertex carries the right label (skip label checks).
    pub check_labels: bool,
    /// The last two query vertices are not adjacent, the second-to-last
    /// reads at least one list and the last is hoisted ([`Level::hoist`]):
    /// given the earlier bindings their candidate sets C_p, C_q are
    /// independent, and a counting run takes
    /// |C_p|·|C_q| − |C_p ∩ C_q| (the last term only when they share a label)
    /// instead of looping over C_p.
    pub independent_tail: bool,
    /// The [`Plan::independent_tail`] pair are twins: same label, same
    /// reads, and the same conflicts and bounds but for each other's
    /// position (two leaves hanging off the same vertices, as in an
    /// automorphism that swaps them). Then C_p is C_q without p's earlier
    /// conflicts, and with S = C_q's candidates left after those, a
    /// counting run takes |S|·(|S| − 1), halved when symmetry breaking
    /// orders the pair, without listing C_p.
    pub twin_tail: bool,
    /// The counted level ([`Plan::memo_level`]: the last level when it is
    /// not hoisted, else the first of an [`Plan::independent_tail`] pair)
    /// reads the vertex bound just above it and otherwise only lists bound
    /// above depth `f`: its intersection size depends on that one vertex
    /// while the bindings above `f` stay, so a counting run caches it by
    /// that vertex (e.g. a 4-cycle's |N(a) ∩ N(c)| across the b's that reach
    /// the same c; in RapidFlow's insert Q_58, order a b e c d f with the
    /// leaf f hoisted, |N(a) ∩ N(b) ∩ N(c)| across the e's that reach the
    /// same c). `Some(f)` when f is above the key vertex's depth.
    pub memo_from: Option<u8>,
    /// The last levels from `start` on read only lists bound before `start`
    /// (no query edge among them, no bound between them): given the
    /// bindings above `start`, their candidate sets are independent, and a
    /// counting run multiplies their sizes, minus the tuples that bind two
    /// same-label vertices to one data vertex ([`WideTail`]). At least
    /// three levels; two are [`Plan::independent_tail`].
    pub wide_tail: Option<WideTail>,
    /// Per depth d: bit l set when level l's [`Partial`] depends on the
    /// bindings up to depth d (it is stale once a node at depth d binds anew).
    pub partials_due: Vec<u32>,
    /// Per depth d: bit p set when level d's candidates before injectivity
    /// depend on the binding at position p: the positions it reads, those
    /// its bounds ([`Level::above`]) compare with, and all that the level
    /// it reuses depends on (its conflicts too). A prefix under which the
    /// level has no candidate fails for every prefix that agrees on these
    /// positions and on the conflicts that left a candidate out: the
    /// level's part of a failing set (DAF, Han et al. SIGMOD'19 Sec. 5),
    /// see [`crate::exec`].
    pub fail_deps: Vec<u32>,
    /// Per depth d: the positions of [`Level::conflicts`], as a mask (what
    /// a failing set takes when it does not track which of them hit).
    pub fail_conflicts: Vec<u32>,
    /// Bit e: a later level reuses level e's candidates ([`Level::reuse`]).
    pub reused: u32,
    /// The levels from some depth on fall apart into parts ([`Split`]): a
    /// counting run multiplies the parts' counts there (less the counts of
    /// their overlaps when parts share labels) instead of enumerating
    /// their product. Shared between clones: a plan restricted by symmetry
    /// rules ([`crate::break_symmetry`]) keeps its split or drops it, never
    /// changes it, and copying the split's merged plans was half of a
    /// dense 32-vertex query's set-up.
    pub split: Option<Arc<Split>>,
    /// Per depth d (0 to the plan's depth): the positions below d whose
    /// bindings the completions of a node at depth d depend on: what the
    /// levels from d on read, compare with ([`Level::above`]), reuse and
    /// check for injectivity ([`Plan::fail_deps`], [`Plan::fail_conflicts`]),
    /// and what the plans of a [`Split`] at or below d do. Two nodes at
    /// depth d that agree on these bindings have the same completions.
    pub suffix_deps: Vec<u32>,
    /// Bit d: a counting run caches the completions of nodes at depth d by
    /// their [`Plan::suffix_deps`] bindings (the *suffix memo*): at most
    /// [`SUFFIX_KEY_MAX`] of them, fewer than all d, and two or more levels
    /// left. Along a path-shaped part this is dynamic programming: the
    /// completions from a vertex onwards are found once per data vertex
    /// (and the few same-label bindings the rest checks), not once per
    /// path that reaches it.
    pub suffix_memo: u32,
}

/// The most bindings a suffix-memo key holds ([`Plan::suffix_memo`]).
pub const SUFFIX_KEY_MAX: usize = 4;

/// Where a plan's remaining query vertices fall apart: given the bindings
/// of `order[..at]`, the vertices `order[at..]` form two or more connected
/// parts (no query edge between parts). `parts[k]` is a plan of
/// `order[..at]` followed by part k's vertices (in their order, a leaf
/// moved last as everywhere), read in the same versions; its own levels
/// may split again. Counting a 12-vertex tree whose branches hang off one
/// bound vertex then costs the sum of the branches' searches, not their
/// product (the independent-tail shortcuts handle single leaves:
/// [`Plan::wide_tail`]).
///
/// When the parts' vertex label sets are pairwise disjoint, no injectivity
/// check joins two parts, and the completions of a prefix are the product
/// of each part's completions (`overlaps` is empty). Parts that share
/// labels are counted by inclusion–exclusion: every tuple of the parts'
/// completions binds some same-label vertices of distinct parts to one
/// data vertex each, and those vertices form blocks (at most one vertex of
/// a part in a block); the tuples with given blocks are exactly the
/// embeddings of the query with each block merged into one vertex. So the
/// completions are the product of the parts' counts minus, for each
/// nonempty set of blocks, the count of that merged query (for two parts
/// A and B: |A|·|B| less one merged query per nonempty matching of A's and
/// B's same-label vertices). `overlaps` holds those merged queries' plans
/// (prefix `order[..at]`, then the merged parts, which may split again; a
/// merge that would need two edge labels between two vertices has no
/// embedding and no plan), at most [`MAX_OVERLAPS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub at: u8,
    pub parts: Vec<Plan>,
    /// Counted and subtracted from the parts' product (see above).
    pub overlaps: Vec<Plan>,
    /// Where the parts fall into two or more clusters that share no vertex
    /// label with each other and one cluster holds several parts: a plan
    /// per cluster (bound prefix, then the cluster's parts; a cluster of
    /// several parts splits again at `at` with its own overlaps), whose
    /// counts multiply to the completions. Counted only when the parts'
    /// product and the overlaps leave the count unknown (saturated): a
    /// cluster with no completion then gives 0 (a label with more query
    /// vertices than data vertices beside 10^23 tuples of other labels).
    /// Empty otherwise.
    pub clusters: Vec<Plan>,
}

impl Split {
    /// Completions of a node at depth `at`, given `count`, the completions
    /// of the node's bindings under a plan (a part's or an overlap's): the
    /// parts' product less the overlaps' counts (see above), the product
    /// taken in 128 bits, as the overlaps may bring it back under 2^64.
    /// Parts are counted in order; `None` when one counts 0 (`count` saw
    /// it last, and nothing after it). Saturated ([`crate::count`]) when a
    /// part or an overlap is, or the result is 2^64 − 1 or more, unless a
    /// cluster ([`Split::clusters`]) then counts 0 (`Some(0)`).
    pub fn completions(&self, mut count: impl FnMut(&Plan) -> u64) -> Option<u64> {
        let mut total = 1u128;
        let mut unknown = false;
        for part in &self.parts {
            match count(part) {
                0 => return None,
                n => {
                    unknown |= count::saturated(n);
                    total = total.saturating_mul(u128::from(n));
                }
            }
        }
        // tuples of completions that bind vertices of two parts to one data vertex
        let mut overlaps = 0u128;
        for o in &self.overlaps {
            let n = count(o);
            unknown |= count::saturated(n);
            overlaps += u128::from(n);
        }
        if unknown && self.clusters.iter().any(|c| count(c) == 0) {
            // a cluster without completions: no tuple is an embedding
            return Some(0);
        }
        Some(if unknown {
            count::SATURATED
        } else {
            count::from_wide(total - overlaps)
        })
    }
}

impl Plan {
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// This plan and every plan nested in it: its split's parts' and
    /// overlaps' plans and theirs, depth first.
    pub fn plans(&self) -> Vec<&Plan> {
        let mut out = Vec::new();
        let mut todo = vec![self];
        while let Some(plan) = todo.pop() {
            out.push(plan);
            if let Some(s) = plan.split.as_deref() {
                todo.extend(s.parts.iter().chain(&s.overlaps).chain(&s.clusters).rev());
            }
        }
        out
    }

    /// Every [`Split`] in this plan: its own, then those of its parts' and
    /// its overlaps' plans, depth first.
    pub fn splits(&self) -> Vec<&Split> {
        self.plans().into_iter().filter_map(|p| p.split.as_deref()).collect()
    }

    /// The level a counting run sizes without listing, which
    /// [`Plan::memo_from`] caches: the last level unless it is hoisted, then
    /// the first of the independent tail pair (the hoisted last level's size
    /// is known at once); `None` when neither applies.
    pub fn memo_level(&self) -> Option<usize> {
        memo_level(&self.levels, self.independent_tail)
    }

    fn new(order: Vec<QVertex>, levels: Vec<Level>, check_labels: bool) -> Plan {
        let mut plan = Plan {
            order,
            levels,
            check_labels,
            independent_tail: false,
            twin_tail: false,
            memo_from: None,
            wide_tail: None,
            partials_due: Vec::new(),
            fail_deps: Vec::new(),
            fail_conflicts: Vec::new(),
            reused: 0,
            split: None,
            suffix_deps: Vec::new(),
            suffix_memo: 0,
        };
        plan.derive_shortcuts();
        plan
    }

    /// Sets [`Level::above`] from `(earlier, later)` position pairs (the
    /// later binding must exceed the earlier one) and keeps the shortcuts
    /// sound under them: a level stops reusing a candidate set cut by a bound
    /// it does not share, and the memo needs the last level's bounds fixed
    /// while its entries live (the tail product handles an ordered pair).
    pub fn with_bounds(mut self, pairs: &[(u8, u8)]) -> Plan {
        for &(a, b) in pairs {
            assert!(a < b, "a bound refers to an earlier position");
            self.levels[b as usize].above.push(a);
        }
        if self
            .split
            .as_ref()
            .is_some_and(|s| pairs.iter().any(|&(_, b)| b >= s.at))
        {
            // the parts' plans carry no bounds
            self.split = None;
        }
        for d in 0..self.depth() {
            if let Some(e) = self.levels[d].reuse {
                let shared = self.levels[e as usize]
                    .above
                    .iter()
                    .all(|p| self.levels[d].above.contains(p));
                if !shared {
                    let l = &mut self.levels[d];
                    l.reuse = None;
                    l.extra = l.reads.clone();
                    set_partial(l);
                }
            }
        }
        self.derive_shortcuts();
        self
    }

    /// Computes [`Plan::independent_tail`] and [`Plan::memo_from`].
    fn derive_shortcuts(&mut self) {
        let levels = &self.levels;
        let n = levels.len();
        let independent_tail = n >= 3
            && !levels[n - 2].reads.is_empty()
            && levels[n - 1].reads.iter().all(|r| r.pos as usize != n - 2)
            && levels[n - 1].hoist.is_some();
        let memo_from = memo_level(levels, independent_tail).and_then(|m| {
            let level = &levels[m];
            if m < 3 || level.hoist.is_some() || level.reads.len() < 2 {
                return None;
            }
            let near = level.reads.iter().filter(|r| r.pos as usize == m - 1).count();
            let others = level.reads.iter().filter(|r| (r.pos as usize) < m - 1);
            let f = others
                .map(|r| r.pos as usize + 1)
                .chain(level.reuse.map(usize::from))
                .chain(level.partial.as_ref().map(|p| usize::from(p.at)))
                .max()
                .unwrap_or(0);
            // a bound on the level must not change while an entry lives:
            // from above depth f, or the key vertex itself
            let bounds_fixed = level.above.iter().all(|&p| (p as usize) < f || p as usize == m - 1);
            (near == 1 && f < m - 1 && bounds_fixed).then_some(f as u8)
        });
        self.independent_tail = independent_tail;
        self.twin_tail = independent_tail && twins(&levels[n - 2], &levels[n - 1], (n - 2) as u8);
        self.memo_from = memo_from;
        self.wide_tail = WideTail::of(levels);
        let mut due = vec![0u32; n + 1];
        for (l, level) in levels.iter().enumerate() {
            if let Some(p) = &level.partial {
                due[p.at as usize] |= 1 << l;
            }
        }
        self.partials_due = due;
        let conflicts: Vec<u32> = levels.iter().map(|l| positions(l.conflicts.iter().copied())).collect();
        let mut deps = vec![0u32; n];
        for (d, level) in levels.iter().enumerate() {
            let own = positions(level.reads.iter().map(|r| r.pos).chain(level.above.iter().copied()));
            let reused = level.reuse.map_or(0, |e| deps[e as usize] | conflicts[e as usize]);
            deps[d] = (own | reused) & below(d);
        }
        self.fail_deps = deps;
        self.fail_conflicts = conflicts;
        self.reused = levels.iter().filter_map(|l| l.reuse).fold(0, |m, e| m | 1 << e);
        self.derive_suffix_memo();
    }

    /// Computes [`Plan::suffix_deps`] and [`Plan::suffix_memo`] (after the
    /// failing-set masks, and again once the split is set or dropped).
    fn derive_suffix_memo(&mut self) {
        let n = self.depth();
        let mut deps = vec![0u32; n + 1];
        let mut acc = 0u32;
        for d in (0..=n).rev() {
            if d < n {
                acc |= self.fail_deps[d] | self.fail_conflicts[d];
            }
            if let Some(s) = self.split.as_deref().filter(|s| s.at as usize == d) {
                for p in s.parts.iter().chain(&s.overlaps).chain(&s.clusters) {
                    acc |= p.suffix_deps[d];
                }
            }
            deps[d] = acc & below(d);
        }
        self.suffix_memo = (1..n.saturating_sub(1))
            .filter(|&d| {
                let k = deps[d].count_ones() as usize;
                k <= SUFFIX_KEY_MAX && k < d
            })
            .fold(0, |m, d| m | 1 << d);
        self.suffix_deps = deps;
    }
}

/// Plan positions as a mask.
fn positions(ps: impl IntoIterator<Item = u8>) -> u32 {
    ps.into_iter().fold(0, |m, p| m | 1 << p)
}

/// The positions below depth `d`, as a mask.
pub(crate) fn below(d: usize) -> u32 {
    (1u64 << d).wrapping_sub(1) as u32
}

/// Whether the levels `p` (at depth `dp`) and `q` bind twins
/// ([`Plan::twin_tail`]): q conflicts with p, and their label, reads,
/// conflicts and bounds agree once p's position is left out of q's.
fn twins(p: &Level, q: &Level, dp: u8) -> bool {
    let same = |a: &[u8], b: &[u8]| {
        let mut a: Vec<u8> = a.iter().copied().filter(|&x| x != dp).collect();
        let mut b = b.to_vec();
        a.sort_unstable();
        b.sort_unstable();
        a == b
    };
    p.label == q.label
        && p.reads == q.reads
        && q.conflicts.contains(&dp)
        && same(&q.conflicts, &p.conflicts)
        && same(&q.above, &p.above)
}

/// [`Plan::memo_level`] of `levels`.
fn memo_level(levels: &[Level], independent_tail: bool) -> Option<usize> {
    let n = levels.len();
    match levels.last()?.hoist {
        None => Some(n - 1),
        Some(_) => independent_tail.then(|| n - 2),
    }
}

/// The independent last levels of a plan ([`Plan::wide_tail`]): from
/// `start` on, grouped by vertex label (injectivity binds only vertices of
/// one label; each group has at most three levels, whose injective tuples
/// inclusion–exclusion counts from pairwise and triple overlaps, or any
/// number of twins, whose t injective tuples from one set S number
/// |S|·(|S| − 1)···(|S| − t + 1): a star's leaves of one label, or two
/// classes of twins, a from A and b from B, counted from |A|, |B| and
/// |A ∩ B| ([`crate::count::two_classes`])). A tail
/// level may reuse an earlier tail level's candidates ([`Level::reuse`],
/// e.g. twins: two same-label leaves of the same vertices); the tail's
/// positions hold no binding while it is counted, so the reused set is the
/// earlier level's candidates, a superset of the level's own
/// ([`WideTail::nested`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WideTail {
    pub start: u8,
    pub groups: Vec<Vec<u8>>,
    /// `(x, y)`: level x's candidates are a subset of level y's, both in
    /// one group (x reads every list y reads and is cut by every bound
    /// that cuts y; no earlier binding of the label is in either set,
    /// through its conflicts or because it is a read vertex), so their
    /// overlap is |C_x| without a merge (twins: both ways, equal sets).
    pub nested: Vec<(u8, u8)>,
}

impl WideTail {
    /// The longest such tail of at least three levels, if any; the first two
    /// levels (a delta plan's seed, or a static plan's start and its first
    /// extension) never belong to it.
    fn of(levels: &[Level]) -> Option<WideTail> {
        let n = levels.len();
        (2..n.saturating_sub(2)).find_map(|start| {
            let tail = &levels[start..];
            let independent = tail.iter().all(|l| {
                !l.reads.is_empty()
                    && l.reads.iter().all(|r| (r.pos as usize) < start)
                    && l.above.iter().all(|&p| (p as usize) < start)
            });
            if !independent {
                return None;
            }
            let mut groups: Vec<Vec<u8>> = Vec::new();
            for (k, l) in tail.iter().enumerate() {
                let t = (start + k) as u8;
                match groups.iter_mut().find(|g| levels[g[0] as usize].label == l.label) {
                    Some(g) => g.push(t),
                    None => groups.push(vec![t]),
                }
            }
            let within = |x: &Level, y: &Level| {
                y.reads.iter().all(|r| x.reads.contains(r)) && y.above.iter().all(|p| x.above.contains(p))
            };
            let nested: Vec<(u8, u8)> = groups
                .iter()
                .flat_map(|g| g.iter().flat_map(move |&x| g.iter().map(move |&y| (x, y))))
                .filter(|&(x, y)| x != y && within(&levels[x as usize], &levels[y as usize]))
                .collect();
            // a group of more than three levels only of twins (equal sets),
            // or of two classes of twins (a delta plan's leaves of one label
            // reading the old list and the new one)
            groups
                .iter()
                .all(|g| g.len() <= 3 || twin_classes(g, &nested).len() <= 2)
                .then_some(WideTail {
                    start: start as u8,
                    groups,
                    nested,
                })
        })
    }
}

/// The levels of a [`WideTail`] group in classes of twins (each pair of a
/// class nested both ways: equal candidate sets), in group order.
pub fn twin_classes(group: &[u8], nested: &[(u8, u8)]) -> Vec<Vec<u8>> {
    let mut classes: Vec<Vec<u8>> = Vec::new();
    for &x in group {
        let twin = |c: &&mut Vec<u8>| nested.contains(&(x, c[0])) && nested.contains(&(c[0], x));
        match classes.iter_mut().find(twin) {
            Some(c) => c.push(x),
            None => classes.push(vec![x]),
        }
    }
    classes
}

/// Whether a delta plan counts appearing or vanishing embeddings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sign {
    Positive,
    Negative,
}

/// The delta query for relation `edge_index` and one sign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaPlan {
    pub edge_index: usize,
    pub sign: Sign,
    /// Label required of the batch edge (edge-labelled queries).
    pub seed_elabel: Option<Label>,
    /// `plan.order[0..2]` is the seed edge (u_a, u_b).
    pub plan: Plan,
}

pub(crate) fn levels_for(
    q: &QueryGraph,
    order: &[QVertex],
    version_of: impl Fn(usize) -> Version,
    skip_edge: Option<usize>,
) -> Vec<Level> {
    let mut pos = vec![0u8; q.num_vertices()];
    for (d, &u) in order.iter().enumerate() {
        pos[u] = d as u8;
    }
    let levels = order
        .iter()
        .enumerate()
        .map(|(d, &u)| {
            let mut reads: Vec<Read> = order[..d]
                .iter()
                .filter(|&&w| q.has_edge(w, u))
                .map(|&w| {
                    let j = q.edge_index(w, u).expect("edge exists");
                    Read {
                        pos: pos[w],
                        version: version_of(j),
                        elabel: q.edge_labelled().then(|| q.edge_label(w, u).expect("edge exists")),
                    }
                })
                .filter(|r| skip_edge.is_none_or(|i| q.edge_index(order[r.pos as usize], u) != Some(i)))
                .collect();
            reads.sort_by_key(|r| r.pos);
            // A vertex is never in its own list, so positions read at this
            // level can never collide with a candidate.
            let conflicts: Vec<u8> = order[..d]
                .iter()
                .enumerate()
                .filter(|&(_, &w)| q.label(w) == q.label(u) && !q.has_edge(w, u))
                .map(|(p, _)| p as u8)
                .collect();
            // A conflicting binding x = emb[p] lies in the list read from w
            // when the query has the edge (w, p) with the read's edge label
            // and it was checked in the same version (read by an earlier
            // level; the seed edge is not read, so it does not count).
            let in_read = |p: u8, r: &Read| {
                let (w, wp) = (order[r.pos as usize], order[p as usize]);
                match (q.edge_index(w, wp), q.edge_index(w, u)) {
                    (Some(jp), Some(ju)) => {
                        skip_edge != Some(jp)
                            && version_of(jp) == version_of(ju)
                            && q.edge_label(w, wp) == q.edge_label(w, u)
                    }
                    _ => false,
                }
            };
            let certain = conflicts
                .iter()
                .enumerate()
                .filter(|&(_, &p)| !reads.is_empty() && reads.iter().all(|r| in_read(p, r)))
                .fold(0u32, |m, (k, _)| m | 1 << k);
            Level {
                qv: u,
                label: q.label(u),
                extra: reads.clone(),
                reads,
                conflicts,
                certain,
                above: Vec::new(),
                reuse: None,
                hoist: None,
                partial: None,
            }
        })
        .collect();
    let mut levels = link_reuse(levels);
    if let Some(last) = levels.last_mut() {
        let h = last.reads.iter().map(|r| r.pos as usize + 1).max().unwrap_or(0);
        if h > 0 && h + 1 < order.len() {
            last.hoist = Some(h as u8);
            last.reuse = None;
            last.extra = last.reads.clone();
        }
    }
    for level in &mut levels {
        set_partial(level);
    }
    levels
}

/// Sets [`Level::partial`] where a level without reuse or hoist has at least
/// two reads bound before its latest one.
fn set_partial(level: &mut Level) {
    if level.reuse.is_some() || level.hoist.is_some() {
        return;
    }
    let Some(latest) = level.reads.iter().map(|r| r.pos).max() else {
        return;
    };
    let early: Vec<Read> = level.reads.iter().copied().filter(|r| r.pos < latest).collect();
    if early.len() < 2 {
        return;
    }
    let at = early.iter().map(|r| r.pos + 1).max().expect("two reads");
    level.extra.retain(|r| !early.contains(r));
    level.partial = Some(Partial { at, reads: early });
}

/// Moves to the end the vertex (after the first `fixed` positions, with no
/// neighbour after it) whose latest neighbour comes earliest: its
/// candidates then depend only on early bindings and are hoisted highest.
/// The last vertex stays when no other is hoisted higher (a leaf the order
/// already put last is not displaced by a vertex read later, e.g. RapidFlow's
/// insert Q_58, where the leaf's list was otherwise filtered again at every
/// binding of the level above it); among other ties the earliest moves.
/// No vertex's reads change.
pub(crate) fn defer_leaf(q: &QueryGraph, mut order: Vec<QVertex>, fixed: usize) -> Vec<QVertex> {
    let n = order.len();
    let latest_nbr = |k: usize| order[..k].iter().rposition(|&w| q.has_edge(order[k], w));
    let pick = (fixed..n)
        .filter(|&k| order[k + 1..].iter().all(|&w| !q.has_edge(order[k], w)))
        .min_by_key(|&k| (latest_nbr(k), k + 1 != n, k));
    if let Some(k) = pick {
        let v = order.remove(k);
        order.push(v);
    }
    order
}

/// Sets [`Level::reuse`]: for each level, the earlier materialised level
/// (non-empty reads, same label) whose reads it contains, preferring the one
/// that leaves the fewest extra lists.
fn link_reuse(mut levels: Vec<Level>) -> Vec<Level> {
    for d in 0..levels.len() {
        let best = (0..d)
            .filter(|&e| {
                let (le, ld) = (&levels[e], &levels[d]);
                !le.reads.is_empty() && le.label == ld.label && le.reads.iter().all(|r| ld.reads.contains(r))
            })
            .max_by_key(|&e| (levels[e].reads.len(), e));
        if let Some(e) = best {
            let covered = levels[e].reads.clone();
            levels[d].reuse = Some(e as u8);
            levels[d].extra.retain(|r| !covered.contains(r));
            // the reused candidates lack level e's own conflicts and what
            // its bounds cut, so a binding in every list read need not be
            // among them; e's own binding always is
            let own = levels[d].conflicts.iter().position(|&p| p as usize == e);
            levels[d].certain &= own.map_or(0, |k| 1 << k);
        }
    }
    levels
}

fn needs_label_checks(q: &QueryGraph, stats: &GraphStats) -> bool {
    !q.labels().iter().all(|&l| stats.only_label(l))
}

/// Labels of the vertices that `updates` add and that `plan`, made for `q` on
/// a graph whose every vertex carried the query's one label, would not check
/// ([`Plan::check_labels`] false). Such plans must be made again, with the
/// labels added to the statistics ([`GraphStats::with_vertex_labels`]), before
/// the batch is matched; empty when the plan checks labels or no update adds
/// such a vertex.
pub fn labels_plans_skip<'u>(
    plan: &Plan,
    q: &QueryGraph,
    updates: impl IntoIterator<Item = &'u csm_graph::Update>,
) -> Vec<Label> {
    if plan.check_labels {
        return Vec::new();
    }
    let mut out: Vec<Label> = updates
        .into_iter()
        .filter_map(|u| match *u {
            csm_graph::Update::AddVertex { label, .. } if label != q.label(0) => Some(label),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The full-matching plan: every relation read in `version`.
pub fn static_plan(q: &QueryGraph, strategy: &dyn OrderStrategy, stats: &GraphStats, version: Version) -> Plan {
    static_plan_from(q, strategy.order(q, &[], stats), stats, version)
}

/// [`static_plan`] with the order chosen on `g` ([`OrderStrategy::order_on`]).
pub fn static_plan_on(
    q: &QueryGraph,
    strategy: &dyn OrderStrategy,
    stats: &GraphStats,
    version: Version,
    g: &dyn GraphView,
) -> Plan {
    static_plan_from(q, strategy.order_on(q, &[], stats, g), stats, version)
}

fn static_plan_from(q: &QueryGraph, order: Vec<QVertex>, stats: &GraphStats, version: Version) -> Plan {
    let order = defer_leaf(q, order, 1);
    let how = Splitting::new(needs_label_checks(q, stats), q, 1);
    split_plan(q, order, 1, &how, &|_| version, None)
}

/// Most merge patterns ([`Split::overlaps`]: nonempty sets of blocks of
/// same-label vertices across parts) a split of parts that share vertex
/// labels may subtract: each is one more count at every split node.
pub const MAX_OVERLAPS: usize = 16;

/// Most overlap plans ([`Split::overlaps`]) one plan may hold, over all its
/// splits, those of its parts and those of its overlaps' own plans. A
/// merged query may split with overlaps again, so without a bound the
/// plans of a large query with few labels grow exponentially (a 32-vertex
/// query with 4 labels took minutes and gigabytes to plan). Splits past
/// the bound list their parts' product instead.
pub const MAX_OVERLAP_PLANS: usize = 256;

/// Most levels the plans of one query may hold: its static plan, or all
/// its delta plans together, with their splits' parts and overlaps. Each
/// level is a few hundred bytes; a 32-vertex query with 119 edges made
/// 230,000 plans of 5 M levels (2 GB, 7 s) before this bound. Splits past
/// it are not made (their levels list the parts' product instead).
pub const MAX_PLAN_LEVELS: usize = 1 << 18;

/// What [`split_plan`] keeps across the plans of one query: whether levels
/// check labels, how many overlap plans may still be made
/// ([`MAX_OVERLAP_PLANS`]), and how many more levels ([`MAX_PLAN_LEVELS`]).
struct Splitting {
    check_labels: bool,
    overlaps_left: std::cell::Cell<usize>,
    levels_left: std::cell::Cell<usize>,
}

impl Splitting {
    /// For one plan of `q` out of `plans` (the delta plans share
    /// [`MAX_PLAN_LEVELS`]; each may make a few splits at least).
    fn new(check_labels: bool, q: &QueryGraph, plans: usize) -> Splitting {
        Splitting {
            check_labels,
            overlaps_left: std::cell::Cell::new(MAX_OVERLAP_PLANS),
            levels_left: std::cell::Cell::new((MAX_PLAN_LEVELS / plans.max(1)).max(8 * q.num_vertices())),
        }
    }

    /// Counts a plan of `n` levels as made.
    fn spend(&self, n: usize) {
        self.levels_left.set(self.levels_left.get().saturating_sub(n));
    }

    /// Whether `plans` more plans of `n` levels fit in the level bound.
    fn affords(&self, plans: usize, n: usize) -> bool {
        plans.saturating_mul(n) <= self.levels_left.get()
    }

    /// Takes `n` overlap plans from the bound, or none when fewer are left.
    fn take(&self, n: usize) -> bool {
        let left = self.overlaps_left.get();
        self.overlaps_left.set(left.saturating_sub(n));
        n <= left
    }
}

/// The plan of `order` (levels by [`levels_for`] with `versions` and
/// `skip`) with its [`Split`], if any, at a depth of at least `fixed`
/// (bound before any level runs).
fn split_plan(
    q: &QueryGraph,
    order: Vec<QVertex>,
    fixed: usize,
    how: &Splitting,
    versions: &dyn Fn(usize) -> Version,
    skip: Option<usize>,
) -> Plan {
    let mut plan = Plan::new(order.clone(), levels_for(q, &order, versions, skip), how.check_labels);
    let n = order.len();
    how.spend(n);
    // A split pays where two or more parts have levels that the plan works
    // on at every node of the level before: the plan's nodes are then the
    // product of those parts' nodes, the split's their sum. Only a hoisted
    // last level (its candidates computed once, far above) costs a node
    // next to nothing, unless a wide tail sizes it again at every node.
    let hoisted = plan.levels[n - 1].hoist.is_some() && plan.wide_tail.is_none();
    let works = |part: &Vec<QVertex>| part.iter().any(|&u| !(hoisted && u == order[n - 1]));
    let split = (fixed.max(1)..n.saturating_sub(1)).find_map(|at| {
        let parts = connected_parts(q, &order[at..])?;
        if parts.iter().filter(|p| works(p)).count() < 2 || !how.affords(parts.len(), n) {
            return None;
        }
        // no overlaps where the parts' labels are disjoint
        let overlaps = overlap_plans(q, &order, at, &parts, how, versions, skip)?;
        Some((at, parts, overlaps))
    });
    if let Some((at, parts, overlaps)) = split {
        // Parts that share no vertex label never bind one data vertex
        // twice: where they fall into two or more such clusters and one
        // holds several parts, each cluster gets a plan of its own (a
        // cluster of several parts splits again at `at`, with overlaps
        // among its own parts only), counted when the product and the
        // overlaps leave the count unknown ([`Split::completions`]).
        let groups = label_clusters(q, &parts);
        let clusters = if groups.len() > 1 && groups.len() < parts.len() && how.affords(groups.len(), n) {
            groups
                .into_iter()
                .map(|group| {
                    let fixed = if group.len() == 1 { at + 1 } else { at };
                    let sub: Vec<QVertex> = order[..at].iter().copied().chain(group.into_iter().flatten()).collect();
                    split_plan(q, defer_leaf(q, sub, at), fixed, how, versions, skip)
                })
                .collect()
        } else {
            Vec::new()
        };
        let parts = parts
            .into_iter()
            .map(|part| {
                let sub: Vec<QVertex> = order[..at].iter().copied().chain(part).collect();
                split_plan(q, defer_leaf(q, sub, at), at + 1, how, versions, skip)
            })
            .collect();
        plan.split = Some(Arc::new(Split {
            at: at as u8,
            parts,
            overlaps,
            clusters,
        }));
        plan.derive_suffix_memo();
    }
    plan
}

/// The plans that [`Split::overlaps`] subtracts when the `parts` of
/// `order[at..]` share vertex labels: one per *merge pattern*, a set of
/// disjoint blocks of two or more same-label vertices from distinct parts
/// (at most one vertex of each part per block; the parts' own plans keep
/// a part's vertices apart), of the query with each block merged into one
/// vertex. Every tuple of the parts' completions binds the vertices of
/// exactly one pattern's blocks together (the empty pattern: an embedding),
/// and those tuples are the embeddings of that pattern's merged query, so
/// the embeddings are the product less the merged queries' counts. With
/// two parts the patterns are the nonempty matchings across them. `None`
/// when there are more than [`MAX_OVERLAPS`] patterns, or fewer overlap
/// plans left than patterns ([`MAX_OVERLAP_PLANS`]).
fn overlap_plans(
    q: &QueryGraph,
    order: &[QVertex],
    at: usize,
    parts: &[Vec<QVertex>],
    how: &Splitting,
    versions: &dyn Fn(usize) -> Version,
    skip: Option<usize>,
) -> Option<Vec<Plan>> {
    // (none where the parts share no label; more than MAX_OVERLAPS: None)
    let mut patterns = Vec::new();
    merge_patterns(q, parts, &mut Vec::new(), 0, 0, &mut patterns)?;
    if !how.take(patterns.len()) || !how.affords(parts.len() + patterns.len(), order.len()) {
        return None;
    }
    let mut plans = Vec::new();
    for blocks in patterns {
        // each block as (its first vertex, another) pairs
        let merge: Vec<(QVertex, QVertex)> = blocks
            .iter()
            .flat_map(|b| b[1..].iter().map(move |&y| (b[0], y)))
            .collect();
        if let Some(p) = merged_plan(q, order, at, &merge, how, versions, skip) {
            plans.push(p);
        }
    }
    Some(plans)
}

/// Appends to `out` every merge pattern ([`overlap_plans`]) that extends
/// `blocks` (built over the vertices before `parts[part][pos]`) and has a
/// block of two or more; `None` once there are more than [`MAX_OVERLAPS`].
fn merge_patterns(
    q: &QueryGraph,
    parts: &[Vec<QVertex>],
    blocks: &mut Vec<Vec<QVertex>>,
    part: usize,
    pos: usize,
    out: &mut Vec<Vec<Vec<QVertex>>>,
) -> Option<()> {
    if part == parts.len() {
        if blocks.iter().any(|b| b.len() > 1) {
            if out.len() == MAX_OVERLAPS {
                return None;
            }
            out.push(blocks.iter().filter(|b| b.len() > 1).cloned().collect());
        }
        return Some(());
    }
    if pos == parts[part].len() {
        return merge_patterns(q, parts, blocks, part + 1, 0, out);
    }
    let x = parts[part][pos];
    // x alone
    blocks.push(vec![x]);
    merge_patterns(q, parts, blocks, part, pos + 1, out)?;
    blocks.pop();
    // x joins a block of earlier parts' vertices of its label, which no
    // earlier vertex of x's part has joined
    let of_part = |v: QVertex| parts[part].contains(&v);
    for k in 0..blocks.len() {
        let b = &blocks[k];
        if q.label(b[0]) == q.label(x) && !b.iter().any(|&v| of_part(v)) {
            blocks[k].push(x);
            merge_patterns(q, parts, blocks, part, pos + 1, out)?;
            blocks[k].pop();
        }
    }
    Some(())
}

/// The plan, bound prefix `order[..at]`, of `q` with each pair `(x, y)`
/// of `merge` made one vertex (at the earlier of the two positions; its
/// reads are both vertices' edges), or `None` when such a vertex would
/// need two edge labels to one neighbour (no embedding). Two edges of one
/// neighbour in different versions become one read of the version both
/// imply: Common with New or Old is Common (N ∩ N' lies in both).
fn merged_plan(
    q: &QueryGraph,
    order: &[QVertex],
    at: usize,
    merge: &[(QVertex, QVertex)],
    how: &Splitting,
    versions: &dyn Fn(usize) -> Version,
    skip: Option<usize>,
) -> Option<Plan> {
    let n = q.num_vertices();
    let gone = |v: QVertex| merge.iter().any(|&(_, y)| y == v);
    let mut id = vec![usize::MAX; n];
    let mut next = 0;
    for (v, slot) in id.iter_mut().enumerate() {
        if !gone(v) {
            *slot = next;
            next += 1;
        }
    }
    for &(x, y) in merge {
        id[y] = id[x];
    }
    let labels: Vec<Label> = (0..n).filter(|&v| !gone(v)).map(|v| q.label(v)).collect();
    let mut edges: Vec<(QVertex, QVertex, Label)> = Vec::new();
    // per merged edge, the version its reads take
    let mut vers: Vec<Version> = Vec::new();
    let mut seed = None;
    for (j, &(u, v, l)) in q.edges().iter().enumerate() {
        let (u2, v2) = (id[u], id[v]);
        let ver = versions(j);
        match edges
            .iter()
            .position(|&(a, b, _)| (a, b) == (u2, v2) || (a, b) == (v2, u2))
        {
            Some(k) => {
                if edges[k].2 != l {
                    return None;
                }
                if vers[k] != ver {
                    vers[k] = Version::Common;
                }
            }
            None => {
                if skip == Some(j) {
                    seed = Some(edges.len());
                }
                edges.push((u2, v2, l));
                vers.push(ver);
            }
        }
    }
    let m = QueryGraph::new(labels, &edges, q.edge_labelled()).ok()?;
    let mut sub: Vec<QVertex> = Vec::with_capacity(next);
    for &v in order {
        if !sub.contains(&id[v]) {
            sub.push(id[v]);
        }
    }
    let versions_m = |j: usize| vers[j];
    Some(split_plan(&m, defer_leaf(&m, sub, at), at + 1, how, &versions_m, seed))
}

/// `parts` grouped into clusters that share no vertex label with each
/// other (two parts with a label in common are in one cluster), each in
/// `parts`' order, ordered by their first parts.
fn label_clusters(q: &QueryGraph, parts: &[Vec<QVertex>]) -> Vec<Vec<Vec<QVertex>>> {
    let shares = |a: &[QVertex], b: &[QVertex]| a.iter().any(|&x| b.iter().any(|&y| q.label(x) == q.label(y)));
    // each part's cluster, named by its first part
    let mut root: Vec<usize> = (0..parts.len()).collect();
    for i in 0..parts.len() {
        for j in 0..i {
            if shares(&parts[i], &parts[j]) {
                let (ri, rj) = (root[i], root[j]);
                let low = ri.min(rj);
                for r in root.iter_mut().filter(|r| **r == ri || **r == rj) {
                    *r = low;
                }
            }
        }
    }
    // a cluster's name is its first part's index: clusters come in that order
    let mut out: Vec<Vec<Vec<QVertex>>> = Vec::new();
    let mut at = vec![usize::MAX; parts.len()];
    for (part, &r) in parts.iter().zip(&root) {
        if at[r] == usize::MAX {
            at[r] = out.len();
            out.push(Vec::new());
        }
        out[at[r]].push(part.clone());
    }
    out
}

/// The connected parts of `rest` (query edges within `rest` only, each in
/// `rest`'s order) when there are two or more.
fn connected_parts(q: &QueryGraph, rest: &[QVertex]) -> Option<Vec<Vec<QVertex>>> {
    let within = rest.iter().fold(0u32, |m, &u| m | 1 << u);
    let mut parts: Vec<u32> = Vec::new();
    for &u in rest {
        if parts.iter().any(|&p| p >> u & 1 == 1) {
            continue;
        }
        let mut part = 1u32 << u;
        loop {
            let grown = (0..q.num_vertices())
                .filter(|&v| part >> v & 1 == 1)
                .fold(part, |m, v| m | (q.adj_mask(v) & within));
            if grown == part {
                break;
            }
            part = grown;
        }
        parts.push(part);
    }
    if parts.len() < 2 {
        return None;
    }
    Some(
        parts
            .iter()
            .map(|&p| rest.iter().copied().filter(|&u| p >> u & 1 == 1).collect())
            .collect(),
    )
}

/// The 2m delta plans of a query (one per relation and sign).
pub fn delta_plans(q: &QueryGraph, strategy: &dyn OrderStrategy, stats: &GraphStats) -> Vec<DeltaPlan> {
    delta_plans_with(q, stats, |prefix| strategy.order(q, prefix, stats))
}

/// [`delta_plans`] with each order chosen on `g` ([`OrderStrategy::order_on`]).
pub fn delta_plans_on(
    q: &QueryGraph,
    strategy: &dyn OrderStrategy,
    stats: &GraphStats,
    g: &dyn GraphView,
) -> Vec<DeltaPlan> {
    delta_plans_with(q, stats, |prefix| strategy.order_on(q, prefix, stats, g))
}

fn delta_plans_with(
    q: &QueryGraph,
    stats: &GraphStats,
    order_for: impl Fn(&[QVertex]) -> Vec<QVertex>,
) -> Vec<DeltaPlan> {
    let mut out = Vec::with_capacity(2 * q.num_edges());
    for (i, &(a, b, l)) in q.edges().iter().enumerate() {
        let order = defer_leaf(q, order_for(&[a, b]), 2);
        for sign in [Sign::Positive, Sign::Negative] {
            let later = match sign {
                Sign::Positive => Version::New,
                Sign::Negative => Version::Old,
            };
            let version_of = |j: usize| if j < i { Version::Common } else { later };
            out.push(DeltaPlan {
                edge_index: i,
                sign,
                seed_elabel: q.edge_labelled().then_some(l),
                plan: split_plan(
                    q,
                    order.clone(),
                    2,
                    &Splitting::new(needs_label_checks(q, stats), q, 2 * q.num_edges()),
                    &version_of,
                    Some(i),
                ),
            });
        }
    }
    out
}
