//! [`GpuEngine`]: continuous (and static) subgraph matching on the GPU, in
//! the five variants GCSM Sec. VI compares.
//!
//! | variant | lists live in | device cache per batch |
//! |---|---|---|
//! | [`Variant::Zp`] | pinned host memory (zero-copy) | none |
//! | [`Variant::Um`] | managed memory | none |
//! | [`Variant::Vsgm`] | pinned host memory | every list within k hops of the batch (must fit) |
//! | [`Variant::Naive`] | pinned host memory | highest-degree lists within the budget |
//! | [`Variant::Gcsm`] | pinned host memory | highest estimated access frequency within the budget |
//! | [`Variant::GcsmPersist`] | pinned host memory | resident (match v7): the longest lists, filled once; a batch patches only the cached lists it changed, the commit's merge is queued after the commit (match v9), and a batch whose refresh would outweigh its kernel runs on ZP's path (match v9); the refresh runs beside the host mirror's sync (thirty-eighth session) |
//!
//! Per batch ([`ContinuousMatcher::process`]): stage the batch on the host
//! graph (and mirror the touched lists, Sec. V-A steps 1-3), estimate the
//! frequent vertices ("fe"), pack and copy their lists ("dc", Sec. V-B), run
//! the kernel (Sec. V-C), then commit (step 4) and mirror again.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use csm_engine::{
    process_phases, relabel_phases_in, Batch, BatchResult, ContinuousMatcher, EdgesApart, EngineError, StaticMatcher,
};
use csm_graph::{CsrGraph, DynamicGraph, GraphData, GraphView, Version, VertexId};
use csm_planner::{labels_plans_skip, static_plan, GraphStats, OrderStrategy, QueryGraph, Sign};
use serde_json::{json, Map, Value};

use crate::cache::{
    top_degree, within_budget, CacheSelector, DegreeSelector, DeviceCache, KHopSelector, KernelCache, Observed,
    SelectCtx, WalkSelector,
};
use crate::device::Gpu;
use crate::error::{GpuError, GpuResult};
use crate::host_graph::{HostGraph, HostMemory};
use crate::hot::HotLists;
use crate::matcher::{DeviceMatcher, KernelStats, MatcherConfig, Seeds};
use crate::overlap::{beside, Overlap};
use crate::plan::{encode_plan, QueryPlans, Seed, Shape, SplitPolicy, Task, TaskOptions};
use crate::resident::{ResidentCache, ResidentLoad, ResidentUse, Slack, UseSample};
use crate::route::{LightRoute, Route};
use crate::shares::{encode_shares, LabelShares};
use csm_baselines::cpu::{count_delta_parallel, Symmetry};

/// The GPU variants of GCSM Sec. VI-A (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Zero-copy only.
    Zp,
    /// Unified (managed) memory.
    Um,
    /// k-hop cache; `k = None` takes the query's read distance.
    Vsgm { k: Option<u32> },
    /// Degree-based cache.
    Naive,
    /// Sampling-based cache (GCSM).
    Gcsm,
    /// Resident cache (match v7, [`crate::resident`]): filled once with the
    /// longest lists within the budget when the graph is loaded; each batch
    /// re-copies only the cached lists it (or the previous batch) changed.
    /// No per-batch estimate.
    GcsmPersist,
}

impl Variant {
    /// Every variant, in the paper's order (VSGM with the query's k).
    pub const ALL: [Variant; 5] = [
        Variant::Um,
        Variant::Zp,
        Variant::Vsgm { k: None },
        Variant::Naive,
        Variant::Gcsm,
    ];

    /// Short name: `zp`, `um`, `vsgm`, `naive`, `gcsm`, `gcsm-persist`.
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Zp => "zp",
            Variant::Um => "um",
            Variant::Vsgm { .. } => "vsgm",
            Variant::Naive => "naive",
            Variant::Gcsm => "gcsm",
            Variant::GcsmPersist => "gcsm-persist",
        }
    }

    /// Parses `zp`, `um`, `vsgm`, `vsgm:K`, `naive`, `gcsm`, `gcsm-persist`.
    pub fn parse(s: &str) -> Option<Variant> {
        let s = s.trim().to_ascii_lowercase();
        Some(match s.as_str() {
            "zp" | "zero-copy" => Variant::Zp,
            "um" | "unified" => Variant::Um,
            "vsgm" => Variant::Vsgm { k: None },
            "naive" | "degree" => Variant::Naive,
            "gcsm" => Variant::Gcsm,
            "gcsm-persist" | "persist" | "resident" => Variant::GcsmPersist,
            _ => {
                let k = s.strip_prefix("vsgm:")?.parse().ok()?;
                Variant::Vsgm { k: Some(k) }
            }
        })
    }

    /// Where the variant keeps the graph's lists.
    pub fn memory(&self) -> HostMemory {
        match self {
            Variant::Um => HostMemory::Managed,
            _ => HostMemory::Pinned,
        }
    }

    /// The variant's cache policy (None: no cache).
    pub fn selector(&self) -> Option<Box<dyn CacheSelector>> {
        match *self {
            Variant::Zp | Variant::Um | Variant::GcsmPersist => None,
            Variant::Vsgm { k } => Some(Box::new(KHopSelector { k })),
            Variant::Naive => Some(Box::new(DegreeSelector::default())),
            Variant::Gcsm => Some(Box::new(WalkSelector::default())),
        }
    }
}

/// Size of the device cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// A fixed number of bytes.
    Bytes(usize),
    /// A fraction of the graph's list bytes (GCSM caches a small fraction;
    /// the default is 5%).
    Fraction(f64),
}

impl Default for Budget {
    fn default() -> Self {
        Budget::Fraction(0.05)
    }
}

impl Budget {
    /// Bytes for a graph whose lists take `graph_bytes`.
    pub fn resolve(&self, graph_bytes: usize) -> usize {
        match *self {
            Budget::Bytes(b) => b,
            Budget::Fraction(f) => (graph_bytes as f64 * f.max(0.0)) as usize,
        }
    }
}

/// The figures of one staged batch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StagedRun {
    pub positive: u64,
    pub negative: u64,
    /// Choosing the cached vertices (frequency estimation for GCSM).
    pub fe_seconds: f64,
    /// Packing the DCSR and copying it to the device.
    pub dc_seconds: f64,
    /// The kernel (GPU events).
    pub kernel_seconds: f64,
    /// Cutting the seeds into kernel tasks on the host.
    pub split_seconds: f64,
    /// Finding the batch's seeds on the host ([`QueryPlans::seeds`]).
    pub seeds_seconds: f64,
    /// Seeds (execution-tree roots) of the batch.
    pub roots: usize,
    /// Kernel tasks.
    pub tasks: usize,
    /// Wall time of the whole matching step (seeds, fe, dc, uploads, kernel).
    pub seconds: f64,
    pub cache_vertices: usize,
    pub cache_bytes: usize,
    pub kernel: KernelStats,
}

