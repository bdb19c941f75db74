//! Launching the matching kernel (`kernels/match.cu`).
//!
//! A [`DeviceMatcher`] owns the per-warp scratch (candidate buffers and the
//! staging area for short host lists), the counters, the upload buffers
//! for plans and tasks and the two deferral buffers; [`DeviceMatcher::run`]
//! counts the embeddings of a set of encoded plans from a set of tasks over
//! a [`HostGraph`] and an optional device cache ([`crate::cache::DeviceCache`]
//! or [`crate::resident::ResidentCache`]): one launch, then (match
//! v5) one more launch per round of heavy nodes the previous one deferred
//! (see [`MatcherConfig::defer_min`]). Since match v17 it also owns the
//! last-level memo ([`MatcherConfig::memo_slots`]), a device hash table
//! whose entries each run marks with an epoch of its own.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{result, CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};

use crate::cache::KernelCache;
use crate::device::{Gpu, PinnedBuffer};
use crate::error::{GpuError, GpuResult};
use crate::host_graph::HostGraph;
use crate::nvrtc::{kernel_with, MATCH_CU};
use crate::plan::{write_task_words, Shape, Task, TaskOptions, MAX_PREFIX, TASK_WORDS};

/// Output words (u64) of the kernel.
pub const OUT_WORDS: usize = 12;
/// Tasks the task buffers (pinned staging and device) hold at first: 3 MiB
/// each, the tasks of a few thousand seeds.
pub const TASK_BUFFER_MIN: usize = 1 << 16;

/// Output slots of the last-level memo's hits and misses (match v17).
const OUT_MEMO_HITS: usize = 8;
const OUT_MEMO_MISSES: usize = 9;
/// Output slot of the tasks one launch deferred, and of its task counter
/// (`Params::counter` points here): next to each other, so that one
/// memset resets both before each launch after the first (match v21).
const OUT_DEFERRED: usize = 10;
const OUT_COUNTER: usize = 11;
/// Words per last-level memo slot (`MEMO_WORDS` of the kernel).
const MEMO_WORDS: usize = 8;

/// Kernel parameters (`struct Params` of the source); every field 64-bit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MatchParams {
    pub plans: u64,
    pub nplans: u64,
    pub seeds: u64,
    pub nseeds: u64,
    pub implicit_seeds: u64,
    pub vtab: u64,
    pub nvert: u64,
    pub vlabels: u64,
    pub host_counts: u64,
    pub rowidx: u64,
    pub rowptr: u64,
    pub colidx: u64,
    pub collab: u64,
    pub ncached: u64,
    /// Per-vertex cache slot map (slot + 1, 0 = not cached); 0 = none (the
    /// kernel binary-searches `rowidx`).
    pub slots: u64,
    pub nslots: u64,
    pub cand: u64,
    pub chunk: u64,
    pub stage: u64,
    pub stage_words: u64,
    pub counter: u64,
    pub out: u64,
    pub time_limit_ns: u64,
    /// Host lists whose old part has at least this many entries are tested
    /// through windows (0: never; 1: every host list, whatever it saves).
    pub window_min: u64,
    /// Largest window (words of the staging area).
    pub window_max: u64,
    /// Buffer for deferred heavy nodes (match v5); 0: no deferral.
    pub defer: u64,
    pub defer_cap: u64,
    pub defer_min: u64,
    pub defer_slice: u64,
    /// Candidates a deferred node's list should give (match v11; 0: every
    /// level uses `defer_min`).
    pub defer_wanted: u64,
    /// Match v13: a lane's membership searches run in lockstep (0: one
    /// after another, as up to match v12).
    pub lockstep: u64,
    /// Match v14: once every task of a launch has been taken, defer from
    /// this many candidates (0: off).
    pub defer_drained: u64,
    /// Match v17: the last-level memo table ([`MatcherConfig::memo_slots`]
    /// slots of 8 words); 0: no memo.
    pub memo: u64,
    /// Slots − 1 (a power of two).
    pub memo_mask: u64,
    /// The run's epoch: slots written in other runs read as empty.
    pub memo_epoch: u64,
    /// See [`MatcherConfig::memo_min`].
    pub memo_min: u64,
    /// See [`MatcherConfig::memo_defer`].
    pub memo_defer: u64,
    /// See [`MatcherConfig::memo_labelled`].
    pub memo_labelled: u64,
}

// SAFETY: plain old data matching the kernel's by-value parameter struct.
unsafe impl DeviceRepr for MatchParams {}

