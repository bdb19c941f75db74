//! The `cpu` engine: the planner's executor run in parallel with rayon, over
//! batch edges for continuous matching (GCSM's CPU baseline, Sec. VI-A) and
//! over start vertices for static matching. Small batches stay on the
//! calling thread; a node with enough work below it is split into strided
//! parts (lazily: only when this thread has no queued task left to steal,
//! or when the node alone is heavy), so that a single heavy update or a hub
//! start vertex still spreads over all threads.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use csm_engine::{
    process_phases, relabel_phases_in, Batch, BatchResult, ContinuousMatcher, EdgesApart, EngineError, StaticMatcher,
};
use csm_graph::{
    BatchDelta, CommonView, CsrGraph, DynamicGraph, Edge, GraphData, GraphView, HubLabelGroups, Hubs, Label,
    LocatedUpdate, NewGroups, Staging, UpdateVersions, Version, VertexId,
};
use csm_planner::{
    delta_plans_on, for_each_seed, labels_plans_skip, seed_fits, single_edge_restricted, DeltaCounts, DeltaPlan,
    Executor, MemoScope, NoVisitor, OrderStrategy, Plan, QueryGraph, Quota, SeedRule, SharedMemo, SharedSuffixMemo,
    Sign,
};
use rayon::prelude::*;

use csm_planner::count;
use csm_planner::query::MAX_QUERY_VERTICES;

mod capped;
mod decompose;
mod others;
mod overlap;

/// Tasks per thread when a node's children are split; a level with fewer
/// candidates than this many per thread is split again one level down (see
/// [`count_split`]).
const NARROW_TASKS: usize = 8;

/// A registered query's state: graph, delta plans, their symmetry, hubs, query.
type Registered = (DynamicGraph, Vec<DeltaPlan>, Symmetry, Option<Hubs>, QueryGraph);

/// Configuration shared by the static and continuous modes.
#[derive(Clone)]
pub struct CpuEngine {
    order: Arc<dyn OrderStrategy>,
    pool: Arc<rayon::ThreadPool>,
    /// The graph, its delta plans and their symmetry, the hubs whose lists
    /// batches read by label ([`HubLabelGroups`]; `None` when the plans do
    /// not check labels or label groups are off), and the query.
    state: Option<Registered>,
    symmetry: bool,
    threads: usize,
    /// Batches estimated below this much work run on the caller's thread
    /// (`None`: learned per query, [`WorkRate`]).
    min_parallel_work: Option<u64>,
    rate: WorkRate,
    /// Executor for the single-thread path (buffers reused across batches).
    exec: Executor,
    /// Per-update list versions of overlapped runs (buffers reused).
    versions: UpdateVersions,
    /// Whether one-at-a-time runs pay for their list versions
    /// ([`overlap::OverlapChoice`]).
    overlap: overlap::OverlapChoice,
    /// Whether batches run as one Eq. (1) batch or decomposed into their
    /// net single-edge updates ([`decompose`]).
    decompose: decompose::DecomposeChoice,
    /// Static counts read label groups ([`CsrByLabel`]) when labels matter.
    by_label: bool,
    /// When batches read hub lists by label ([`HubLabelGroups`]).
    hub_rule: HubRule,
    /// The first time slice of a capped count's race ([`capped`]).
    first_slice: std::time::Duration,
    /// Whether continuous matching keeps the edges the query cannot use
    /// apart from its graph ([`others`]; default true).
    edge_filter: bool,
    /// Those edges, when kept apart.
    apart: Option<EdgesApart>,
    /// [`CpuEngine::route_parallel_min`].
    route_parallel_min: Option<usize>,
}

/// When continuous matching groups hub lists by label
/// ([`HubLabelGroups`]): for queries of at least `min_query` vertices whose
/// plans check labels or read edge labels, the lists of vertices of degree
/// at least `min_degree`, in batches that touch many lists only those of
/// degree `batch_min_degree` or more. A triangle reads each list about once
/// per batch, so grouping does not repay itself there.
///
/// One update at a time groups almost every list (`min_degree` 4): reads
/// by label then skip the entries of other labels, and each update patches
/// the groups of the two lists it changes. On an edge-labelled R-MAT (4
/// vertex labels, 3 edge labels) a 6-vertex query took 0.96 s against
/// 1.57 s with bound 64; on 24 of RapidFlow's Enron queries 1.63-1.81 s
/// against 2.08-2.23 s. A large batch regroups every hub it touches: on
/// Enron's 4,096-update batches bound 4 made diamond twice as slow, so
/// those keep 64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HubRule {
    pub min_degree: usize,
    pub batch_min_degree: usize,
    pub min_query: usize,
}

impl Default for HubRule {
    fn default() -> Self {
        HubRule {
            min_degree: 4,
            batch_min_degree: 64,
            min_query: 4,
        }
    }
}

/// The counts of a one-edge batch with symmetry rules ([`single_edge`]),
/// on a committed graph `g` that is G ∩ G' of the batch (the graph before
/// an insertion, after a deletion; nothing pending), with the hubs' committed
/// groups.
fn count_single_edge(
    g: &DynamicGraph,
    hubs: Option<&Hubs>,
    plans: &[DeltaPlan],
    sym: &Symmetry,
    delta: &BatchDelta,
    pool: Option<(&rayon::ThreadPool, u64)>,
    ex: &mut Executor,
) -> (DeltaCounts, Option<u64>) {
    debug_assert!(!g.is_pending(), "G ∩ G' of a one-edge batch is a committed graph");
    let no_hubs = Hubs::default();
    let view = HubLabelGroups::new(g, hubs.unwrap_or(&no_hubs), g.touched());
    count_delta_adaptive(&view, plans, Some(sym), delta, pool, ex)
}

/// Commits `g`'s staged batch after refreshing `hubs` from the lists it
/// changed (which [`Hubs::update`] needs before the commit), keeping the
/// groups of the new lists that the batch's matching built.
fn commit_with_hubs(g: &mut DynamicGraph, hubs: &mut Option<Hubs>, built: NewGroups) {
    if let Some(hubs) = hubs {
        hubs.update(&*g, g.touched(), g.pending_delta());
        hubs.adopt(built);
    }
    g.commit();
}

/// Runs `f`, the graph side of a batch, inside `pool` when the graph
/// `wants_pool` for it ([`DynamicGraph::wants_pool`]); else on the calling
/// thread.
fn graph_work<R: Send>(pool: &rayon::ThreadPool, wants_pool: bool, f: impl FnOnce() -> R + Send) -> R {
    if wants_pool && pool.current_num_threads() > 1 {
        pool.install(f)
    } else {
        f()
    }
}