impl StagedRun {
    /// Charges a cache load made for this run (`seconds` of it, `bytes`
    /// and `vertices` loaded) as its DC time, on top of its wall time.
    pub fn charge_cache_load(&mut self, seconds: f64, bytes: usize, vertices: usize) {
        self.dc_seconds = seconds;
        self.seconds += seconds;
        self.cache_bytes = bytes;
        self.cache_vertices = vertices;
    }

    /// Records a cache load that ran beside this run's host work (match
    /// v20): `waited`, the part the run waited for, is already in its wall
    /// time and becomes its DC time.
    pub fn note_cache_load(&mut self, waited: f64, bytes: usize, vertices: usize) {
        self.dc_seconds = waited;
        self.cache_bytes = bytes;
        self.cache_vertices = vertices;
    }

    /// Adds a second cache load (match v12's hot lists) to the one charged
    /// (its lists are not counted in `cache_vertices`, the resident set's).
    pub fn add_cache_load(&mut self, seconds: f64, bytes: usize) {
        self.dc_seconds += seconds;
        self.seconds += seconds;
        self.cache_bytes += bytes;
    }
}

/// Runs one staged batch: seeds, cache selection and load, kernel. `g` must
/// have the batch staged and `host` must mirror it; `policy` (match v9)
/// picks the batch's host expansion from the query's earlier batches.
#[allow(clippy::too_many_arguments)]
pub fn run_staged(
    matcher: &mut DeviceMatcher,
    cache: &mut DeviceCache,
    selector: Option<&mut dyn CacheSelector>,
    g: &DynamicGraph,
    host: &HostGraph,
    plans: &QueryPlans,
    budget: usize,
    policy: Option<&mut SplitPolicy>,
) -> GpuResult<StagedRun> {
    let t0 = Instant::now();
    let empty = csm_graph::BatchDelta::default();
    let delta = g.pending_delta().unwrap_or(&empty);
    let (seeds, seeds_seconds) = timed_seeds(g, plans, delta);
    let mut run = StagedRun::default();
    let mut selector = selector;
    match selector.as_deref_mut() {
        Some(sel) if !seeds.is_empty() => {
            let t = Instant::now();
            let ranked = sel.select(&SelectCtx {
                graph: g,
                query: plans,
                delta,
                seeds: &seeds,
                budget,
            })?;
            let chosen = within_budget(g, &ranked, budget);
            run.fe_seconds = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let load = cache.load(matcher.gpu(), g, &chosen)?;
            run.dc_seconds = t.elapsed().as_secs_f64();
            run.cache_vertices = load.vertices;
            run.cache_bytes = load.bytes;
        }
        _ => cache.clear(),
    }
    let cache_ref = (!cache.is_empty()).then_some(&*cache as &dyn KernelCache);
    let prep = cut(
        g,
        plans,
        &seeds,
        seeds_seconds,
        matcher.task_options(),
        policy.as_deref(),
    );
    launch_into(matcher, cache_ref, host, plans, &prep, policy, &mut run)?;
    if let Some(sel) = selector {
        sel.observe(&Observed {
            seeds: seeds.len(),
            fe_seconds: run.fe_seconds,
            dc_seconds: run.dc_seconds,
            kernel_seconds: run.kernel_seconds,
            cache_bytes: run.cache_bytes,
        });
    }
    run.seconds = t0.elapsed().as_secs_f64();
    Ok(run)
}

/// Runs one staged batch over a cache that is already in place (the
/// resident cache, or none): seeds, task split, kernel. No estimate and no
/// copy (`fe_seconds` and `dc_seconds` are 0; the caller adds its refresh).
pub fn run_cached(
    matcher: &mut DeviceMatcher,
    cache: Option<&dyn KernelCache>,
    g: &DynamicGraph,
    host: &HostGraph,
    plans: &QueryPlans,
    policy: Option<&mut SplitPolicy>,
) -> GpuResult<StagedRun> {
    let t0 = Instant::now();
    let prep = prepare(g, plans, matcher.task_options(), policy.as_deref());
    launch(matcher, cache, host, plans, prep, policy, t0)
}

/// A staged batch's seeds cut into kernel tasks: the host work before its
/// kernel ([`prepare`]), which [`crate::overlap::beside`] can run beside a
/// resident refresh (match v20).
#[derive(Clone, Debug, Default)]
pub struct Prepared {
    seeds: usize,
    tasks: Vec<Task>,
    seeds_seconds: f64,
    split_seconds: f64,
}

/// The seeds of the batch staged in `g` (execution-tree roots) cut into
/// kernel tasks with `base` options, or those `policy` picks for the
/// batch (match v9).
pub fn prepare(g: &DynamicGraph, plans: &QueryPlans, base: TaskOptions, policy: Option<&SplitPolicy>) -> Prepared {
    let empty = csm_graph::BatchDelta::default();
    let delta = g.pending_delta().unwrap_or(&empty);
    let (seeds, seeds_seconds) = timed_seeds(g, plans, delta);
    cut(g, plans, &seeds, seeds_seconds, base, policy)
}

/// The seeds of `delta` staged in `g`, and the seconds finding them took.
fn timed_seeds(g: &DynamicGraph, plans: &QueryPlans, delta: &csm_graph::BatchDelta) -> (Vec<Seed>, f64) {
    let t = Instant::now();
    let seeds = plans.seeds(g, delta);
    (seeds, t.elapsed().as_secs_f64())
}

/// Cuts `seeds` (found in `seeds_seconds`) into kernel tasks (see
/// [`prepare`]).
fn cut(
    g: &DynamicGraph,
    plans: &QueryPlans,
    seeds: &[Seed],
    seeds_seconds: f64,
    base: TaskOptions,
    policy: Option<&SplitPolicy>,
) -> Prepared {
    let t = Instant::now();
    let opts = policy.map_or(base, |p| p.options(base, seeds.len()));
    let tasks = plans.tasks(g, seeds, &opts);
    Prepared {
        seeds: seeds.len(),
        tasks,
        seeds_seconds,
        split_seconds: t.elapsed().as_secs_f64(),
    }
}