/// Tuning knobs of the kernel launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatcherConfig {
    /// Candidates per level per warp produced at a time.
    pub chunk: u32,
    /// Words per level per warp for staging short host lists.
    pub stage_words: u32,
    /// Blocks per SM (None: the occupancy the compiler allows).
    pub blocks_per_sm: Option<u32>,
    /// Blocks of the whole grid, overriding `blocks_per_sm` × SMs (None:
    /// that product). Fewer warps each take more tasks in a row, which
    /// exercises the per-warp state kept from task to task (the staging
    /// area's records; thirty-fifth session).
    pub grid_blocks: Option<u32>,
    /// How seeds are cut into tasks on the host (load balance).
    pub tasks: TaskOptions,
    /// Warps stop taking seeds after this long and the run is reported as
    /// [`KernelStats::aborted`] (None: no limit).
    pub time_limit: Option<std::time::Duration>,
    /// Long host lists (old part of at least this many entries) that are not
    /// staged are tested a block of candidates at a time through a window
    /// copied into the staging area (match v4); 0 turns windows off (match
    /// v2's per-lane binary searches), 1 uses them for every host list.
    pub window_min: u32,
    /// Largest window in words (at least 32 to be used; the free part of the
    /// level's staging area also bounds it).
    pub window_max: u32,
    /// Heavy-node deferral (match v5): a node below its task's start level
    /// whose iterated list has at least this many elements is written out
    /// as tasks of `defer_slice` elements each and run by every warp in a
    /// next launch (0: off, match v4). Match v6: 1,024 in slices of 256
    /// (v5: 2,048 in slices of 512).
    pub defer_min: u32,
    /// See `defer_min`.
    pub defer_slice: u32,
    /// Match v11: a level whose plan block carries its label share
    /// ([`crate::shares`], [`crate::QueryPlans::set_label_shares`]) defers
    /// from `defer_wanted / share` elements instead of `defer_min`: nodes
    /// whose list holds about this many candidates of the level's label (at
    /// least 32 elements; 0: `defer_min` everywhere, as up to match v10).
    /// 128 gives v6's 1,024 on a graph with 8 uniform labels and every
    /// edge, and 128-256 where the graph keeps only the query's label
    /// triples, which measured quickest there (docs/GPU_NOTES.md, match v11).
    /// The last level carries no share ([`crate::shares::encode_shares`]).
    pub defer_wanted: u32,
    /// Tasks the deferral buffer holds (two such buffers are allocated on
    /// first use); a node that does not fit is expanded by its warp.
    pub defer_cap: usize,
    /// Launches that may defer; the launch after the last of them runs
    /// every task it is given to the end.
    pub defer_rounds: u32,
    /// Match v13: a lane tests its block of candidates against a list by
    /// binary searches run in lockstep, their loads in flight together
    /// (false: one search after another, as up to match v12).
    pub lockstep: bool,
    /// Match v14: once every task of a launch has been taken (warps that
    /// finish would idle until it ends), nodes are deferred from this many
    /// candidates of their level's label instead of `defer_wanted` (the
    /// same fraction of `defer_min` on levels with no share; at least 32
    /// elements). 0: `defer_wanted` throughout, as in match v11-v13.
    pub defer_drained: u32,
    /// Match v17, the last-level memo: slots (rounded down to a power of
    /// two; 32 bytes each) of a device hash table that caches a last
    /// level's count by its read bindings (plan and depth too), for every
    /// warp of a run. A last-level node whose iterated list has at least
    /// `memo_min` elements first asks it: on a hit the node is neither
    /// staged nor counted, and only its conflict bindings are tested; on
    /// a miss its warp counts it (it is deferred only once the launch's
    /// tasks are all taken), finding the conflicts among its candidates
    /// in the same pass, and stores the count. Only plans that check no
    /// vertex label use it unless `memo_labelled`. On an unlabelled
    /// 20 M-edge R-MAT (64-update batches) it made the 7-wheel 1.31-1.34x
    /// quicker (86% of its last-level lookups hit) and the house,
    /// 5-cycle, prism and hexagon-2chords between 4% slower and 13%
    /// quicker. 0: no memo, as up to match v16.
    pub memo_slots: u32,
    /// See `memo_slots`.
    pub memo_min: u32,
    /// A memoised last-level node that misses is deferred as any node
    /// (by `defer_wanted` / `defer_min`), so only nodes below the deferral
    /// threshold are stored; false: it is deferred only once the launch's
    /// tasks are all taken, and heavy nodes are stored too.
    pub memo_defer: bool,
    /// Memoise plans that check vertex labels too. Off by default: on the
    /// 8-label bench graph it made the heavy 5-cycle rows 8-10% quicker
    /// but cost some light rows 5-18% in two runs of three, so the mean
    /// of per-row ratios over `zp` moved by -0.07 to +0.03 (the summed
    /// time gained 5-7%; docs/GPU_NOTES.md, match v17). Plans of
    /// unlabelled graphs (every vertex of the query's one label) are
    /// memoised whenever `memo_slots` > 0.
    pub memo_labelled: bool,
}

impl Default for MatcherConfig {
    fn default() -> Self {
        MatcherConfig {
            chunk: 1024,
            stage_words: 4096,
            blocks_per_sm: None,
            grid_blocks: None,
            tasks: TaskOptions::v6(),
            time_limit: None,
            window_min: 1024,
            window_max: 1024,
            defer_min: 1024,
            defer_slice: 256,
            defer_wanted: 128,
            defer_cap: 1 << 20,
            defer_rounds: 3,
            lockstep: true,
            defer_drained: 32,
            memo_slots: 1 << 20,
            memo_min: 512,
            memo_defer: false,
            memo_labelled: false,
        }
    }
}

/// Keys [`MatcherConfig::set`] accepts, with what each sets.
pub const SETTINGS: [(&str, &str); 16] = [
    ("chunk", "candidates per level per warp produced at a time"),
    ("stage-words", "words per level per warp for staged host lists"),
    (
        "window-min",
        "host lists this long are searched through windows (0: off)",
    ),
    ("window-max", "largest window, in words"),
    (
        "defer-min",
        "defer nodes whose iterated list has this many elements (0: no deferral)",
    ),
    ("defer-slice", "elements of that list per deferred task"),
    (
        "defer-wanted",
        "defer from this many candidates of the level's label (0: defer-min everywhere)",
    ),
    (
        "defer-drained",
        "once a launch's tasks are all taken, defer from this many (0: off; match v14)",
    ),
    ("defer-rounds", "launches that may defer"),
    ("defer-cap", "tasks the deferral buffer holds"),
    (
        "lockstep",
        "a lane's membership searches in lockstep (1) or one after another (0; match v13)",
    ),
    (
        "memo-slots",
        "slots of the last-level memo, 32 bytes each (0: no memo; match v17)",
    ),
    (
        "memo-min",
        "memoise last-level nodes whose iterated list has this many elements",
    ),
    (
        "memo-defer",
        "a memo miss defers as any node (1) or only once a launch drains (0)",
    ),
    (
        "memo-labelled",
        "memoise plans that check vertex labels too (1) or only unlabelled ones (0)",
    ),
    (
        "grid-blocks",
        "blocks of the whole grid (0: the occupancy's blocks per SM times the SMs)",
    ),
];