impl CpuEngine {
    /// `threads = 0` uses every core.
    pub fn new(threads: usize, order: Arc<dyn OrderStrategy>) -> Result<CpuEngine, EngineError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| EngineError::Other(format!("cannot start thread pool: {e}")))?;
        let threads = pool.current_num_threads();
        Ok(CpuEngine {
            order,
            pool: Arc::new(pool),
            state: None,
            symmetry: true,
            threads,
            min_parallel_work: None,
            rate: WorkRate::default(),
            exec: Executor::new(),
            versions: UpdateVersions::new(),
            overlap: overlap::OverlapChoice::default(),
            decompose: decompose::DecomposeChoice::default(),
            by_label: true,
            hub_rule: HubRule::default(),
            first_slice: capped::FIRST_SLICE,
            edge_filter: true,
            apart: None,
            route_parallel_min: None,
        })
    }

    /// Turns symmetry off (for comparisons): the single-edge shortcut and
    /// the automorphism restrictions of static counts.
    pub fn without_symmetry(mut self) -> Self {
        self.symmetry = false;
        self
    }

    /// Static counts read whole neighbour lists and filter by label instead
    /// of grouping the lists by label first (for comparisons).
    pub fn without_label_groups(mut self) -> Self {
        self.by_label = false;
        self
    }

    /// Continuous matching keeps every edge in the graph it matches on,
    /// instead of keeping the edges whose label triple no query edge has
    /// apart (for comparisons; see the `others` module).
    pub fn without_edge_filter(mut self) -> Self {
        self.edge_filter = false;
        self
    }

    /// Sets the batch size from which the routing of a batch between the
    /// graph and the edges kept apart looks its edges up on the pool (0:
    /// always with 2 or more threads; by default
    /// [`csm_graph::OtherEdges::wants_pool`]'s rule), for tests and
    /// experiments.
    pub fn route_parallel_min(mut self, updates: usize) -> Self {
        self.route_parallel_min = Some(updates);
        self
    }

    /// Sets the first time slice of a capped count's race between the quick
    /// order and the engine's own (default 20 ms; see the `capped` module).
    pub fn first_slice(mut self, slice: std::time::Duration) -> Self {
        self.first_slice = slice;
        self
    }

    /// Sets when batches group hub lists by label (see [`HubRule`]).
    pub fn hub_rule(mut self, rule: HubRule) -> Self {
        self.hub_rule = rule;
        self
    }

    /// Fixes the estimated work (list entries) below which a batch runs on
    /// the calling thread (0 always uses the pool). By default the bound is
    /// learned per query ([`WorkRate`]).
    pub fn min_parallel_work(mut self, work: u64) -> Self {
        self.min_parallel_work = Some(work);
        self
    }

    /// The estimated work from which a batch currently goes to the pool
    /// (fixed, or learned so far).
    pub fn parallel_bound(&self) -> u64 {
        self.min_parallel_work.unwrap_or_else(|| self.rate.min_work())
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The registered graph (after `init`): without the edges kept apart
    /// ([`CpuEngine::edges_apart`]), which no match can use.
    pub fn graph(&self) -> Option<&DynamicGraph> {
        self.state.as_ref().map(|s| &s.0)
    }

    /// How many edges whose label triple no query edge has are kept apart
    /// from [`CpuEngine::graph`] (0 when none are).
    pub fn edges_apart(&self) -> usize {
        self.apart.as_ref().map_or(0, |o| o.len())
    }

    /// Forgets what was learned of the plans (after planning again).
    fn reset_learning(&mut self) {
        self.exec = Executor::default();
        self.rate = WorkRate::default();
        self.decompose.reset();
    }
}

thread_local! {
    /// One executor per pool thread, reused across seeds and batches (its
    /// buffers and bitmaps are sized once, not per task).
    static EXEC: RefCell<Executor> = RefCell::new(Executor::new());
}

/// Runs `f` with this thread's executor. `f` must not re-enter rayon (a
/// stolen task would find the executor borrowed).
fn with_exec<R>(f: impl FnOnce(&mut Executor) -> R) -> R {
    EXEC.with(|ex| f(&mut ex.borrow_mut()))
}

/// Nodes whose children the parallel counts computed to spread them over
/// the pool ([`count_split_in`]), in this process.
static SPREAD_NODES: AtomicU64 = AtomicU64::new(0);

/// How many nodes the parallel counts of this process examined for
/// spreading their children over the pool, computing their candidates
/// (the overhead a count adds to one thread's search; for tests and
/// probes: the counter is process-wide).
pub fn spread_nodes() -> u64 {
    SPREAD_NODES.load(Ordering::Relaxed)
}

/// Nodes whose children's subtrees are estimated below this many list
/// entries are not split.
const SPLIT_MIN_WORK: u64 = 1024;

/// A node is split while its thread has queued tasks only when its
/// children's subtrees are estimated above this many list entries (a few
/// milliseconds of work: far more than the split costs), and then into one
/// part per thread. With 2^20 and 8 parts per thread, a static house on 16
/// threads went from 1.32 to 1.71 s (too many parts, each re-hoisting and
/// re-pinning).
static HEAVY_WORK: AtomicU64 = AtomicU64::new(1 << 22);

/// [`HEAVY_WORK`]'s value (tests lower it to split every node early).
#[inline]
fn heavy_work() -> u64 {
    HEAVY_WORK.load(Ordering::Relaxed)
}

/// Pools of up to this many threads give the parts of a light split node
/// one shared last-level memo ([`count_split_in`]).
const LIGHT_SHARE_MAX_THREADS: usize = 4;

/// Below this many possible candidates a node with queued sibling tasks runs
/// without estimating its work ([`candidates_bound`]).
const HEAVY_MIN_CANDS: u64 = 64;

/// An upper bound on the candidates of the node `prefix`'s children without
/// intersecting: the shortest list their level reads.
fn candidates_bound<G: GraphView + ?Sized>(g: &G, plan: &Plan, prefix: &[VertexId]) -> u64 {
    plan.levels[prefix.len()]
        .reads
        .iter()
        .map(|r| g.nbrs(prefix[r.pos as usize], r.version).len() as u64)
        .min()
        .unwrap_or(u64::MAX)
}

/// A rough number of list entries read below the children `cands` of the
/// node `prefix`: per child, its degree, capped at 8 times the shortest list
/// its level intersects with besides its own (a fixed earlier list, or the
/// reused candidate set itself: galloping makes those intersections cheap),
/// times 8 for each level below theirs beyond the next.
fn subtree_work<G: GraphView + ?Sized>(g: &G, plan: &Plan, prefix: &[VertexId], cands: &[VertexId]) -> u64 {
    let d = prefix.len();
    let deg = |v: VertexId| g.nbrs(v, Version::New).len() as u64;
    let other = plan.levels.get(d + 1).and_then(|next| {
        let fixed = next
            .reads
            .iter()
            .filter(|r| (r.pos as usize) < d)
            .map(|r| deg(prefix[r.pos as usize]));
        let reused = (next.reuse == Some(d as u8)).then_some(cands.len() as u64);
        fixed.chain(reused).min()
    });
    let scan: u64 = cands
        .iter()
        .map(|&c| other.map_or(deg(c), |o| deg(c).min(8 * o.max(1))))
        .sum();
    scan << deeper_levels_shift(plan, d)
}

/// log2 of the factor 8 per level below a depth-`d` node's children beyond
/// the next, used by the work estimates.
fn deeper_levels_shift(plan: &Plan, d: usize) -> u32 {
    (3 * plan.depth().saturating_sub(d + 2)).min(30) as u32
}

/// Counts completions of `prefix`, spreading the children at the next level
/// over the pool in a few strided parts per thread (each part keeps the
/// node's hoisted and pinned state, [`Executor::count_strided`]). A level narrower
/// than a few tasks per thread cannot keep the pool busy by itself, so its
/// children split again while a level remains below theirs.
fn count_split<G: GraphView + ?Sized>(g: &G, plan: &Plan, prefix: &[VertexId], shared: Shared<'_>) -> u64 {
    count_split_in(g, plan, prefix, false, shared)
}