/// Runs the kernel over `cache` on a prepared batch and fills a run's
/// split, task, kernel and count fields; `seconds` is the wall time since
/// `t0`. `policy` learns the kernel's time. A kernel that hit its time
/// limit is an error.
pub fn launch(
    matcher: &mut DeviceMatcher,
    cache: Option<&dyn KernelCache>,
    host: &HostGraph,
    plans: &QueryPlans,
    prep: Prepared,
    policy: Option<&mut SplitPolicy>,
    t0: Instant,
) -> GpuResult<StagedRun> {
    let mut run = StagedRun::default();
    launch_into(matcher, cache, host, plans, &prep, policy, &mut run)?;
    run.seconds = t0.elapsed().as_secs_f64();
    Ok(run)
}

/// [`launch`] into a run that already holds other figures ([`run_staged`]'s
/// estimate and copy).
fn launch_into(
    matcher: &mut DeviceMatcher,
    cache: Option<&dyn KernelCache>,
    host: &HostGraph,
    plans: &QueryPlans,
    prep: &Prepared,
    policy: Option<&mut SplitPolicy>,
    run: &mut StagedRun,
) -> GpuResult<()> {
    run.split_seconds = prep.split_seconds;
    run.seeds_seconds = prep.seeds_seconds;
    let k = matcher.run(host, cache, &plans.encoded, Seeds::Explicit(&prep.tasks))?;
    if let Some(p) = policy {
        p.observe(prep.seeds, k.kernel_seconds);
    }
    if k.aborted {
        return Err(GpuError::TimedOut(format!(
            "the matching kernel hit its time limit of {:?} ({} tasks)",
            matcher.config().time_limit.unwrap_or_default(),
            prep.tasks.len()
        )));
    }
    run.tasks = prep.tasks.len();
    run.roots = prep.seeds;
    run.positive = k.positive;
    run.negative = k.negative;
    run.kernel_seconds = k.kernel_seconds;
    run.kernel = k;
    Ok(())
}

/// A staged batch counted on the CPU over the same graph and plans as the
/// kernel ([`GpuEngine::with_light_on_cpu`]), on the caller's rayon pool.
fn cpu_run(st: &mut State, symmetry: bool) -> StagedRun {
    let t0 = Instant::now();
    let empty = csm_graph::BatchDelta::default();
    let delta = st.graph.pending_delta().unwrap_or(&empty);
    let sym = if symmetry {
        Some(
            &*st.cpu_symmetry
                .get_or_insert_with(|| Symmetry::of(&st.plans.query, &st.plans.plans)),
        )
    } else {
        None
    };
    let c = count_delta_parallel(&st.graph, &st.plans.plans, sym, delta);
    StagedRun {
        positive: c.positive,
        negative: c.negative,
        seconds: t0.elapsed().as_secs_f64(),
        ..StagedRun::default()
    }
}

/// What a resident refresh (load) or mask (load and the hidden vertices)
/// run on the helper thread did.
type SideLoad = (ResidentLoad, Option<Vec<VertexId>>);

/// The resident cache's refresh for the staged batch `changed` describes
/// (`refresh`), or its mask (match v10), for a helper thread.
fn refresh_or_mask(
    c: &mut ResidentCache,
    gpu: &Gpu,
    graph: &DynamicGraph,
    changed: &[VertexId],
    marks: Option<&[(VertexId, u32)]>,
    refresh: bool,
) -> GpuResult<SideLoad> {
    if refresh {
        c.refresh(gpu, graph, changed, marks).map(|l| (l, None))
    } else {
        c.mask(gpu, graph, changed).map(|(l, h)| (l, Some(h)))
    }
}

/// Vertices whose mirror a staged batch changes: touched lists plus added
/// and removed vertices.
pub fn changed_vertices(g: &DynamicGraph) -> Vec<VertexId> {
    let mut v = g.touched().to_vec();
    if let Some(d) = g.pending_delta() {
        v.extend(d.added_vertices.iter().map(|&(x, _)| x));
        v.extend_from_slice(&d.removed_vertices);
    }
    v.sort_unstable();
    v.dedup();
    v
}

struct State {
    graph: DynamicGraph,
    host: HostGraph,
    plans: QueryPlans,
    /// The graph's label shares at `init`, written into every plan (the
    /// kernel's deferral, match v11).
    shares: LabelShares,
    budget: usize,
    /// The query's automorphism rules for the CPU counts of light batches
    /// ([`GpuEngine::with_light_on_cpu`]; made at the first one, dropped
    /// when the plans change).
    cpu_symmetry: Option<Symmetry>,
}

struct Inner {
    matcher: DeviceMatcher,
    cache: DeviceCache,
    selector: Option<Box<dyn CacheSelector>>,
    /// The resident cache of [`Variant::GcsmPersist`] (built by `init`).
    resident: Option<ResidentCache>,
    /// Seconds the resident cache's fill took (reported with the first batch).
    resident_fill: Option<(f64, usize)>,
    /// The query's host-expansion policy for small batches (match v9).
    split: SplitPolicy,
    /// Whether a batch matches over the resident cache (match v9).
    resident_use: ResidentUse,
    /// The batch's hot lists of [`Variant::GcsmPersist`] (match v12; built
    /// by `init` unless the hot share is 0).
    hot: Option<HotLists>,
    /// Light batches counted on the CPU (None: every batch on the GPU).
    light: Option<LightRoute>,
    state: Option<State>,
}

/// A GPU matcher of one [`Variant`] (see the module docs).
pub struct GpuEngine {
    name: String,
    variant: Variant,
    budget: Budget,
    order: Arc<dyn OrderStrategy>,
    symmetry: bool,
    /// [`crate::resident::ResidentLayout::serial_below`] and
    /// [`ResidentCache::tracked_launches`] for the resident cache
    /// (`GcsmPersist`), set by [`GpuEngine::with_resident_refresh`].
    resident_refresh: (usize, bool),
    /// Queue the resident lists' device-side commit right after the host's
    /// commit (match v9, the default) instead of merging them in the next
    /// batch's refresh (v8); set by [`GpuEngine::with_resident_commit`].
    resident_commit: bool,
    /// Match v10: a `GcsmPersist` batch that does not refresh the resident
    /// cache before its kernel still matches over it, with the lists the
    /// batch changes hidden ([`ResidentCache::mask`]; the default), instead
    /// of on ZP's path (v9); set by [`GpuEngine::with_resident_bypass`].
    resident_bypass: bool,
    /// Share of the budget for the batch's hot lists (match v12).
    hot_frac: f64,
    /// Batches of at least this many updates run their resident refresh
    /// or mask beside their seeds and task split (match v20,
    /// [`crate::overlap`]); set by [`GpuEngine::with_overlap_from`].
    overlap_from: usize,
    /// Whether a `GcsmPersist` batch runs its resident refresh (or mask)
    /// beside the host mirror's sync (the default) instead of in turn or
    /// beside its seeds and split; set by
    /// [`GpuEngine::with_refresh_beside_sync`].
    refresh_beside_sync: bool,
    /// The resident cache's fill and slack ([`ResidentCache::build_with`]);
    /// set by [`GpuEngine::with_resident_layout`].
    resident_layout: (f64, Slack),
    /// Whether continuous matching keeps the edges the query cannot use
    /// out of the host graph ([`EdgesApart`], as the CPU engine does;
    /// default true), and those edges when it does.
    edge_filter: bool,
    apart: Option<EdgesApart>,
    gpu: Arc<Gpu>,
    inner: Mutex<Inner>,
}