impl MatcherConfig {
    /// Sets one launch setting by name (see [`SETTINGS`]): `value` is a
    /// non-negative integer (`lockstep` also takes `true` / `false`). An
    /// unknown key or a value that does not parse or fit is an
    /// [`GpuError::InvalidInput`] naming it; the config is then unchanged.
    pub fn set(&mut self, key: &str, value: &str) -> GpuResult<()> {
        let bad = |why: &str| GpuError::InvalidInput(format!("kernel setting `{key}={value}`: {why}"));
        let num = || -> GpuResult<u64> {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| bad("expected a non-negative integer"))
        };
        let small = || -> GpuResult<u32> { u32::try_from(num()?).map_err(|_| bad("too large")) };
        let positive =
            || -> GpuResult<u32> { small().and_then(|v| if v == 0 { Err(bad("must be at least 1")) } else { Ok(v) }) };
        let flag = || -> GpuResult<bool> {
            match value.trim() {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err(bad("expected 0, 1, true or false")),
            }
        };
        match key {
            "chunk" => self.chunk = positive()?,
            "stage-words" => self.stage_words = small()?,
            "window-min" => self.window_min = small()?,
            "window-max" => self.window_max = small()?,
            "defer-min" => self.defer_min = small()?,
            "defer-slice" => self.defer_slice = positive()?,
            "defer-wanted" => self.defer_wanted = small()?,
            "defer-drained" => self.defer_drained = small()?,
            "defer-rounds" => self.defer_rounds = small()?,
            "defer-cap" => self.defer_cap = usize::try_from(num()?).map_err(|_| bad("too large"))?,
            "memo-slots" => self.memo_slots = small()?,
            "memo-min" => self.memo_min = small()?,
            "lockstep" => self.lockstep = flag()?,
            "memo-defer" => self.memo_defer = flag()?,
            "memo-labelled" => self.memo_labelled = flag()?,
            "grid-blocks" => self.grid_blocks = Some(small()?).filter(|&b| b > 0),
            _ => {
                let keys: Vec<&str> = SETTINGS.iter().map(|(k, _)| *k).collect();
                return Err(bad(&format!("unknown key (known: {})", keys.join(", "))));
            }
        }
        Ok(())
    }

    /// Applies a comma-separated list of `KEY=VALUE` settings (see
    /// [`MatcherConfig::set`]) in order; on an error nothing is applied.
    pub fn with_settings(self, list: &str) -> GpuResult<MatcherConfig> {
        let mut next = self;
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| GpuError::InvalidInput(format!("kernel setting `{item}`: expected KEY=VALUE")))?;
            next.set(k.trim(), v)?;
        }
        Ok(next)
    }
}

/// Which seeds a run starts from.
#[derive(Clone, Copy, Debug)]
pub enum Seeds<'a> {
    /// Tasks of delta plans (see [`crate::plan::QueryPlans::tasks`]).
    Explicit(&'a [Task]),
    /// Every vertex id `0..n` with plan 0 (static matching; the kernel
    /// skips vertices whose label is not the first level's).
    AllVertices(u64),
}

/// What one kernel run counted and measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KernelStats {
    pub positive: u64,
    pub negative: u64,
    /// Bytes loaded from host-resident lists (zero-copy or managed), as
    /// counted by the kernel: 4 per element (and per edge label) loaded.
    pub host_bytes: u64,
    /// List lookups served from host memory.
    pub host_lists: u64,
    /// List lookups served from the device cache.
    pub cached_lists: u64,
    /// Host lists staged into the warp buffer before searching.
    pub staged_lists: u64,
    /// Execution-tree nodes expanded.
    pub nodes: u64,
    /// Kernel time (GPU events, every launch).
    pub kernel_seconds: f64,
    /// Tasks the kernel deferred (heavy nodes, match v5) and launches run.
    pub deferred: u64,
    pub launches: u32,
    /// Host time to upload plans/seeds and reset the counters.
    pub upload_seconds: f64,
    /// Wall time of the whole run: the uploads, every launch and its
    /// wait, the downloads of the output words.
    pub wall_seconds: f64,
    /// Host time in the launches (each from its start event's record to
    /// the wait on its end event) and in the downloads of the output words
    /// after them: with `upload_seconds`, the parts of `wall_seconds`.
    pub launch_wall_seconds: f64,
    pub download_seconds: f64,
    pub seeds: u64,
    /// The time limit stopped the run: the counts are incomplete.
    pub aborted: bool,
    /// Last-level nodes whose count came from the memo, and those that
    /// asked it in vain and stored their count (match v17).
    pub memo_hits: u64,
    pub memo_misses: u64,
}

/// One build of `match_kernel` ([`Shape`]): its function, grid size
/// (blocks of [`Shape::block_threads`] threads, as many as fit on every SM
/// at once) and per-warp scratch (candidate buffers and staging areas, one
/// per query vertex).
struct Build {
    func: CudaFunction,
    shape: Shape,
    blocks: u32,
    cand: CudaSlice<u32>,
    stage: CudaSlice<u32>,
}