/// What the parts of one count share across the pool: the last-level memo
/// of an enclosing split node ([`SharedMemo`]), the run's match quota
/// ([`Quota`], for counts capped at a limit) and the suffix memo's scope
/// ([`MemoScope`]: counts on one unchanged view; a fresh one per count
/// without) and, with it, the suffix memo's table when the threads share
/// one ([`SharedSuffixMemo`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Shared<'a> {
    memo: Option<&'a Arc<SharedMemo>>,
    quota: Option<&'a Arc<Quota>>,
    scope: Option<MemoScope>,
    suffix: Option<&'static SharedSuffixMemo>,
    /// Tasks the narrow levels split above made (the product of their
    /// widths; 0 for none): once they are a few per thread, a narrow level
    /// no longer splits each child again ([`count_split_node`]).
    width: usize,
}

impl Shared<'_> {
    /// The suffix memo's scope of a count: the shared one, else a fresh one.
    fn scope(&self) -> MemoScope {
        self.scope.unwrap_or_else(MemoScope::new)
    }
}

/// [`count_split`]. `busy`: the pool has other work queued even when this
/// thread's queue is empty (the other updates of an overlapped run), so
/// only a heavy node splits. `shared`: see [`Shared`].
///
/// The node's count is taken from the suffix memo where a part on this
/// thread (or the shared table) found it, and stored there once counted:
/// the parts of one count share its scope, so that splitting a node's
/// children never lists what one thread's search counts once
/// ([`Executor::cached_count`]).
fn count_split_in<G: GraphView + ?Sized>(
    g: &G,
    plan: &Plan,
    prefix: &[VertexId],
    busy: bool,
    shared: Shared<'_>,
) -> u64 {
    if shared.quota.is_some_and(|q| q.stops()) {
        return 0;
    }
    let scope = shared.scope();
    let shared = Shared {
        scope: Some(scope),
        ..shared
    };
    let memo = shared.quota.is_none() && rayon::current_num_threads() > 1;
    if let Some(n) = memo
        .then(|| with_exec_shared(shared, |ex| ex.cached_count(scope, plan, prefix)))
        .flatten()
    {
        return n;
    }
    let n = count_split_node(g, plan, prefix, busy, shared);
    if memo {
        with_exec_shared(shared, |ex| ex.cache_count(scope, plan, prefix, n));
    }
    n
}

/// [`count_split_in`] past the memo: the node on this thread or its
/// children (or parts) spread over the pool.
fn count_split_node<G: GraphView + ?Sized>(
    g: &G,
    plan: &Plan,
    prefix: &[VertexId],
    busy: bool,
    shared: Shared<'_>,
) -> u64 {
    let d = prefix.len();
    let threads = rayon::current_num_threads();
    // where the plan splits into parts the count is a product, without
    // enumerating the node's children (uncapped counts only)
    let splits_here = shared.quota.is_none() && plan.split.as_ref().is_some_and(|s| s.at as usize == d);
    // the whole node on this thread
    let here = || {
        with_exec_shared(shared, |ex| {
            ex.count_within(shared.scope(), g, plan, prefix, &mut NoVisitor)
        })
    };
    // a node that counts its independent tail (a product of candidate-set
    // sizes, Plan::wide_tail and Plan::independent_tail) has no children
    // to spread: splitting them listed what the tail counts (a star of 8
    // same-label leaves on an 8,000-edge graph: over a minute on two
    // threads, 0.03 s on one)
    let tail_here = plan.wide_tail.as_ref().is_some_and(|t| t.start as usize == d)
        || (plan.independent_tail && d + 2 == plan.depth());
    if d + 1 >= plan.depth() || threads == 1 || tail_here {
        return here();
    }
    // Lazy splitting: while this thread has queued tasks that idle threads
    // can steal, there is enough parallelism already, unless this node is
    // heavy: a hub reached late would otherwise run on one thread while the
    // others run out of work. Nodes with few candidates are not examined.
    // A plan with a last-level memo splits a heavy node early only where
    // its parts can share one memo (the node binds the vertices the memo
    // depends on): with a memo each, the static 5-cycle on 16 threads went
    // from 19 s to over 40 s.
    let pending = busy || rayon_core::current_thread_has_pending_tasks() == Some(true);
    if splits_here {
        return match plan.split.as_deref() {
            Some(split) if !pending => count_parts_split(g, split, prefix, busy, shared),
            _ => here(),
        };
    }
    let shareable = plan.memo_from.is_some_and(|f| d >= f as usize);
    let memo_stays = plan.memo_from.is_some() && !shareable;
    if pending && (memo_stays || candidates_bound(g, plan, prefix) < HEAVY_MIN_CANDS) {
        return here();
    }
    SPREAD_NODES.fetch_add(1, Ordering::Relaxed);
    let cands = with_exec(|ex| {
        let mut c = Vec::new();
        ex.candidates(g, plan, prefix, &mut c);
        c
    });
    let n = cands.len();
    let min_work = if pending { heavy_work() } else { SPLIT_MIN_WORK };
    let work = subtree_work(g, plan, prefix, &cands);
    if work < min_work {
        return with_exec_shared(shared, |ex| {
            ex.count_strided(shared.scope(), g, plan, prefix, &cands, 0, 1)
        });
    }
    // A heavy node's parts share one memo. A light node's parts share one
    // too, sized by the work below them, on pools of up to
    // `LIGHT_SHARE_MAX_THREADS`: with a memo each, the parts counted again
    // the last levels their siblings had (the static diamond on 2 threads
    // took longer than on one), but on 16 threads the shared table's
    // traffic between cores cost more than it saved (house and 4-cycle
    // 1.3x slower; figures in docs/ENGINE.md, "Threads").
    let heavy = work >= heavy_work();
    let share = shared.memo.is_none() && shareable && (heavy || threads <= LIGHT_SHARE_MAX_THREADS);
    let own = share.then(|| {
        Arc::new(SharedMemo::with_capacity(if heavy {
            usize::MAX
        } else {
            work as usize
        }))
    });
    let shared = Shared {
        memo: shared.memo.or(own.as_ref()),
        ..shared
    };
    // (the tasks split above already keep the pool busy: splitting every
    // child of every narrow level again made a node per tuple of a deep
    // plan's narrow levels, each estimated heavy by its depth, where one
    // thread's memo counts them once: a 16-leaf star's batch on two threads
    // ran for minutes, on one for a millisecond)
    let width = shared.width.max(1);
    if n < NARROW_TASKS * threads && d + 2 < plan.depth() && width < NARROW_TASKS * threads {
        let shared = Shared {
            width: width.saturating_mul(n),
            ..shared
        };
        let mut p = [0; MAX_QUERY_VERTICES];
        p[..d].copy_from_slice(prefix);
        return cands
            .par_iter()
            .map(|&c| {
                let mut p = p;
                p[d] = c;
                count_split_in(g, plan, &p[..=d], busy, shared)
            })
            .reduce(|| 0, count::add);
    }
    let parts = n.min(if pending { threads } else { NARROW_TASKS * threads });
    (0..parts)
        .into_par_iter()
        .map(|k| {
            with_exec_shared(shared, |ex| {
                ex.count_strided(shared.scope(), g, plan, prefix, &cands, k, parts)
            })
        })
        .reduce(|| 0, count::add)
}

/// Completions of a split node ([`csm_planner::Split::completions`]) with
/// an idle pool: each part's and each overlap's plan (the same bound
/// prefix) is counted by [`count_split_in`], so that each spreads its own
/// children over the pool, instead of one after the other on one thread.
/// The parts' plans have last-level memos of their own; they count in
/// `shared`'s suffix-memo scope and table, if any.
fn count_parts_split<G: GraphView + ?Sized>(
    g: &G,
    split: &csm_planner::Split,
    prefix: &[VertexId],
    busy: bool,
    shared: Shared<'_>,
) -> u64 {
    let shared = Shared { memo: None, ..shared };
    split
        .completions(|plan| count_split_in(g, plan, prefix, busy, shared))
        .unwrap_or(0)
}