fn gpu_err(e: GpuError) -> EngineError {
    EngineError::Other(format!("gpu: {e}"))
}

impl GpuEngine {
    /// Opens device 0 and compiles the kernel. Without a usable GPU this
    /// returns [`GpuError::NoDriver`] / [`GpuError::NoDevice`] (or
    /// [`GpuError::NoNvrtc`]), never panics.
    pub fn new(variant: Variant, budget: Budget, order: Arc<dyn OrderStrategy>) -> GpuResult<GpuEngine> {
        Self::with_config(variant, budget, order, MatcherConfig::default())
    }

    /// [`GpuEngine::new`] with explicit kernel launch settings.
    pub fn with_config(
        variant: Variant,
        budget: Budget,
        order: Arc<dyn OrderStrategy>,
        config: MatcherConfig,
    ) -> GpuResult<GpuEngine> {
        let gpu = Arc::new(Gpu::open(0)?);
        let matcher = DeviceMatcher::new(gpu.clone(), config)?;
        Ok(GpuEngine {
            name: format!("gpu-{}", variant.name()),
            variant,
            budget,
            order,
            symmetry: true,
            resident_refresh: (crate::resident::SERIAL_BELOW, false),
            resident_commit: true,
            resident_bypass: true,
            hot_frac: 0.0,
            overlap_from: crate::overlap::OVERLAP_FROM,
            refresh_beside_sync: true,
            resident_layout: (ResidentCache::FILL, Slack::default()),
            edge_filter: true,
            apart: None,
            gpu,
            inner: Mutex::new(Inner {
                matcher,
                cache: DeviceCache::new(),
                selector: variant.selector(),
                resident: None,
                resident_fill: None,
                split: SplitPolicy::default(),
                resident_use: ResidentUse::new(ResidentUse::FRAC),
                hot: None,
                light: None,
                state: None,
            }),
        })
    }

    /// Replaces the variant's cache policy (e.g. csm-sampler's for GCSM).
    pub fn with_selector(self, selector: Box<dyn CacheSelector>) -> Self {
        self.lock().selector = Some(selector);
        self
    }

    /// How the resident cache (`GcsmPersist`) refreshes: bookkeeping on the
    /// calling thread below `serial_below` refreshed slots (0: always on
    /// rayon's pool, `usize::MAX`: never), and whether its launches hand
    /// the slices to cudarc's event tracking (match v7) instead of raw
    /// addresses (match v8's default). Takes effect at the next `init`.
    pub fn with_resident_refresh(mut self, serial_below: usize, tracked_launches: bool) -> Self {
        self.resident_refresh = (serial_below, tracked_launches);
        self
    }

    /// Whether the resident cache (`GcsmPersist`) merges the committed
    /// lists on the device right after each batch's commit (match v9,
    /// `true`, the default) or in the next batch's refresh (match v8).
    pub fn with_resident_commit(mut self, at_commit: bool) -> Self {
        self.resident_commit = at_commit;
        self
    }

    /// The share of the cache budget that `GcsmPersist` gives the batch's
    /// hot lists (match v12, [`crate::hot`]; default 0: none, the whole
    /// budget to the resident set; the bench's `gcsm-persist-hot` takes
    /// [`crate::hot::HOT_FRAC`]). Takes effect at the next `init`.
    pub fn with_hot_frac(mut self, frac: f64) -> Self {
        self.hot_frac = frac.clamp(0.0, 1.0);
        self
    }

    /// The resident cache's (`GcsmPersist`) share of the budget for its
    /// slots and the slack each gets (default [`ResidentCache::FILL`] and
    /// [`Slack::default`]). A cache whose growing lists had to be evicted
    /// is built again after a commit ([`ResidentCache::renew`]; the batch
    /// reports `resident_renew_seconds`).
    pub fn with_resident_layout(mut self, fill: f64, slack: Slack) -> Self {
        self.resident_layout = (fill, slack);
        self
    }

    /// From how many updates a `GcsmPersist` batch runs its resident
    /// refresh or mask on a second thread beside its seeds and task split
    /// (match v20; default [`crate::overlap::OVERLAP_FROM`];
    /// `usize::MAX`: never, as before v20).
    pub fn with_overlap_from(mut self, updates: usize) -> Self {
        self.overlap_from = updates;
        self
    }

    /// Whether a `GcsmPersist` batch runs its resident refresh (or mask)
    /// on a second thread beside the host mirror's sync (`true`, the
    /// default): both read the staged graph and write their own copies, so
    /// the refresh's bookkeeping, pack and enqueue (0.03-0.3 ms on the
    /// H200's host) hide behind the sync (0.1-2.5 ms), and the batch is
    /// charged only what it waited for after the sync (its `dc_seconds`).
    /// `false`: in turn before the sync, or beside the seeds and split from
    /// [`GpuEngine::with_overlap_from`] updates (match v20).
    pub fn with_refresh_beside_sync(mut self, on: bool) -> Self {
        self.refresh_beside_sync = on;
        self
    }

    /// Whether a `GcsmPersist` batch that refreshes the resident cache only
    /// after its kernel ([`GpuEngine::with_resident_use`]) matches over the
    /// cache with the lists it changes hidden (match v10, `true`, the
    /// default) or without the cache, on ZP's path (match v9).
    pub fn with_resident_bypass(mut self, on: bool) -> Self {
        self.resident_bypass = on;
        self
    }

    /// Continuous matching keeps every edge in the host graph instead of
    /// keeping the edges whose label triple no query edge has apart (for
    /// comparisons; see [`csm_engine::apart`]).
    pub fn without_edge_filter(mut self) -> Self {
        self.edge_filter = false;
        self
    }

    /// Edges kept apart from the host graph (0 when none are).
    pub fn edges_apart(&self) -> usize {
        self.apart.as_ref().map_or(0, |a| a.len())
    }