impl Build {
    fn new(gpu: &Arc<Gpu>, config: &MatcherConfig, shape: Shape) -> GpuResult<Build> {
        let func = kernel_with(gpu, MATCH_CU, &shape.defines(), "match_kernel")?;
        let per_sm = match config.blocks_per_sm {
            Some(b) => b.max(1),
            None => func
                .occupancy_max_active_blocks_per_multiprocessor(shape.block_threads(), 0, None)
                .map_err(|e| GpuError::driver("cuOccupancyMaxActiveBlocksPerMultiprocessor", e))?
                .max(1),
        };
        let blocks = config
            .grid_blocks
            .map_or(per_sm * gpu.info().multiprocessors.max(1), |b| b.max(1));
        let warps = blocks as usize * shape.warps;
        let cand = gpu.alloc_zeros::<u32>(warps * shape.maxq * config.chunk as usize)?;
        let stage = gpu.alloc_zeros::<u32>(warps * shape.maxq * config.stage_words as usize)?;
        Ok(Build {
            func,
            shape,
            blocks,
            cand,
            stage,
        })
    }
}

/// See the module docs.
pub struct DeviceMatcher {
    gpu: Arc<Gpu>,
    config: MatcherConfig,
    /// The build for queries of up to 8 vertices, made with the matcher.
    narrow: Build,
    /// The wide and huge builds ([`Shape::ALL`] after the narrow one), each
    /// made at its first run.
    larger: [Option<Build>; 2],
    /// The output words (owned here, used through `out_addr`).
    _out: CudaSlice<u64>,
    /// Device address of `_out`, taken once: resets and reads use it, with
    /// no event tracking of cudarc's (match v21; see
    /// [`crate::resident::ResidentCache`]'s addresses).
    out_addr: u64,
    /// Pinned host copy of `out`, read back after each launch with one
    /// synchronous copy (no allocation, no bounce buffer).
    out_host: PinnedBuffer<u64>,
    plans: Option<CudaSlice<u32>>,
    /// The plan words now on the device (uploaded again only when they
    /// change, match v5).
    plans_host: Vec<u32>,
    seeds: Option<CudaSlice<u32>>,
    /// Pinned staging of the task words: one asynchronous DMA copy, no
    /// pageable bounce buffer (match v5).
    seeds_host: Option<PinnedBuffer<u32>>,
    /// Deferred-task buffers (match v5): a launch reads one, writes the other.
    deferred: [Option<CudaSlice<u32>>; 2],
    /// Their device addresses, taken when allocated (match v21).
    deferred_addr: [u64; 2],
    /// The last-level memo (match v17), allocated with the matcher (again
    /// at the first run after a change of size), and the epoch of the
    /// last run (0 is never used, so zeroed slots are empty).
    memo: Option<CudaSlice<u32>>,
    memo_epoch: u32,
}

impl DeviceMatcher {
    /// Compiles the kernel and allocates per-warp scratch for a full grid.
    pub fn new(gpu: Arc<Gpu>, config: MatcherConfig) -> GpuResult<DeviceMatcher> {
        if config.chunk < 32 || config.stage_words == 0 || (config.defer_min > 0 && config.defer_slice == 0) {
            return Err(GpuError::InvalidInput(
                "matcher chunk must be >= 32, stage_words > 0 and defer_slice > 0 with deferral".into(),
            ));
        }
        let narrow = Build::new(&gpu, &config, Shape::NARROW)?;
        let out = gpu.alloc_zeros::<u64>(OUT_WORDS)?;
        let out_addr = out.device_ptr(gpu.stream()).0;
        let out_host = gpu.alloc_pinned(OUT_WORDS)?;
        let mut m = DeviceMatcher {
            gpu,
            config,
            narrow,
            larger: [None, None],
            _out: out,
            out_addr,
            out_host,
            plans: None,
            plans_host: Vec::new(),
            seeds: None,
            seeds_host: None,
            deferred: [None, None],
            deferred_addr: [0; 2],
            memo: None,
            memo_epoch: 0,
        };
        // The memo now, so that the first batch does not pay for it.
        m.memo_for_run()?;
        Ok(m)
    }

    /// The launch settings.
    pub fn config(&self) -> &MatcherConfig {
        &self.config
    }

    /// Changes the kernel time limit (see [`MatcherConfig::time_limit`]).
    pub fn set_time_limit(&mut self, limit: Option<std::time::Duration>) {
        self.config.time_limit = limit;
    }

    /// Changes the heavy-node deferral threshold (see
    /// [`MatcherConfig::defer_min`]; 0 turns it off).
    pub fn set_defer_min(&mut self, min: u32) {
        self.config.defer_min = min;
    }

    /// Changes the size of deferred slices (see
    /// [`MatcherConfig::defer_slice`]; at least 1).
    pub fn set_defer_slice(&mut self, slice: u32) {
        self.config.defer_slice = slice.max(1);
    }

    /// Changes the candidates a deferred node's list should give (see
    /// [`MatcherConfig::defer_wanted`]; 0: `defer_min` on every level).
    pub fn set_defer_wanted(&mut self, wanted: u32) {
        self.config.defer_wanted = wanted;
    }

    /// Deferral threshold once a launch's tasks are all taken
    /// ([`MatcherConfig::defer_drained`]; 0: off).
    pub fn set_defer_drained(&mut self, drained: u32) {
        self.config.defer_drained = drained;
    }

    /// Launches that may defer heavy nodes ([`MatcherConfig::defer_rounds`]).
    pub fn set_defer_rounds(&mut self, rounds: u32) {
        self.config.defer_rounds = rounds;
    }