/// [`with_exec`] with the executor using `shared`'s memo and quota for the
/// duration of `f`.
fn with_exec_shared<R>(shared: Shared<'_>, f: impl FnOnce(&mut Executor) -> R) -> R {
    with_exec(|ex| {
        ex.share_memo(shared.memo.cloned());
        ex.set_quota(shared.quota.cloned());
        ex.share_suffix(shared.suffix);
        let r = f(ex);
        ex.share_memo(None);
        ex.set_quota(None);
        ex.share_suffix(None);
        r
    })
}

/// Representative seeds of a query for single-edge batches (see
/// [`csm_planner::symmetry`]), one set per sign: rules and the plans they
/// index, which also break the symmetry left once the edge is bound.
#[derive(Clone, Debug, Default)]
pub struct Symmetry {
    positive: Option<(Vec<SeedRule>, Vec<DeltaPlan>)>,
    negative: Option<(Vec<SeedRule>, Vec<DeltaPlan>)>,
}

impl Symmetry {
    pub fn of(q: &QueryGraph, plans: &[DeltaPlan]) -> Symmetry {
        Symmetry {
            positive: single_edge_restricted(q, plans, Sign::Positive),
            negative: single_edge_restricted(q, plans, Sign::Negative),
        }
    }
}

/// One seed: (plan index, x, y, weight).
type Seed = (u32, VertexId, VertexId, u64);

/// The changed edge, the representative seed rules and their plans of a
/// staged batch that changes exactly one edge, when symmetry rules exist for
/// its sign.
fn single_edge<'a>(
    sym: Option<&'a Symmetry>,
    delta: &'a BatchDelta,
) -> Option<(&'a Edge, &'a [SeedRule], &'a [DeltaPlan])> {
    let (e, (rules, plans)) = match (delta.inserted.as_slice(), delta.deleted.as_slice()) {
        ([e], []) => (e, sym?.positive.as_ref()?),
        ([], [e]) => (e, sym?.negative.as_ref()?),
        _ => return None,
    };
    Some((e, rules, plans))
}

/// The representative seeds of a one-edge batch, read through a view in
/// which versions do not matter (a [`CommonView`]).
fn single_edge_seeds<G: GraphView + ?Sized>(g: &G, plans: &[DeltaPlan], e: &Edge, rules: &[SeedRule]) -> Vec<Seed> {
    let mut out = Vec::with_capacity(rules.len());
    for r in rules {
        let p = &plans[r.plan];
        let (mut x, mut y) = if r.forward { (e.u, e.v) } else { (e.v, e.u) };
        // Either orientation counts the same: bind the lower-degree
        // endpoint second, so that the loops below it iterate short lists.
        if r.reversible && g.nbrs(y, Version::New).len() > g.nbrs(x, Version::New).len() {
            std::mem::swap(&mut x, &mut y);
        }
        if seed_fits(g, p, e, x, y) {
            out.push((r.plan as u32, x, y, r.weight));
        }
    }
    out
}

/// Batches of at most this many edge changes are first checked for any seed
/// at all ([`seeds_none`]).
const FEW_CHANGES: usize = 16;

/// Whether a small staged batch has no seed for any plan: no changed edge
/// carries the labels of a query edge (RapidFlow skips such updates the same
/// way). On a graph of 4 vertex and 3 edge labels most single updates are
/// such, and they skip the matching view, its label groups and the seeds.
fn seeds_none<G: GraphView + ?Sized>(g: &G, plans: &[DeltaPlan], delta: &BatchDelta) -> bool {
    if delta.changes() > FEW_CHANGES {
        return false;
    }
    plans.iter().all(|p| {
        let mut none = true;
        for_each_seed(g, p, delta, |_, _| none = false);
        none
    })
}

/// Every seed of a staged batch (weight 1).
fn batch_seeds<G: GraphView + ?Sized>(g: &G, plans: &[DeltaPlan], delta: &BatchDelta) -> Vec<Seed> {
    let mut out = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        for_each_seed(g, p, delta, |x, y| out.push((i as u32, x, y, 1)));
    }
    out
}

/// Exact positive/negative counts of a staged batch, in parallel.
/// `sym` enables the single-edge symmetry shortcut.
pub fn count_delta_parallel<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    sym: Option<&Symmetry>,
    delta: &BatchDelta,
) -> DeltaCounts {
    count_delta_with(g, plans, sym, delta, Run::CurrentPool, &mut Executor::new()).0
}

/// Threads from which a batch's counts of a query of
/// [`BATCH_SHARED_SUFFIX_VERTICES`] or more share one suffix-memo table
/// ([`SharedSuffixMemo::global`]) instead of each thread keeping its own.
/// Measured on Enron with 16 labels, the 10% stream in batches of 4,096,
/// eight 10- and 12-vertex walk queries (the device's 16-core host, best
/// of two, twenty-seventh session): sharing took 0.90× (4 threads), 0.91×
/// (8) and 0.89× (16) of the per-thread tables' time in geometric mean,
/// q12s3 2.0-2.4× quicker, the worst row 1.12× slower (q12s4 on 8
/// threads; one light q10 row 1.33× in a noisy pair); on this 2-core VM
/// it was 1.10-1.16× slower (q10s4, q12s2), as the first measurement of
/// batches of 512 and runs of single updates had found (3-8%).
pub const BATCH_SHARED_SUFFIX_THREADS: usize = 4;

/// Query vertices from which batches may share the suffix-memo table
/// ([`BATCH_SHARED_SUFFIX_THREADS`]). The standard 5-7-vertex queries'
/// light batches lost by sharing on 16 threads (same host and session,
/// batches of 4,096: Enron with 8 labels 1.28-1.6× slower, a 2 M-edge
/// R-MAT with 16 labels 0.93-1.17×): their milliseconds of matching do
/// not repay the shared table's lookups.
pub const BATCH_SHARED_SUFFIX_VERTICES: usize = 10;

fn count_seeds_parallel<G: GraphView + ?Sized>(g: &G, plans: &[DeltaPlan], seeds: &[Seed]) -> DeltaCounts {
    if rayon::current_num_threads() == 1 {
        return count_seeds_sequential(g, plans, seeds, &mut Executor::new());
    }
    // every seed reads `g`: one suffix-memo scope, and from
    // BATCH_SHARED_SUFFIX_THREADS threads on one table for all of them
    let share = rayon::current_num_threads() >= BATCH_SHARED_SUFFIX_THREADS
        && plans
            .first()
            .is_some_and(|p| p.plan.depth() >= BATCH_SHARED_SUFFIX_VERTICES)
        && plans
            .iter()
            .any(|p| p.plan.plans().iter().any(|part| part.suffix_memo != 0));
    let shared = Shared {
        scope: Some(MemoScope::new()),
        width: seeds.len(),
        suffix: share.then(SharedSuffixMemo::global),
        ..Shared::default()
    };
    seeds
        .par_iter()
        .map(|&(i, x, y, w)| {
            let p = &plans[i as usize];
            let mut c = DeltaCounts::default();
            c.add(p.sign, count::mul(w, count_split(g, &p.plan, &[x, y], shared)));
            c
        })
        .reduce(DeltaCounts::default, DeltaCounts::merge)
}