    /// The kernel time below which a small batch's seeds are not expanded
    /// on the host ([`SplitPolicy::light_below`], match v9; 0: always
    /// expand as the task options say). Takes effect at the next `init`.
    pub fn with_light_split(self, light_below_seconds: f64) -> Self {
        self.lock().split = SplitPolicy::new(light_below_seconds);
        self
    }

    /// When a batch of the resident cache (`GcsmPersist`) matches over it
    /// ([`ResidentUse::frac`], match v9): only when its predicted refresh is
    /// at most `frac` of its predicted kernel time (0: always; negative:
    /// every other batch, for tests). Takes effect at the next `init`.
    pub fn with_resident_use(self, frac: f64) -> Self {
        self.lock().resident_use = ResidentUse::new(frac);
        self
    }

    /// Counts light batches on the CPU, over the same staged graph
    /// ([`crate::route`]): a batch goes there when its size class's GPU
    /// matching is predicted under `light_below` seconds and the CPU's lower
    /// (learnt per class; `LightRoute::LIGHT_BELOW` is 1 ms). `None` (the
    /// default) runs every batch on the GPU, as the variants are compared.
    /// Takes effect at the next `init`.
    pub fn with_light_on_cpu(self, light_below: Option<f64>) -> Self {
        self.with_light_route(light_below.map(LightRoute::new))
    }

    /// [`GpuEngine::with_light_on_cpu`] with a router of any settings
    /// (e.g. a shorter [`LightRoute::reprobe`]).
    pub fn with_light_route(self, route: Option<LightRoute>) -> Self {
        self.lock().light = route;
        self
    }

    /// Turns the single-edge symmetry shortcut off.
    pub fn without_symmetry(mut self) -> Self {
        self.symmetry = false;
        self
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The device.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `q` on an already built graph (skips the edge-list build).
    pub fn init_graph(&mut self, graph: DynamicGraph, q: &QueryGraph) -> Result<(), EngineError> {
        let stats = GraphStats::of(&graph);
        let mut plans =
            QueryPlans::new(q, self.order.as_ref(), &stats, self.symmetry).map_err(|e| EngineError::Unsupported {
                engine: self.name.clone(),
                reason: e.to_string(),
            })?;
        let shares = LabelShares::of(&graph);
        plans.set_label_shares(&shares);
        let host = HostGraph::build(self.gpu.clone(), &graph, self.variant.memory(), true).map_err(gpu_err)?;
        let budget = self.budget.resolve(host.graph_bytes());
        let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
        inner.resident = None;
        inner.resident_fill = None;
        inner.hot = None;
        inner.split = SplitPolicy::new(inner.split.light_below);
        inner.resident_use = ResidentUse::new(inner.resident_use.frac);
        if let Some(l) = inner.light.as_mut() {
            l.forget();
        }
        if self.variant == Variant::GcsmPersist {
            // Filled once, with the graph (like the host graph's own copy):
            // its time is reported as `resident_fill_seconds` of the first
            // batch, not in a batch's matching time.
            let ranked = top_degree(&graph, 1 << 20);
            let (hot_bytes, resident_bytes) = crate::hot::split_budget(budget, self.hot_frac);
            inner.hot = if hot_bytes > 0 {
                Some(HotLists::new(self.gpu.clone(), hot_bytes).map_err(gpu_err)?)
            } else {
                None
            };
            let (fill, slack) = self.resident_layout;
            let (mut c, load) =
                ResidentCache::build_with(&self.gpu, &graph, &ranked, resident_bytes, fill, slack).map_err(gpu_err)?;
            c.set_serial_below(self.resident_refresh.0);
            c.tracked_launches = self.resident_refresh.1;
            inner.resident_fill = Some((load.seconds, load.bytes));
            inner.resident = Some(c);
        }
        inner.state = Some(State {
            graph,
            host,
            plans,
            shares,
            budget,
            cpu_symmetry: None,
        });
        Ok(())
    }

    /// The registered graph (after `init`).
    pub fn with_graph<R>(&self, f: impl FnOnce(Option<&DynamicGraph>) -> R) -> R {
        let inner = self.lock();
        f(inner.state.as_ref().map(|s| &s.graph))
    }
}

impl ContinuousMatcher for GpuEngine {
    fn name(&self) -> &str {
        &self.name
    }

    fn init(&mut self, g: &GraphData, q: &QueryGraph) -> Result<(), EngineError> {
        let (dg, apart) = EdgesApart::graph_for(g, q, self.edge_filter)?;
        self.apart = apart;
        self.init_graph(dg, q)
    }