    /// Lockstep membership searches (match v13) or one after another.
    pub fn set_lockstep(&mut self, on: bool) {
        self.config.lockstep = on;
    }

    /// Changes the last-level memo's size ([`MatcherConfig::memo_slots`];
    /// 0 turns it off). A new size takes effect at the next run; turning
    /// the memo off keeps its table for when it is turned on again.
    pub fn set_memo_slots(&mut self, slots: u32) {
        self.config.memo_slots = slots;
    }

    /// Changes the shortest iterated list a memoised node has
    /// ([`MatcherConfig::memo_min`]).
    pub fn set_memo_min(&mut self, min: u32) {
        self.config.memo_min = min;
    }

    /// Whether memo misses defer as any node ([`MatcherConfig::memo_defer`]).
    pub fn set_memo_defer(&mut self, on: bool) {
        self.config.memo_defer = on;
    }

    /// Whether plans that check labels are memoised too
    /// ([`MatcherConfig::memo_labelled`]).
    pub fn set_memo_labelled(&mut self, on: bool) {
        self.config.memo_labelled = on;
    }

    /// The memo's slots as used: [`MatcherConfig::memo_slots`] rounded
    /// down to a power of two (0: no memo).
    pub fn memo_slots(&self) -> usize {
        match self.config.memo_slots {
            0 => 0,
            n => 1 << n.ilog2(),
        }
    }

    /// The memo's address, slot mask and a new epoch for one run
    /// (allocated when missing or of another size; cleared when the
    /// epochs wrap); zeros when the memo is off.
    fn memo_for_run(&mut self) -> GpuResult<(u64, u64, u64)> {
        let slots = self.memo_slots();
        if slots == 0 {
            return Ok((0, 0, 0));
        }
        let stream = self.gpu.stream().clone();
        if self.memo.as_ref().map_or(true, |m| m.len() != slots * MEMO_WORDS) {
            self.memo = None;
            self.memo = Some(self.gpu.alloc_zeros::<u32>(slots * MEMO_WORDS)?);
            self.memo_epoch = 0;
        }
        let memo = self.memo.as_mut().expect("allocated");
        self.memo_epoch = self.memo_epoch.wrapping_add(1);
        if self.memo_epoch == 0 {
            // Slots of the epoch that comes round again would read as live.
            stream
                .memset_zeros(memo)
                .map_err(|e| GpuError::driver("cuMemsetD8 (memo)", e))?;
            self.memo_epoch = 1;
        }
        let ptr = memo.device_ptr(&stream).0;
        Ok((ptr, slots as u64 - 1, u64::from(self.memo_epoch)))
    }

    /// Changes the window settings (see [`MatcherConfig::window_min`]).
    pub fn set_windows(&mut self, min: u32, max: u32) {
        self.config.window_min = min;
        self.config.window_max = max;
    }

    /// The device this matcher runs on.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Changes how seeds are cut into tasks (see [`MatcherConfig::tasks`]).
    pub fn set_tasks(&mut self, tasks: TaskOptions) {
        self.config.tasks = tasks;
    }

    /// The task options of one run: [`TaskOptions::AUTO`] resolved to twice
    /// the kernel's warps.
    pub fn task_options(&self) -> TaskOptions {
        let mut t = self.config.tasks;
        if t.target_tasks == TaskOptions::AUTO {
            t.target_tasks = 2 * self.blocks() as usize * Shape::NARROW.warps;
        }
        t
    }

    /// Grid size (blocks of [`Shape::block_threads`] threads) of the build for
    /// queries of up to 8 vertices.
    pub fn blocks(&self) -> u32 {
        self.narrow.blocks
    }

    /// Bytes of per-warp scratch on the device (every build made) and of
    /// the last-level memo once allocated.
    pub fn scratch_bytes(&self) -> usize {
        std::iter::once(&self.narrow)
            .chain(self.larger.iter().flatten())
            .map(|b| (b.cand.len() + b.stage.len()) * 4)
            .sum::<usize>()
            + self.memo.as_ref().map_or(0, |m| m.len() * 4)
    }

    /// The build for `shape`, made on first use.
    fn build(&mut self, shape: Shape) -> GpuResult<&Build> {
        if shape != Shape::NARROW {
            let slot = &mut self.larger[shape.tag as usize - 1];
            if slot.is_none() {
                *slot = Some(Build::new(&self.gpu, &self.config, shape)?);
            }
        }
        Ok(self.made(shape))
    }

    /// The build for `shape`, which [`DeviceMatcher::build`] made.
    fn made(&self, shape: Shape) -> &Build {
        if shape == Shape::NARROW {
            &self.narrow
        } else {
            self.larger[shape.tag as usize - 1].as_ref().expect("made by build()")
        }
    }

    /// A device buffer of at least `len` words in `slot` (grown by half);
    /// true when it was (re)allocated.
    fn reserve(gpu: &Gpu, slot: &mut Option<CudaSlice<u32>>, len: usize) -> GpuResult<bool> {
        Self::reserve_to(gpu, slot, len, len + len / 2 + 64)
    }

    /// [`DeviceMatcher::reserve`], (re)allocating `cap` (>= `len`) words.
    fn reserve_to(gpu: &Gpu, slot: &mut Option<CudaSlice<u32>>, len: usize, cap: usize) -> GpuResult<bool> {
        if slot.as_ref().map_or(true, |s| s.len() < len) {
            *slot = None;
            *slot = Some(gpu.alloc_zeros::<u32>(cap.max(len))?);
            return Ok(true);
        }
        Ok(false)
    }