/// [`count_delta_parallel`] on the calling thread with a reused executor.
pub fn count_delta_sequential<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    sym: Option<&Symmetry>,
    delta: &BatchDelta,
    ex: &mut Executor,
) -> DeltaCounts {
    count_delta_with(g, plans, sym, delta, Run::Caller, ex).0
}

/// How long one unit of estimated work (`estimated_work`) takes on the
/// calling thread, learned from the batches that ran there: the estimate's
/// unit cost differs between plans (a diamond's bound overstates its
/// galloping intersections more than a house's), so one fixed bound either
/// sends a diamond's 50 µs updates to the pool or keeps a house's 1 ms ones
/// on one thread. A batch goes to the pool when its predicted time reaches
/// [`WorkRate::PAR_MIN_NS`].
#[derive(Clone, Copy, Debug)]
pub struct WorkRate {
    ns_per_unit: f64,
}

impl Default for WorkRate {
    /// Starts at the bound 2^16.
    fn default() -> Self {
        WorkRate {
            ns_per_unit: Self::PAR_MIN_NS / (1u64 << 16) as f64,
        }
    }
}

impl WorkRate {
    /// Predicted time from which a batch is worth the pool: waking sleeping
    /// rayon threads costs 25-300 µs on a VM (measured), and two threads
    /// save at most half the time.
    pub const PAR_MIN_NS: f64 = 250_000.0;

    /// The current bound, clamped to 2^14..2^22 list entries.
    pub fn min_work(&self) -> u64 {
        (Self::PAR_MIN_NS / self.ns_per_unit).clamp((1 << 14) as f64, (1 << 22) as f64) as u64
    }

    /// Records a batch of estimated work `work` that took `seconds` on the
    /// calling thread (estimates below 4096 are too coarse to learn from).
    /// A batch that stayed although it took longer than the bound was
    /// mispredicted and moves the rate half-way at once: with the slow
    /// average alone, a stream of five batches of 4,096 under-estimated 3-4x
    /// (4-clique, diamond) never reached the pool.
    pub fn observe(&mut self, work: u64, seconds: f64) {
        if work >= 4096 {
            let r = seconds * 1e9 / work as f64;
            let alpha = if seconds * 1e9 >= Self::PAR_MIN_NS { 0.5 } else { 0.05 };
            self.ns_per_unit = (1.0 - alpha) * self.ns_per_unit + alpha * r;
        }
    }
}

/// A rough number of list entries the seeds will touch, capped at `cap`: per
/// seed, the summed degrees of the candidates at the first free level (the
/// lists their subtrees scan), times 8 for each further level; for
/// three-vertex queries just the seed's two lists. An upper bound that needs
/// no intersection (the shortest list that level reads, times the maximum
/// degree) settles most small batches first; batches of more than
/// [`ESTIMATE_SAMPLE`] seeds are estimated from a sample of that many.
fn estimated_work<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    seeds: &[Seed],
    cap: u64,
    ex: &mut Executor,
) -> u64 {
    let deg = |v: VertexId| g.nbrs(v, Version::New).len() as u64;
    let mut bound = 0u64;
    for &(i, x, y, _) in seeds {
        let plan = &plans[i as usize].plan;
        let w = if plan.depth() > 3 {
            candidates_bound(g, plan, &[x, y]).saturating_mul(g.max_degree() as u64) << deeper_levels_shift(plan, 2)
        } else {
            deg(x) + deg(y)
        };
        bound = bound.saturating_add(w);
        if bound >= cap {
            break;
        }
    }
    if bound < cap {
        return bound;
    }
    // the first level's candidates of an evenly spaced sample of seeds,
    // scaled to all of them: on a batch of thousands of seeds, computing
    // every seed's candidates cost a quarter of the matching it predicts
    let step = seeds.len().div_ceil(ESTIMATE_SAMPLE).max(1);
    let mut cands = Vec::new();
    let mut total = 0u64;
    for &(i, x, y, _) in seeds.iter().step_by(step) {
        let plan = &plans[i as usize].plan;
        let w = if plan.depth() <= 3 {
            deg(x) + deg(y)
        } else {
            ex.candidates(g, plan, &[x, y], &mut cands);
            subtree_work(g, plan, &[x, y], &cands)
        };
        total = total.saturating_add(w.saturating_mul(step as u64));
        if total >= cap {
            break;
        }
    }
    total
}

/// Seeds whose first level [`estimated_work`] computes at most (an evenly
/// spaced sample of a larger batch).
const ESTIMATE_SAMPLE: usize = 64;

/// Exact counts of a staged batch: on the calling thread (with `ex`) when
/// `pool` is `None` or the batch's estimated work is below `min_work`, else
/// in parallel on the pool. Also returns the estimate when it was made and
/// the batch stayed on the calling thread (for [`WorkRate::observe`]).
pub fn count_delta_adaptive<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    sym: Option<&Symmetry>,
    delta: &BatchDelta,
    pool: Option<(&rayon::ThreadPool, u64)>,
    ex: &mut Executor,
) -> (DeltaCounts, Option<u64>) {
    let run = pool.map_or(Run::Caller, |(pool, min_work)| Run::Pool(pool, min_work));
    count_delta_with(g, plans, sym, delta, run, ex)
}

/// Where [`count_delta_with`] runs the seeds.
#[derive(Clone, Copy)]
enum Run<'p> {
    /// On the calling thread, with the caller's executor.
    Caller,
    /// In parallel on the pool the caller is already in.
    CurrentPool,
    /// On `pool` when the estimated work reaches the bound, else on the caller.
    Pool(&'p rayon::ThreadPool, u64),
}

/// The one driver behind the `count_delta_*` entry points: a one-edge batch
/// with symmetry rules runs its representative seeds on a [`CommonView`],
/// any other batch every seed on `g`.
fn count_delta_with<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    sym: Option<&Symmetry>,
    delta: &BatchDelta,
    run: Run<'_>,
    ex: &mut Executor,
) -> (DeltaCounts, Option<u64>) {
    fn go<G: GraphView + ?Sized>(
        g: &G,
        plans: &[DeltaPlan],
        seeds: &[Seed],
        run: Run<'_>,
        ex: &mut Executor,
    ) -> (DeltaCounts, Option<u64>) {
        match run {
            Run::CurrentPool => (count_seeds_parallel(g, plans, seeds), None),
            Run::Pool(pool, min_work) => {
                let work = estimated_work(g, plans, seeds, min_work, ex);
                if work >= min_work {
                    (pool.install(|| count_seeds_parallel(g, plans, seeds)), None)
                } else {
                    (count_seeds_sequential(g, plans, seeds, ex), Some(work))
                }
            }
            Run::Caller => (count_seeds_sequential(g, plans, seeds, ex), None),
        }
    }
    if let Some((e, rules, plans)) = single_edge(sym, delta) {
        let view = CommonView::new(g, e.u, e.v);
        let seeds = single_edge_seeds(&view, plans, e, rules);
        return go(&view, plans, &seeds, run, ex);
    }
    go(g, plans, &batch_seeds(g, plans, delta), run, ex)
}

fn count_seeds_sequential<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    seeds: &[Seed],
    ex: &mut Executor,
) -> DeltaCounts {
    let mut out = DeltaCounts::default();
    // every seed reads `g`: one suffix-memo scope
    let scope = MemoScope::new();
    for &(i, x, y, w) in seeds {
        let p = &plans[i as usize];
        let n = ex.count_within(scope, g, &p.plan, &[x, y], &mut NoVisitor);
        out.add(p.sign, count::mul(w, n));
    }
    out
}