    /// With edges kept apart, the host graph's part of the batch is matched
    /// and the rest goes to the set.
    fn process(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let phases = {
            let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
            let state = inner.state.as_ref();
            state.map(|st| relabel_phases_in(&st.graph, self.apart.as_ref(), batch))
        };
        if let Some(phases) = phases.transpose()?.flatten() {
            return process_phases(self, batch, phases);
        }
        let Some(apart) = self.apart.as_ref() else {
            return self.process_graph(batch);
        };
        // large batches look their edges up on rayon's pool
        let on_pool = apart.wants_pool(batch.updates.len());
        let routed = {
            let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
            let st = inner
                .state
                .as_ref()
                .ok_or_else(|| EngineError::NotInitialised(self.name.clone()))?;
            on_global_pool(on_pool, || apart.route(&st.graph, batch))?
        };
        if routed.all_graph() {
            return self.process_graph(batch);
        }
        let result = routed.process_graph_part(batch, |b| self.process_graph(b))?;
        Ok(routed.finish(self.apart.as_mut().expect("checked above"), result))
    }
}

/// Runs `f` on rayon's global pool when `yes` and the pool has 2 or more
/// threads (where the routing of a large batch runs in parallel:
/// [`EdgesApart::wants_pool`]), else on the caller's thread.
fn on_global_pool<R: Send>(yes: bool, f: impl FnOnce() -> R + Send) -> R {
    if yes && rayon::current_num_threads() > 1 {
        rayon::scope(|_| f())
    } else {
        f()
    }
}

impl GpuEngine {
    /// One batch on the host graph (all of it, or its part when edges are
    /// kept apart).
    fn process_graph(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let name = self.name.clone();
        let variant = self.variant;
        let symmetry = self.symmetry;
        let commit_on_device = self.resident_commit;
        let bypass_on = self.resident_bypass;
        let overlap_from = self.overlap_from;
        let beside_sync_on = self.refresh_beside_sync;
        let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
        let Inner {
            matcher,
            cache,
            selector,
            resident,
            resident_fill,
            split,
            resident_use,
            hot,
            light,
            state,
        } = inner;
        let st = state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised(name.clone()))?;
        // plans made on a graph of the query's one label skip label checks:
        // a batch adding a vertex of another label gets new plans first
        let added = labels_plans_skip(
            &st.plans.plans[0].plan,
            &st.plans.query,
            batch.updates.iter().map(|u| &u.update),
        );
        if !added.is_empty() {
            let stats = GraphStats::of(&st.graph).with_vertex_labels(&added);
            let q = st.plans.query.clone();
            st.plans = QueryPlans::new(&q, self.order.as_ref(), &stats, self.symmetry).map_err(|e| {
                EngineError::Unsupported {
                    engine: name.clone(),
                    reason: e.to_string(),
                }
            })?;
            st.plans.set_label_shares(&st.shares);
            st.cpu_symmetry = None;
        }
        let persist = variant == Variant::GcsmPersist;
        let updates = batch.updates.len();
        // Opt-in: a light batch is counted on the CPU (crate::route); the
        // resident cache then refreshes after it, as after a kernel that
        // did not use it.
        let route = light.as_ref().map_or(Route::Gpu, |l| l.choose(updates));
        let on_cpu = route == Route::Cpu;
        let t0 = Instant::now();
        // a refresh beside the sync follows the staging: the helper thread
        // is woken now, so that a small batch does not wait for it
        if persist && !on_cpu && beside_sync_on && resident.is_some() && hot.is_none() {
            crate::overlap::wake_helper(crate::overlap::WAKE_AT_MOST);
        }
        let skipped = st.graph.stage(batch.updates, batch.source, batch.strictness)?.skipped;
        let changed = changed_vertices(&st.graph);
        // Bring the resident lists in step with the staged batch (the lists
        // this batch and the last one changed) right after staging, while
        // those lists are still in the host's caches (match v8; v7 did it
        // after the host mirror's sync). Queued on the stream, before the
        // kernel.
        let t = Instant::now();
        // Match v9: a batch predicted light runs on ZP's path and its
        // refresh waits until after the kernel (ResidentUse).
        let use_resident = persist && !on_cpu && resident_use.use_cache(updates);
        // Thirty-eighth session: the refresh (or the mask) runs on a second
        // thread beside the host mirror's sync, which it does not depend on
        // (not with the opt-in hot area, which needs the mask before its
        // staging). Match v20 (with that off): from `overlap_from` updates
        // it runs after the sync, beside the seeds and task split.
        let sideable = persist && !on_cpu && hot.is_none() && resident.is_some() && (use_resident || bypass_on);
        let by_sync = sideable && beside_sync_on;
        let threaded = sideable && !by_sync && updates >= overlap_from;
        let refreshed = (use_resident && !threaded && !by_sync).then(|| match resident.as_mut() {
            Some(c) => {
                let marks = st.graph.is_pending().then(|| st.graph.pending_marks());
                c.refresh(matcher.gpu(), &st.graph, &changed, marks)
            }
            None => Ok(ResidentLoad::default()),
        });
        let host = t.elapsed().as_secs_f64();
        if let Some(Err(_)) = &refreshed {
            // A half-applied refresh leaves the device copy unknown.
            *resident = None;
        }
        let t_sync = Instant::now();
        let marks = st.graph.is_pending().then(|| st.graph.pending_marks());
        // Match v10: a batch that refreshes after its kernel matches over
        // the cache with the lists it changes hidden (read zero-copy); the
        // mask precedes the kernel and is charged to it. A failed one drops
        // the cache (counts stay exact on ZP's path).
        let mut hidden: Option<(ResidentLoad, Vec<VertexId>)> = None;
        let mut overlap_sync: Option<Overlap> = None;
        // The refresh or mask beside the sync: its batch is charged the
        // wait after the sync, plus its device time beyond the time it
        // finished before the sync did (`Overlap::charge_with_device`).
        let mut refreshed = refreshed;
        let synced = if by_sync {
            let c = resident.as_mut().expect("a side refresh has a resident cache");
            let gpu = matcher.gpu().clone();
            let (graph, host) = (&st.graph, &mut st.host);
            let changed = &changed;
            let (synced, side, ov) = beside(
                || host.sync_staged(graph, changed, marks),
                || refresh_or_mask(c, &gpu, graph, changed, marks, use_resident),
            );
            overlap_sync = Some(ov);
            match side {
                Ok((load, None)) => refreshed = Some(Ok(load)),
                Ok((load, Some(h))) => hidden = Some((load, h)),
                Err(e) if use_resident => {
                    // A half-applied refresh leaves the device copy unknown.
                    *resident = None;
                    refreshed = Some(Err(e));
                }
                // A failed mask drops the cache: ZP's path, counts exact.
                Err(_) => *resident = None,
            }
            synced
        } else {
            st.host.sync_staged(&st.graph, &changed, marks)
        };
        let by_sync_wait = overlap_sync.map_or(0.0, |ov| ov.wait_seconds);
        if let Err(e) = synced {
            st.graph.abort();
            let _ = st.host.sync(&st.graph, &changed);
            if let Some(c) = resident.as_mut() {
                // The device may hold the aborted batch's staged lists.
                c.invalidate(&changed);
                if let Some((_, h)) = &hidden {
                    // a mask made beside the sync: the invalidated lists
                    // copied whole, the hidden ones shown again
                    if c.refresh_unmasking(matcher.gpu(), &st.graph, &[], None, h).is_err() {
                        *resident = None;
                    }
                }
            }
            return Err(gpu_err(e));
        }
        let sync1 = t_sync.elapsed().as_secs_f64() - by_sync_wait;
        let staged = t0.elapsed().as_secs_f64() - host - by_sync_wait;
        // (the mask of match v10 in turn)
        if persist && !use_resident && bypass_on && !on_cpu && !threaded && !by_sync {
            if let Some(c) = resident.as_mut() {
                match c.mask(matcher.gpu(), &st.graph, &changed) {
                    Ok(m) => hidden = Some(m),
                    Err(_) => *resident = None,
                }
            }
        }
        // Match v12: the changed lists the resident set does not serve
        // (hidden, evicted or never cached) go to the hot area before the
        // kernel; charged to the batch like the refresh.
        let mut hot_load = None;
        let mut hot_err = None;
        if let (true, Some(h)) = (persist && !on_cpu, hot.as_mut()) {
            let over_cache = resident.is_some() && (hidden.is_some() || matches!(refreshed, Some(Ok(_))));
            let hidden_v: &[VertexId] = hidden.as_ref().map_or(&[], |(_, h)| &h[..]);
            let c = resident.as_ref();
            let served = |v: VertexId| over_cache && c.is_some_and(|c| c.layout().serves(v, hidden_v));
            // a failed copy skips the kernel and aborts the batch below
            match h.stage(&mut st.host, &changed, served) {
                Ok(l) => hot_load = Some(l),
                Err(e) => hot_err = Some(e),
            }
        }
        let sel: Option<&mut dyn CacheSelector> = match selector {
            Some(s) => Some(s.as_mut()),
            None => None,
        };
        // Match v20: what the threaded refresh or mask did, and the host
        // time of the seeds and split it ran beside.
        let mut overlap: Option<Overlap> = None;
        let result = if on_cpu {
            Ok(cpu_run(st, symmetry))
        } else if threaded {
            let gpu = matcher.gpu().clone();
            let base = matcher.task_options();
            let c = resident.as_mut().expect("threaded batches have a resident cache");
            let (graph, plans) = (&st.graph, &st.plans);
            let policy = &*split;
            let marks = graph.is_pending().then(|| graph.pending_marks());
            let t0 = Instant::now();
            let (prep, side, ov) = beside(
                || prepare(graph, plans, base, Some(policy)),
                || refresh_or_mask(c, &gpu, graph, &changed, marks, use_resident),
            );
            overlap = Some(ov);
            match side {
                Ok((load, h)) => {
                    let r = launch(matcher, Some(&*c), &st.host, &st.plans, prep, Some(&mut *split), t0);
                    // (counted after the launch: a pass over the slots, not
                    // part of the batch's time)
                    let live = c.layout().live().saturating_sub(h.as_ref().map_or(0, Vec::len));
                    if let Some(h) = h {
                        hidden = Some((load, h));
                    }
                    r.map(|mut r| {
                        // the wait is already in the run's wall time
                        r.note_cache_load(ov.wait_seconds, load.bytes, live);
                        r
                    })
                }
                Err(e) if use_resident => {
                    // A half-applied refresh leaves the device copy unknown.
                    *resident = None;
                    Err(e)
                }
                Err(_) => {
                    // A failed mask drops the cache: ZP's path, counts exact.
                    *resident = None;
                    launch(matcher, None, &st.host, &st.plans, prep, Some(&mut *split), t0)
                }
            }
        } else if let Some(e) = hot_err {
            Err(e)
        } else if persist && !use_resident {
            match (&hidden, resident.as_ref()) {
                (Some((load, h)), Some(c)) => {
                    run_cached(matcher, Some(c), &st.graph, &st.host, &st.plans, Some(&mut *split)).and_then(|mut r| {
                        let dev = c.device_seconds()?;
                        let dc =
                            overlap_sync.map_or_else(|| load.charged_seconds(dev), |ov| ov.charge_with_device(dev));
                        r.charge_cache_load(dc, load.bytes, c.layout().live().saturating_sub(h.len()));
                        Ok(r)
                    })
                }
                _ => run_cached(matcher, None, &st.graph, &st.host, &st.plans, Some(&mut *split)),
            }
        } else if let Some(refreshed) = refreshed {
            match refreshed {
                Ok(load) => {
                    let kc = resident.as_ref().map(|c| c as &dyn KernelCache);
                    // The refresh was queued without a synchronisation; its
                    // device time (known once the kernel has run) is
                    // charged with its host time, the enqueue counted once.
                    run_cached(matcher, kc, &st.graph, &st.host, &st.plans, Some(&mut *split)).and_then(|mut r| {
                        let dev = resident.as_ref().map_or(Ok(0.0), |c| c.device_seconds())?;
                        let dc = overlap_sync.map_or_else(
                            || host - load.enqueue_seconds + load.enqueue_seconds.max(dev),
                            |ov| ov.charge_with_device(dev),
                        );
                        let live = resident.as_ref().map_or(0, |c| c.layout().live());
                        r.charge_cache_load(dc, load.bytes, live);
                        Ok(r)
                    })
                }
                Err(e) => Err(e),
            }
        } else {
            run_staged(
                matcher,
                cache,
                sel,
                &st.graph,
                &st.host,
                &st.plans,
                st.budget,
                Some(&mut *split),
            )
        };
        // the hot lists' table entries point at the host again
        let restored = hot.as_mut().map_or(Ok(()), |h| h.restore(&mut st.host));
        let result = result.and_then(|mut r| {
            restored?;
            if let Some(l) = hot_load {
                r.add_cache_load(l.seconds, l.bytes);
            }
            Ok(r)
        });
        let run = match result {
            Ok(r) => r,
            Err(e) => {
                st.graph.abort();
                let _ = st.host.sync(&st.graph, &changed);
                if let Some(c) = resident.as_mut() {
                    c.invalidate(&changed);
                    if let Some((_, h)) = &hidden {
                        // copies the invalidated lists whole and shows the
                        // hidden ones again
                        if c.refresh_unmasking(matcher.gpu(), &st.graph, &[], None, h).is_err() {
                            *resident = None;
                        }
                    }
                }
                return Err(gpu_err(e));
            }
        };
        // The refresh of a batch that ran on ZP's path, after its kernel
        // (its cost goes to the update, like the commit's merge). A failed
        // one drops the resident cache: the counts are already exact.
        let t_late = Instant::now();
        let mut late_refresh = None;
        if persist && !use_resident {
            if let Some(c) = resident.as_mut() {
                let marks = st.graph.is_pending().then(|| st.graph.pending_marks());
                let h = hidden.as_ref().map_or(&[][..], |(_, h)| &h[..]);
                match c
                    .refresh_unmasking(matcher.gpu(), &st.graph, &changed, marks, h)
                    .and_then(|l| Ok(l.charged_seconds(c.device_seconds()?)))
                {
                    Ok(secs) => late_refresh = Some(secs),
                    Err(_) => *resident = None,
                }
            }
        }
        let late_s = t_late.elapsed().as_secs_f64();
        if persist && !on_cpu {
            // Threaded (match v20), a batch pays only the part of a refresh
            // its seeds and split do not cover: a late refresh (after the
            // kernel, not overlapped) counts for what it would have added.
            // (beside the sync: what outlasts the sync)
            let refresh_seconds = match (late_refresh, overlap.or(overlap_sync)) {
                (Some(l), Some(ov)) => (l - ov.main_seconds).max(0.0),
                (Some(l), None) => l,
                (None, _) => run.dc_seconds,
            };
            resident_use.observe(UseSample {
                updates,
                refresh_seconds,
                mask_seconds: if use_resident { 0.0 } else { run.dc_seconds },
                kernel_seconds: run.kernel_seconds,
                nodes: run.kernel.nodes,
                used: use_resident,
            });
        }
        if let Some(l) = light.as_mut() {
            l.observe(updates, route, run.seconds);
        }
        let t2 = Instant::now();
        st.graph.commit();
        // The resident lists' device-side commit (match v9): queued now,
        // it runs while the host mirrors the commit, and the next batch's
        // refresh patches only that batch's lists. Part of the update, like
        // the mirror's sync.
        let mut commit_load = None;
        if variant == Variant::GcsmPersist && commit_on_device {
            if let Some(c) = resident.as_mut() {
                match c.commit(matcher.gpu(), &st.graph) {
                    Ok(l) => commit_load = Some(l),
                    Err(e) => {
                        // A half-queued commit leaves the device copy unknown.
                        *resident = None;
                        return Err(gpu_err(e));
                    }
                }
            }
        }
        let t_sync = Instant::now();
        st.host.sync(&st.graph, &changed).map_err(gpu_err)?;
        let sync2 = t_sync.elapsed().as_secs_f64();
        // Match v16: a resident cache whose growing lists were evicted is
        // ranked and filled again, from the committed graph (part of the
        // update, like the commit). The batch is committed and its counts
        // exact, so a failed renewal (the old cache is freed first) is
        // reported beside them, and later batches match zero-copy.
        let mut renew_load = None;
        let mut renew_error = None;
        if let Some(old) = resident.take_if(|c| c.worn_out()) {
            match old.renew(&self.gpu, &st.graph) {
                Ok((c, l)) => {
                    *resident = Some(c);
                    renew_load = Some(l);
                }
                Err(e) => renew_error = Some(e.to_string()),
            }
        }
        let mut extra: Map<String, Value> = Map::new();
        extra.insert("variant".into(), json!(variant.name()));
        if light.is_some() {
            extra.insert("on_cpu".into(), json!(on_cpu));
        }
        extra.insert("fe_seconds".into(), json!(run.fe_seconds));
        extra.insert("dc_seconds".into(), json!(run.dc_seconds));
        extra.insert("kernel_seconds".into(), json!(run.kernel_seconds));
        extra.insert("host_bytes".into(), json!(run.kernel.host_bytes));
        extra.insert("host_bytes_kind".into(), json!("counted"));
        extra.insert("cache_vertices".into(), json!(run.cache_vertices));
        extra.insert("cache_bytes".into(), json!(run.cache_bytes));
        extra.insert("sync_seconds".into(), json!(sync1 + sync2));
        extra.insert("seeds".into(), json!(run.roots));
        extra.insert("nodes".into(), json!(run.kernel.nodes));
        extra.insert("memo_hits".into(), json!(run.kernel.memo_hits));
        extra.insert("memo_misses".into(), json!(run.kernel.memo_misses));
        extra.insert("tasks".into(), json!(run.tasks));
        extra.insert("split_seconds".into(), json!(run.split_seconds));
        extra.insert("seeds_seconds".into(), json!(run.seeds_seconds));
        extra.insert("deferred".into(), json!(run.kernel.deferred));
        extra.insert("launches".into(), json!(run.kernel.launches));
        if let Some(l) = commit_load {
            extra.insert("resident_commit_seconds".into(), json!(l.seconds));
        }
        if persist {
            extra.insert("resident_used".into(), json!(use_resident));
            extra.insert("resident_masked".into(), json!(hidden.is_some()));
            let hl = hot_load.unwrap_or_default();
            extra.insert("hot_lists".into(), json!(hl.lists));
            extra.insert("hot_bytes".into(), json!(hl.bytes));
            extra.insert("hot_seconds".into(), json!(hl.seconds));
        }
        if let Some(l) = renew_load {
            extra.insert("resident_renew_seconds".into(), json!(l.seconds));
        }
        if let Some(e) = renew_error {
            extra.insert("resident_renew_error".into(), json!(e));
        }
        if let Some(secs) = late_refresh {
            extra.insert("resident_late_refresh_seconds".into(), json!(secs));
        }
        if let Some(ov) = overlap {
            extra.insert("overlap_side_seconds".into(), json!(ov.side_seconds));
            extra.insert("overlap_wait_seconds".into(), json!(ov.wait_seconds));
            extra.insert("overlap_prepare_seconds".into(), json!(ov.main_seconds));
        }
        if let Some(ov) = overlap_sync {
            extra.insert("beside_sync_side_seconds".into(), json!(ov.side_seconds));
            extra.insert("beside_sync_wait_seconds".into(), json!(ov.wait_seconds));
        }
        if let Some((secs, bytes)) = resident_fill.take() {
            extra.insert("resident_fill_seconds".into(), json!(secs));
            extra.insert("resident_fill_bytes".into(), json!(bytes));
        }
        Ok(BatchResult {
            positive: run.positive,
            negative: run.negative,
            seconds: run.seconds,
            update_seconds: staged + late_s + t2.elapsed().as_secs_f64(),
            skipped,
            extra,
        })
    }
}