    /// Device address of the encoded plans, uploading them only when they
    /// differ from the last run's.
    fn put_plans(&mut self, plans: &[u32]) -> GpuResult<u64> {
        let grown = Self::reserve(&self.gpu, &mut self.plans, plans.len())?;
        let stale = grown || self.plans_host.as_slice() != plans;
        let dst = self.plans.as_mut().expect("reserved");
        if stale {
            self.gpu
                .stream()
                .memcpy_htod(plans, &mut dst.slice_mut(0..plans.len()))
                .map_err(|e| GpuError::driver("cuMemcpyHtoD (plans)", e))?;
            self.plans_host.clear();
            self.plans_host.extend_from_slice(plans);
        }
        Ok(dst.device_ptr(self.gpu.stream()).0)
    }

    /// Writes the tasks' kernel words into pinned staging and queues one
    /// asynchronous copy to the device; returns the device address. The
    /// staging is next written after this run's synchronisation.
    ///
    /// Both buffers start at [`TASK_BUFFER_MIN`] tasks and double when
    /// outgrown: re-allocating pinned memory costs about 2 ms (H200), and
    /// with growth by halves the batch that crossed a size paid it (the
    /// first engine of a bench row, which made light rows look slower).
    fn put_tasks(&mut self, tasks: &[Task]) -> GpuResult<u64> {
        let len = tasks.len() * TASK_WORDS;
        let cap = (2 * len).max(TASK_BUFFER_MIN * TASK_WORDS);
        if self.seeds_host.as_ref().map_or(true, |s| s.len() < len) {
            self.seeds_host = None;
            self.seeds_host = Some(self.gpu.alloc_pinned(cap)?);
        }
        let host = self.seeds_host.as_mut().expect("allocated");
        write_task_words(tasks, &mut host.as_mut_slice()[..len]);
        Self::reserve_to(&self.gpu, &mut self.seeds, len, cap)?;
        let dst = self.seeds.as_ref().expect("reserved");
        let (ptr, rec) = dst.device_ptr(self.gpu.stream());
        self.gpu
            .context()
            .bind_to_thread()
            .map_err(|e| GpuError::driver("cuCtxSetCurrent", e))?;
        // SAFETY: `ptr` holds at least `len` words; the pinned source is not
        // written again before the stream is synchronised at the end of the
        // run that uses it.
        unsafe { result::memcpy_htod_async(ptr, &host.as_slice()[..len], self.gpu.stream().cu_stream()) }
            .map_err(|e| GpuError::driver("cuMemcpyHtoDAsync (tasks)", e))?;
        drop(rec);
        Ok(ptr)
    }

    /// Device address of deferral buffer `i` (allocated on first use).
    fn defer_buffer(&mut self, i: usize) -> GpuResult<u64> {
        let words = self.config.defer_cap * TASK_WORDS;
        if Self::reserve(&self.gpu, &mut self.deferred[i], words)? {
            self.deferred_addr[i] = self.deferred[i]
                .as_ref()
                .expect("reserved")
                .device_ptr(self.gpu.stream())
                .0;
        }
        Ok(self.deferred_addr[i])
    }

    /// Device address of the task counter (`Params::counter`), an output
    /// word.
    fn counter_addr(&self) -> u64 {
        self.out_addr + 8 * OUT_COUNTER as u64
    }

    /// Zeroes output words `words` (queued on the stream).
    fn reset_out(&self, words: std::ops::Range<usize>) -> GpuResult<()> {
        self.gpu
            .context()
            .bind_to_thread()
            .map_err(|e| GpuError::driver("cuCtxSetCurrent", e))?;
        let at = self.out_addr + 8 * words.start as u64;
        // SAFETY: `words` lies within `out` (OUT_WORDS words), which lives
        // as long as the matcher.
        unsafe { result::memset_d8_async(at, 0, 8 * words.len(), self.gpu.stream().cu_stream()) }
            .map_err(|e| GpuError::driver("cuMemsetD8Async (out)", e))
    }

    /// The output words after a launch that [`DeviceMatcher::launch`] has
    /// waited for.
    fn read_out(&mut self) -> GpuResult<[u64; OUT_WORDS]> {
        self.gpu
            .context()
            .bind_to_thread()
            .map_err(|e| GpuError::driver("cuCtxSetCurrent", e))?;
        let host = self.out_host.as_mut_slice();
        // SAFETY: `host` and `out` both hold OUT_WORDS words; the kernel
        // that wrote `out` has finished (its end event was waited for) and
        // nothing else queued writes it.
        unsafe { result::memcpy_dtoh_sync(&mut host[..OUT_WORDS], self.out_addr) }
            .map_err(|e| GpuError::driver("cuMemcpyDtoH (out)", e))?;
        let mut out = [0; OUT_WORDS];
        out.copy_from_slice(&host[..OUT_WORDS]);
        Ok(out)
    }

    /// One launch of the kernel over `params`' tasks, waited for; returns
    /// its GPU time in seconds. Every launch after the run's first (whose
    /// output [`DeviceMatcher::run`] zeroed) resets its task counter and
    /// deferral count first, with one memset.
    fn launch(&mut self, params: &MatchParams, shape: Shape, first: bool) -> GpuResult<f64> {
        let stream = self.gpu.stream().clone();
        if !first {
            self.reset_out(OUT_DEFERRED..OUT_COUNTER + 1)?;
        }
        let build = self.made(shape);
        let cfg = LaunchConfig {
            grid_dim: (build.blocks, 1, 1),
            block_dim: (build.shape.block_threads(), 1, 1),
            shared_mem_bytes: 0,
        };
        let func = &build.func;
        let ((), ms) = self.gpu.timed(|| {
            let mut b = stream.launch_builder(func);
            b.arg(params);
            // SAFETY: `params` matches the kernel's `struct Params`; every
            // address in it points to live allocations of the sizes the
            // kernel assumes (scratch sized for `blocks` blocks, deferral
            // buffers of `defer_cap` tasks).
            unsafe { b.launch(cfg) }
                .map(|_| ())
                .map_err(|e| GpuError::driver("launching match_kernel", e))
        })?;
        Ok(f64::from(ms) / 1e3)
    }