/// Full matching of `plan` over `g`, in parallel over start vertices;
/// with a `quota`, the count stops once the quota is reached (see
/// [`csm_planner::quota`]: the result is then at least its limit).
pub fn count_static_parallel<G: GraphView + ?Sized>(g: &G, plan: &Plan, quota: Option<&Arc<Quota>>) -> u64 {
    // every start vertex reads `g`: one suffix-memo scope, and one table
    // for all threads (each would find the same completions again)
    let memo = rayon::current_num_threads() > 1 && plan.plans().iter().any(|p| p.suffix_memo != 0);
    let shared = Shared {
        memo: None,
        quota,
        scope: Some(MemoScope::new()),
        suffix: memo.then(SharedSuffixMemo::global),
        width: 0,
    };
    (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(64)
        .filter(|&v| starts_search(g, plan, v) && !quota.is_some_and(|q| q.stops()))
        .map(|v| count_split_in(g, plan, &[v], false, shared))
        .reduce(|| 0, count::add)
}

/// Whether data vertex `v` starts a search of the static `plan`: it has
/// the first level's label and a neighbour (a query has two or more
/// vertices: an isolated vertex starts nothing).
pub(crate) fn starts_search<G: GraphView + ?Sized>(g: &G, plan: &Plan, v: VertexId) -> bool {
    g.labels()[v as usize] == plan.levels[0].label && !g.nbrs(v, Version::New).is_empty()
}

/// Knuth probes behind the decision to group lists by label.
const GROUP_PROBES: usize = 64;

/// Estimated work (list entries merged) per list entry of the graph from
/// which a static count groups the lists by label first. Measured on a 2 M
/// edge R-MAT with 16 labels (2 threads): grouping took 40-80 ms; a 4-cycle
/// with distinct labels (57 units per entry) ran in 0.14 s instead of
/// 0.38 s, a diamond (26) in 0.10 s against 0.07 s.
const GROUP_WORK_PER_ENTRY: f64 = 40.0;

impl StaticMatcher for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        Ok(self.count_capped(g, q, None))
    }
    fn count_at_most(&self, g: &CsrGraph, q: &QueryGraph, limit: u64) -> Result<u64, EngineError> {
        Ok(self.count_capped(g, q, Some(limit)))
    }
}

impl CpuEngine {
    /// Delta plans of `q` on `dg`, their symmetry and the hubs to group;
    /// `added` names labels of vertices a batch is about to add.
    fn planned(&self, dg: &DynamicGraph, q: &QueryGraph, added: &[Label]) -> (Vec<DeltaPlan>, Symmetry, Option<Hubs>) {
        let stats = csm_planner::GraphStats::of(dg).with_vertex_labels(added);
        let plans = delta_plans_on(q, self.order.as_ref(), &stats, dg);
        let sym = if self.symmetry {
            Symmetry::of(q, &plans)
        } else {
            Symmetry::default()
        };
        // lists grouped by vertex label, or by both labels for queries with
        // edge labels
        let labelled = plans.first().is_some_and(|p| p.plan.check_labels) || q.edge_labelled();
        let rule = self.hub_rule;
        let hubs = (self.by_label && labelled && q.num_vertices() >= rule.min_query)
            .then(|| Hubs::of(dg, rule.min_degree).with_batch_min_degree(rule.batch_min_degree));
        (plans, sym, hubs)
    }

    /// Plans made on a graph of the query's one label skip label checks; a
    /// batch that adds a vertex of another label gets new plans first.
    fn replan_for_new_labels(&mut self, updates: &[LocatedUpdate]) {
        let Some((g, plans, _, _, q)) = self.state.as_ref() else {
            return;
        };
        let Some(first) = plans.first() else {
            return;
        };
        let added = labels_plans_skip(&first.plan, q, updates.iter().map(|u| &u.update));
        if added.is_empty() {
            return;
        }
        let (plans, sym, hubs) = self.planned(g, q, &added);
        let state = self.state.as_mut().expect("checked above");
        (state.1, state.2, state.3) = (plans, sym, hubs);
        self.reset_learning();
    }
}

impl ContinuousMatcher for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }
    fn init(&mut self, g: &GraphData, q: &QueryGraph) -> Result<(), EngineError> {
        // on the engine's threads (the store's builds are parallel)
        let (dg, mut apart) = self.pool.install(|| EdgesApart::graph_for(g, q, self.edge_filter))?;
        if let (Some(apart), Some(n)) = (apart.as_mut(), self.route_parallel_min) {
            apart.set_parallel_min(n);
        }
        self.apart = apart;
        let (plans, sym, hubs) = self.planned(&dg, q, &[]);
        self.state = Some((dg, plans, sym, hubs, q.clone()));
        self.rate = WorkRate::default();
        self.overlap = overlap::OverlapChoice::default();
        self.decompose.reset();
        Ok(())
    }
    fn process(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let phases = self
            .state
            .as_ref()
            .map(|st| relabel_phases_in(&st.0, self.apart.as_ref(), batch));
        if let Some(phases) = phases.transpose()?.flatten() {
            return process_phases(self, batch, phases);
        }
        if self.apart.is_some() {
            return self.process_split(batch);
        }
        self.process_graph(batch)
    }
    /// With several threads, runs of single-edge updates are matched
    /// concurrently on per-update snapshots (`overlap`).
    fn process_each_until(
        &mut self,
        batch: Batch<'_>,
        deadline: Option<Instant>,
        out: &mut Vec<BatchResult>,
    ) -> Result<(), EngineError> {
        if self.apart.is_some() {
            return self.process_each_split(batch, deadline, out);
        }
        self.process_each_overlapped(batch, deadline, out)
    }
}

impl CpuEngine {
    /// One batch on the registered graph (all of it, or the part that goes
    /// to the graph when edges are kept apart): as one Eq. (1) batch
    /// ([`CpuEngine::process_eq1`]) or as its net single-edge updates
    /// ([`decompose`]), whichever the engine measured quicker.
    fn process_graph(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        self.replan_for_new_labels(batch.updates);
        self.process_graph_choosing(batch, Self::process_eq1)
    }