impl StaticMatcher for GpuEngine {
    fn name(&self) -> &str {
        &self.name
    }

    /// Full matching: the CSR snapshot is uploaded to device memory when it
    /// fits in half the free memory (zero-copy for ZP, managed for UM, and
    /// pinned when it does not fit), and one warp starts per vertex.
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        let stats = GraphStats::of(g);
        let plan = static_plan(q, self.order.as_ref(), &stats, Version::New);
        let unsupported = |reason: String| EngineError::Unsupported {
            engine: self.name.clone(),
            reason,
        };
        let shape = Shape::for_plans([&plan])
            .ok_or_else(|| unsupported(format!("query of {} vertices: {}", q.num_vertices(), Shape::limits())))?;
        let mut words = Vec::new();
        encode_plan(&plan, shape, 1, Sign::Positive, &mut words).map_err(|e| unsupported(e.to_string()))?;
        encode_shares(&plan, &LabelShares::of(g), &mut words);
        let memory = match self.variant {
            Variant::Zp => HostMemory::Pinned,
            Variant::Um => HostMemory::Managed,
            _ => {
                let bytes = g.memory_bytes() * 2;
                let free = self.gpu.mem_info().map_err(gpu_err)?.free;
                if bytes < free / 2 {
                    HostMemory::Device
                } else {
                    HostMemory::Pinned
                }
            }
        };
        let host = HostGraph::build(self.gpu.clone(), g, memory, false).map_err(gpu_err)?;
        let mut inner = self.lock();
        let k = inner
            .matcher
            .run(&host, None, &words, Seeds::AllVertices(g.num_vertices() as u64))
            .map_err(gpu_err)?;
        Ok(k.positive)
    }
}