    /// One launch of the kernel with no tasks, waited for; returns its wall
    /// time in seconds. Every warp starts, finds the task counter past the
    /// (empty) task list and exits, so this costs a launch and its wait,
    /// plus whatever the device needs to leave an idle state: a probe for
    /// the time a device that sat idle adds to the next batch.
    pub fn wake(&mut self) -> GpuResult<f64> {
        let t0 = Instant::now();
        let params = MatchParams {
            counter: self.counter_addr(),
            out: self.out_addr,
            ..MatchParams::default()
        };
        self.reset_out(0..OUT_WORDS)?;
        self.launch(&params, Shape::NARROW, true)?;
        self.gpu.synchronize()?;
        Ok(t0.elapsed().as_secs_f64())
    }

    /// Counts the embeddings of `plans` (encoded for one [`Shape`], its
    /// [`Shape::plan_words`] each) from `seeds` over `host` and `cache`.
    pub fn run(
        &mut self,
        host: &HostGraph,
        cache: Option<&dyn KernelCache>,
        plans: &[u32],
        seeds: Seeds<'_>,
    ) -> GpuResult<KernelStats> {
        let t0 = Instant::now();
        let shape = Shape::of_words(plans)
            .ok_or_else(|| GpuError::InvalidInput("plan words that name no kernel build".into()))?;
        if plans.len() % shape.plan_words() != 0 {
            return Err(GpuError::InvalidInput(format!(
                "{} plan words is not a multiple of {}",
                plans.len(),
                shape.plan_words()
            )));
        }
        let nplans = (plans.len() / shape.plan_words()) as u64;
        let (seed_ptr, nseeds, implicit) = match seeds {
            Seeds::Explicit(s) => {
                if let Some(bad) = s
                    .iter()
                    .find(|t| u64::from(t.plan) >= nplans || t.start as usize > MAX_PREFIX || t.start == 0)
                {
                    return Err(GpuError::InvalidInput(format!(
                        "task names plan {} of {nplans} with a prefix of {}",
                        bad.plan, bad.start
                    )));
                }
                if s.is_empty() {
                    return Ok(KernelStats::default());
                }
                (self.put_tasks(s)?, s.len() as u64, 0)
            }
            Seeds::AllVertices(n) => (0, n.min(host.num_vertices() as u64), 1),
        };
        if nseeds == 0 {
            return Ok(KernelStats::default());
        }
        let plan_ptr = self.put_plans(plans)?;
        let gpu = self.gpu.clone();
        let (cand, stage) = {
            let b = self.build(shape)?;
            (b.cand.device_ptr(gpu.stream()).0, b.stage.device_ptr(gpu.stream()).0)
        };
        self.reset_out(0..OUT_WORDS)?;
        let [rowidx, rowptr, colidx, collab, ncached, slots, nslots] =
            cache.map_or([0; 7], |c| c.kernel_args(&self.gpu));
        let (memo, memo_mask, memo_epoch) = self.memo_for_run()?;
        let mut params = MatchParams {
            plans: plan_ptr,
            nplans,
            seeds: seed_ptr,
            nseeds,
            implicit_seeds: implicit,
            vtab: host.table_ptr(),
            nvert: host.num_vertices() as u64,
            vlabels: host.labels_ptr(),
            host_counts: u64::from(host.memory().is_host()),
            rowidx,
            rowptr,
            colidx,
            collab,
            ncached,
            slots,
            nslots,
            cand,
            chunk: u64::from(self.config.chunk),
            stage,
            stage_words: u64::from(self.config.stage_words),
            counter: self.counter_addr(),
            out: self.out_addr,
            time_limit_ns: self.config.time_limit.map_or(0, |d| d.as_nanos().max(1) as u64),
            window_min: u64::from(self.config.window_min),
            window_max: u64::from(self.config.window_max),
            defer: 0,
            defer_cap: self.config.defer_cap as u64,
            defer_min: u64::from(self.config.defer_min),
            defer_slice: u64::from(self.config.defer_slice),
            defer_wanted: u64::from(self.config.defer_wanted),
            lockstep: u64::from(self.config.lockstep),
            defer_drained: u64::from(self.config.defer_drained),
            memo,
            memo_mask,
            memo_epoch,
            memo_min: u64::from(self.config.memo_min),
            memo_defer: u64::from(self.config.memo_defer),
            memo_labelled: u64::from(self.config.memo_labelled),
        };
        let upload_seconds = t0.elapsed().as_secs_f64();
        let (mut seconds, mut deferred, mut launches) = (0.0, 0u64, 0u32);
        let (mut launch_wall, mut download) = (0.0, 0.0);
        // Launch, then run what it deferred (heavy nodes) in the next
        // launch, until nothing is deferred; the last round defers nothing.
        let out = loop {
            let round = launches as usize;
            let defers = self.config.defer_min > 0 && self.config.defer_cap > 0 && launches < self.config.defer_rounds;
            params.defer = if defers { self.defer_buffer(round % 2)? } else { 0 };
            let tl = Instant::now();
            seconds += self.launch(&params, shape, launches == 0)?;
            launch_wall += tl.elapsed().as_secs_f64();
            launches += 1;
            let td = Instant::now();
            let out = self.read_out()?;
            download += td.elapsed().as_secs_f64();
            let n = out[OUT_DEFERRED].min(self.config.defer_cap as u64);
            deferred += n;
            if !defers || n == 0 || out[7] != 0 {
                break out;
            }
            params.seeds = params.defer;
            params.nseeds = n;
            params.implicit_seeds = 0;
        };
        Ok(KernelStats {
            positive: out[0],
            negative: out[1],
            host_bytes: out[2],
            host_lists: out[3],
            cached_lists: out[4],
            staged_lists: out[5],
            nodes: out[6],
            kernel_seconds: seconds,
            upload_seconds,
            wall_seconds: t0.elapsed().as_secs_f64(),
            launch_wall_seconds: launch_wall,
            download_seconds: download,
            seeds: nseeds,
            aborted: out[7] != 0,
            deferred,
            launches,
            memo_hits: out[OUT_MEMO_HITS],
            memo_misses: out[OUT_MEMO_MISSES],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names after `#define NAME` in the kernel source, with their values.
    fn define(src: &str, name: &str) -> u64 {
        let line = src
            .lines()
            .find(|l| l.split_whitespace().take(2).eq(["#define", name]))
            .unwrap_or_else(|| panic!("no #define {name} in match.cu"));
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    }

    /// `MatchParams` is passed by value as the kernel's `struct Params`: the
    /// same fields, 64-bit each, in the same order (a field added on one side
    /// only would shift every later one; only a device run would show it).
    #[test]
    fn params_and_output_layout_match_the_kernel_source() {
        let src = crate::nvrtc::MATCH_CU.src;
        let body = &src[src.find("struct Params {").expect("struct Params") + "struct Params {".len()..];
        let body = &body[..body.find("};").expect("end of struct Params")];
        let mut kernel_fields = Vec::new();
        for line in body.lines() {
            let code = line.split("//").next().unwrap().trim();
            if code.is_empty() {
                continue;
            }
            let decl = code
                .strip_prefix("u64 ")
                .unwrap_or_else(|| panic!("not a u64 field: {code}"));
            let decl = decl.strip_suffix(';').unwrap_or_else(|| panic!("no `;`: {code}"));
            kernel_fields.extend(decl.split(',').map(|f| f.trim().to_string()));
        }
        // the derived Debug lists the fields in declaration order
        let dbg = format!("{:?}", MatchParams::default());
        let inner = dbg.strip_prefix("MatchParams { ").unwrap().strip_suffix(" }").unwrap();
        let rust_fields: Vec<String> = inner
            .split(", ")
            .map(|kv| kv.split(':').next().unwrap().to_string())
            .collect();
        assert_eq!(rust_fields, kernel_fields);
        assert_eq!(std::mem::size_of::<MatchParams>(), 8 * kernel_fields.len());
        assert_eq!(define(src, "OUT_WORDS"), OUT_WORDS as u64);
        assert_eq!(define(src, "OUT_DEFERRED"), OUT_DEFERRED as u64);
        assert_eq!(define(src, "OUT_COUNTER"), OUT_COUNTER as u64);
        assert_eq!(define(src, "TASK_WORDS"), crate::plan::TASK_WORDS as u64);
        assert_eq!(define(src, "PLAN_HEADER"), crate::plan::PLAN_HEADER as u64);
        assert_eq!(define(src, "L_READS"), crate::plan::L_READS as u64);
        assert_eq!(define(src, "OUT_MEMO_HITS"), OUT_MEMO_HITS as u64);
        assert_eq!(define(src, "OUT_MEMO_MISSES"), OUT_MEMO_MISSES as u64);
        assert_eq!(define(src, "MEMO_WORDS"), MEMO_WORDS as u64);
        assert_eq!(define(src, "MEMO_KEY"), crate::plan::MEMO_KEY as u64);
        // the vertex table's entries: two addresses, then two 32-bit lengths
        let ventry = &src[src.find("struct VEntry {").expect("struct VEntry")..];
        let ventry = &ventry[..ventry.find("};").unwrap()];
        let kinds: Vec<&str> = ventry
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(kinds, ["u64", "u64", "u32", "u32"]);
        assert_eq!(std::mem::size_of::<crate::host_graph::VEntry>(), 24);
    }

    #[test]
    fn settings_parse_and_bad_ones_name_the_key() {
        let c = MatcherConfig::default()
            .with_settings("lockstep=0, defer-drained=0,defer-wanted=64,defer-cap=4096,chunk=512")
            .unwrap();
        assert!(!c.lockstep);
        assert_eq!(
            (c.defer_drained, c.defer_wanted, c.defer_cap, c.chunk),
            (0, 64, 4096, 512)
        );
        // every documented key is accepted
        for (k, _) in SETTINGS {
            let v = if ["lockstep", "memo-defer", "memo-labelled"].contains(&k) {
                "true"
            } else {
                "7"
            };
            MatcherConfig::default()
                .set(k, v)
                .unwrap_or_else(|e| panic!("{k}: {e}"));
        }
        let base = MatcherConfig::default();
        for (list, says) in [
            ("bogus=1", "unknown key"),
            ("lockstep=maybe", "expected 0, 1"),
            ("defer-min=-3", "non-negative integer"),
            ("defer-min=99999999999", "too large"),
            ("chunk=0", "at least 1"),
            ("defer-drained", "KEY=VALUE"),
        ] {
            let e = base
                .with_settings(&format!("window-min=5,{list}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{list}: {e}");
            assert!(e.contains(list.split('=').next().unwrap()), "{list}: {e}");
        }
        assert_eq!(base.with_settings("").unwrap(), base);
    }
}