    /// One batch on the registered graph through Eq. (1)'s delta plans.
    fn process_eq1(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let min_work = self.parallel_bound();
        let (g, plans, sym, hubs, _) = self
            .state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised("cpu".into()))?;
        let t0 = Instant::now();
        let wants_pool = g.wants_pool(batch.updates.len());
        // one thread or a small batch: stay on the caller's thread
        let pool = (self.threads > 1).then_some((self.pool.as_ref(), min_work));
        let sym: &Symmetry = sym;
        // A single edge change is applied at once, in place, with no
        // pending views, when no plan can seed it (one update at a time:
        // most updates of a labelled query) and when the symmetry rules
        // count it on G ∩ G' (a `CommonView`): that is the committed graph
        // before an insertion, which is counted here, and after a deletion,
        // which is counted once it is applied (below).
        // whether the batch was found to have seeds
        let mut seeded = false;
        let mut counted: Option<(DeltaCounts, Option<u64>, f64)> = None;
        let exec = &mut self.exec;
        let hubs_now = hubs.as_ref();
        let staging = graph_work(&self.pool, wants_pool, || {
            g.stage_or_apply(batch.updates, batch.source, batch.strictness, |g, delta| {
                seeded = !seeds_none(g, plans, delta);
                if !seeded {
                    return true;
                }
                if single_edge(Some(sym), delta).is_none() {
                    return false;
                }
                if !delta.inserted.is_empty() {
                    let t = Instant::now();
                    let (c, stayed) = count_single_edge(g, hubs_now, plans, sym, delta, pool, exec);
                    counted = Some((c, stayed, t.elapsed().as_secs_f64()));
                }
                true
            })
        })?;
        if let Staging::Applied(delta) = staging {
            if let Some(hubs) = hubs.as_mut() {
                let ends: Vec<VertexId> = delta
                    .inserted
                    .iter()
                    .chain(&delta.deleted)
                    .flat_map(|e| [e.u, e.v])
                    .collect();
                hubs.update(&*g, &ends, Some(&delta));
            }
            if seeded && counted.is_none() {
                // a deletion, now applied: the graph is G' = G ∩ G'
                let t = Instant::now();
                let (c, stayed) = count_single_edge(g, hubs.as_ref(), plans, sym, &delta, pool, &mut self.exec);
                counted = Some((c, stayed, t.elapsed().as_secs_f64()));
            }
            let (counts, seconds) = match counted {
                Some((c, stayed, secs)) => {
                    if let Some(work) = stayed {
                        self.rate.observe(work, secs);
                    }
                    (c, secs)
                }
                None => (DeltaCounts::default(), 0.0),
            };
            return Ok(BatchResult {
                positive: counts.positive,
                negative: counts.negative,
                seconds,
                update_seconds: (t0.elapsed().as_secs_f64() - seconds).max(0.0),
                skipped: delta.skipped,
                ..BatchResult::default()
            });
        }
        let t1 = Instant::now();
        let skipped = g.pending_delta().expect("staged").skipped;
        let staged = (t1 - t0).as_secs_f64();
        let delta = g.pending_delta().expect("staged");
        let gr: &DynamicGraph = g;
        let (counts, stayed, built) = if !seeded && seeds_none(gr, plans, delta) {
            (DeltaCounts::default(), None, NewGroups::default())
        } else {
            // hub lists read by label (none without hubs)
            let no_hubs = Hubs::default();
            let view = HubLabelGroups::new(gr, hubs.as_ref().unwrap_or(&no_hubs), gr.touched()).with_delta(Some(delta));
            let (counts, stayed) = count_delta_adaptive(&view, plans, Some(sym), delta, pool, &mut self.exec);
            (counts, stayed, view.into_new_groups())
        };
        let t2 = Instant::now();
        let seconds = (t2 - t1).as_secs_f64();
        if let Some(work) = stayed {
            self.rate.observe(work, seconds);
        }
        graph_work(&self.pool, wants_pool, || commit_with_hubs(g, hubs, built));
        Ok(BatchResult {
            positive: counts.positive,
            negative: counts.negative,
            seconds,
            update_seconds: staged + t2.elapsed().as_secs_f64(),
            skipped,
            extra: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    //! The split-across-threads path (entered mid-plan with a prefix, so
    //! reused, hoisted and pinned buffers must be rebuilt) against plain
    //! sequential execution, which the oracle tests validate on small graphs.
    use super::*;
    use csm_graph::gen::{graph_from_pairs, make_stream, rmat, standard_query, StreamAmount};
    use csm_graph::CsrByLabel;
    use csm_graph::Strictness;
    use csm_planner::{static_plan_on, CostOrder, GcsmOrder, GraphStats};

    /// A batch that stayed on the caller but took 1 ms (4x the bound) moves
    /// the bound below its work at once, so the next such batch goes to the
    /// pool; quick batches keep the slow average.
    #[test]
    fn a_slow_batch_that_stayed_lowers_the_bound_at_once() {
        let mut rate = WorkRate::default();
        let work = rate.min_work() / 2;
        rate.observe(work, 1e-3);
        assert!(rate.min_work() < work, "bound {} not below {work}", rate.min_work());
        let mut quick = WorkRate::default();
        let before = quick.min_work();
        quick.observe(work, 2e-4);
        assert!(quick.min_work() < before && quick.min_work() > work);
    }

    fn graph() -> GraphData {
        let pairs = rmat(10, 4_000, 0.57, 0.19, 0.19, 7);
        let labels = vec![0; 1 << 10];
        graph_from_pairs(1 << 10, &pairs, labels, None)
    }

    /// The engine's static count on `threads` threads against one executor
    /// run start vertex by start vertex; returns the plan it used.
    fn check_static_count(
        csr: &CsrGraph,
        q: &QueryGraph,
        order: &Arc<dyn OrderStrategy>,
        threads: usize,
        name: &str,
    ) -> Plan {
        let plan = static_plan_on(q, order.as_ref(), &GraphStats::of(csr), Version::New, csr);
        let mut ex = Executor::new();
        let seq: u64 = (0..csr.num_vertices() as u32)
            .map(|v| ex.count(csr, &plan, &[v], &mut NoVisitor))
            .sum();
        let par = CpuEngine::new(threads, order.clone()).unwrap();
        assert_eq!(StaticMatcher::count(&par, csr, q).unwrap(), seq, "{name} static");
        plan
    }

    #[test]
    fn split_execution_equals_sequential() {
        let g = graph();
        let csr = CsrGraph::from_data(&g).unwrap();
        for name in ["triangle", "4-cycle", "diamond", "4-clique", "house"] {
            let q = QueryGraph::from_data(&standard_query(name).unwrap()).unwrap();
            for order in [Arc::new(GcsmOrder) as Arc<dyn OrderStrategy>, Arc::new(CostOrder)] {
                check_static_count(&csr, &q, &order, 3, name);
                let (g0, stream) = make_stream(&g, StreamAmount::Count(400), 0.5, 3);
                let mut one = CpuEngine::new(1, order.clone()).unwrap().without_symmetry();
                let mut three = CpuEngine::new(3, order.clone()).unwrap().min_parallel_work(0);
                one.init(&g0, &q).unwrap();
                three.init(&g0, &q).unwrap();
                for chunk in stream.chunks(97).chain(stream[..0].chunks(1)) {
                    let b = Batch {
                        updates: chunk,
                        source: "s",
                        strictness: Strictness::Strict,
                    };
                    let (a, c) = (one.process(b).unwrap(), three.process(b).unwrap());
                    assert_eq!((a.positive, a.negative), (c.positive, c.negative), "{name} batch");
                }
            }
        }
    }

    /// With every node heavy, memo plans split early and their parts share
    /// one memo (static counts and overlapped one-at-a-time runs).
    #[test]
    fn early_splits_with_shared_memos_equal_sequential() {
        HEAVY_WORK.store(1, Ordering::Relaxed);
        // small: every node splits
        let pairs = rmat(8, 900, 0.57, 0.19, 0.19, 7);
        let g = graph_from_pairs(1 << 8, &pairs, vec![0; 1 << 8], None);
        let csr = CsrGraph::from_data(&g).unwrap();
        let mut memo_plans = 0;
        for name in ["4-cycle", "diamond", "house", "5-cycle", "7-wheel"] {
            let q = QueryGraph::from_data(&standard_query(name).unwrap()).unwrap();
            let order: Arc<dyn OrderStrategy> = Arc::new(GcsmOrder);
            let plan = check_static_count(&csr, &q, &order, 4, name);
            memo_plans += usize::from(plan.memo_from.is_some());
            let (g0, stream) = make_stream(&g, StreamAmount::Count(100), 0.5, 3);
            let mut one = CpuEngine::new(1, order.clone()).unwrap();
            let mut four = CpuEngine::new(4, order).unwrap();
            one.init(&g0, &q).unwrap();
            four.init(&g0, &q).unwrap();
            let b = Batch {
                updates: &stream,
                source: "s",
                strictness: Strictness::Strict,
            };
            let (mut a, mut c) = (Vec::new(), Vec::new());
            one.process_each(b, &mut a).unwrap();
            four.process_each(b, &mut c).unwrap();
            let counts = |rs: &[BatchResult]| rs.iter().map(|r| (r.positive, r.negative)).collect::<Vec<_>>();
            assert_eq!(counts(&a), counts(&c), "{name} one at a time");
        }
        assert!(memo_plans > 0, "no memo plan: nothing shared");
        HEAVY_WORK.store(1 << 22, Ordering::Relaxed);
    }

    /// A hub-heavy R-MAT on 2^`scale` vertices with `edges` edges, 3
    /// uniform vertex labels (and `edge_labels` as `graph_from_pairs` takes
    /// them).
    fn labelled_rmat(scale: u32, edges: usize, seed: u64, edge_labels: Option<(u32, u64)>) -> GraphData {
        let n = 1 << scale;
        let pairs = rmat(scale, edges, 0.57, 0.19, 0.19, seed);
        let labels = csm_graph::gen::assign_labels(n, &csm_graph::gen::Labeller::Uniform { num_labels: 3, seed });
        graph_from_pairs(n, &pairs, labels, edge_labels)
    }

    /// Standard query `name` with vertex `labels`, and with edge labels 0,
    /// 1, 0, ... when `edge_labelled`.
    fn labelled_query(name: &str, labels: &[u32], edge_labelled: bool) -> QueryGraph {
        let mut qd = standard_query(name).unwrap();
        qd.labels = labels.to_vec();
        if edge_labelled {
            qd.edge_labelled = true;
            for (i, e) in qd.edges.iter_mut().enumerate() {
                e.label = i as u32 % 2;
            }
        }
        QueryGraph::from_data(&qd).unwrap()
    }

    /// Label groups of hub lists (read by many threads, and through split
    /// nodes whose parts pin grouped lists) give the counts of plain lists
    /// on one thread: batches and one update at a time.
    #[test]
    fn label_groups_on_many_threads_equal_plain_lists() {
        HEAVY_WORK.store(1, Ordering::Relaxed);
        let rule = HubRule {
            min_degree: 6,
            batch_min_degree: 6,
            min_query: 4,
        };
        let labelled = [
            ("house", [0, 1, 2, 0, 1].as_slice()),
            ("5-cycle", &[0, 1, 0, 1, 2]),
            ("diamond", &[0, 1, 0, 2]),
            ("4-cycle", &[0, 1, 0, 1]),
        ];
        // vertex labels only, then two edge labels too (query edges 0, 1, 0, ...)
        for edge_labels in [None, Some((2, 9))] {
            let g = labelled_rmat(9, 3_000, 11, edge_labels);
            for (name, qlabels) in labelled {
                let q = labelled_query(name, qlabels, edge_labels.is_some());
                let order: Arc<dyn OrderStrategy> = Arc::new(GcsmOrder);
                let (g0, stream) = make_stream(&g, StreamAmount::Count(300), 0.5, 4);
                let mut plain = CpuEngine::new(1, order.clone()).unwrap().without_label_groups();
                let mut one = CpuEngine::new(1, order.clone()).unwrap().hub_rule(rule);
                let mut four = CpuEngine::new(4, order).unwrap().hub_rule(rule).min_parallel_work(0);
                for e in [&mut plain, &mut one, &mut four] {
                    e.init(&g0, &q).unwrap();
                }
                let counts = |rs: &[BatchResult]| rs.iter().map(|r| (r.positive, r.negative)).collect::<Vec<_>>();
                // one at a time (overlapped runs on 4 threads), then batches
                let b = |u| Batch {
                    updates: u,
                    source: "s",
                    strictness: Strictness::Strict,
                };
                let (half, rest) = stream.split_at(stream.len() / 2);
                let mut r = [Vec::new(), Vec::new(), Vec::new()];
                for (e, out) in [&mut plain, &mut one, &mut four].into_iter().zip(&mut r) {
                    e.process_each(b(half), out).unwrap();
                    let (batches, singles) = rest.split_at(rest.len() / 2);
                    for chunk in batches.chunks(31) {
                        out.push(e.process(b(chunk)).unwrap());
                    }
                    // single updates through `process`, not overlapped
                    for u in singles.chunks(1) {
                        out.push(e.process(b(u)).unwrap());
                    }
                }
                assert_eq!(counts(&r[0]), counts(&r[1]), "{name}: groups on one thread");
                assert_eq!(counts(&r[0]), counts(&r[2]), "{name}: groups on four threads");
                assert!(
                    r[0].iter().any(|x| x.positive + x.negative > 0),
                    "{name}: nothing changed"
                );
            }
        }
        HEAVY_WORK.store(1 << 22, Ordering::Relaxed);
    }

    /// Static counts over lists grouped by label (`CsrByLabel`) on 4
    /// threads, every node split, equal one executor over plain lists.
    #[test]
    fn grouped_static_counts_on_many_threads_equal_plain_lists() {
        HEAVY_WORK.store(1, Ordering::Relaxed);
        // small enough for VF2's time budget
        let csr = CsrGraph::from_data(&labelled_rmat(8, 1_000, 13, None)).unwrap();
        let grouped = CsrByLabel::new(&csr);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        for (name, qlabels) in [
            ("house", [0, 1, 2, 0, 1].as_slice()),
            ("5-cycle", &[0, 1, 0, 1, 2]),
            ("diamond", &[0, 1, 0, 2]),
            ("4-clique", &[0, 1, 2, 0]),
        ] {
            let q = labelled_query(name, qlabels, false);
            let plan = static_plan_on(&q, &GcsmOrder, &GraphStats::of(&csr), Version::New, &csr);
            let vf2 = StaticMatcher::count(&crate::oracle::Vf2, &csr, &q).unwrap();
            assert!(vf2 > 0, "{name}: nothing to count");
            assert_eq!(
                pool.install(|| count_static_parallel(&grouped, &plan, None)),
                vf2,
                "{name}"
            );
        }
        HEAVY_WORK.store(1 << 22, Ordering::Relaxed);
    }

    #[test]
    fn single_edge_symmetry_equals_plain_seeds() {
        let g = graph();
        let (g0, stream) = make_stream(&g, StreamAmount::Count(150), 0.5, 5);
        for name in ["triangle", "4-cycle", "diamond", "house", "5-cycle"] {
            let q = QueryGraph::from_data(&standard_query(name).unwrap()).unwrap();
            let mut sym = CpuEngine::new(1, Arc::new(GcsmOrder)).unwrap();
            let mut sym3 = CpuEngine::new(3, Arc::new(GcsmOrder)).unwrap().min_parallel_work(0);
            let mut plain = CpuEngine::new(1, Arc::new(GcsmOrder)).unwrap().without_symmetry();
            sym.init(&g0, &q).unwrap();
            sym3.init(&g0, &q).unwrap();
            plain.init(&g0, &q).unwrap();
            for u in &stream {
                let b = Batch {
                    updates: std::slice::from_ref(u),
                    source: "s",
                    strictness: Strictness::Strict,
                };
                let (a, c) = (sym.process(b).unwrap(), plain.process(b).unwrap());
                assert_eq!((a.positive, a.negative), (c.positive, c.negative), "{name}");
                let t = sym3.process(b).unwrap();
                assert_eq!((t.positive, t.negative), (c.positive, c.negative), "{name}, 3 threads");
            }
        }
    }
}
