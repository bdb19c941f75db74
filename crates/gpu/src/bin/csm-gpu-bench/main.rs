//! `csm-gpu-bench`: GCSM Sec. VI on one machine — an R-MAT graph, a stream
//! of mixed updates, and per batch size and query the per-batch time of the
//! CPU engine (16 threads) and the GPU variants UM, ZP, VSGM (small batches),
//! Naive and GCSM, with GCSM's estimation (FE) and data-copy (DC) split, the
//! bytes read from host memory and where the time goes.
//!
//! ```text
//! csm-gpu-bench [--edges N] [--scale S] [--labels L] [--sizes 64,256,...]
//!               [--batches B] [--queries house,5-cycle,...]
//!               [--variants cpu16,cpu-engine,um,zp,vsgm,naive,gcsm[,gcsm-sampler]] [--vsgm-max-batch B]
//!               [--budget-frac F] [--threads T] [--deadline-s S] [--out DIR]
//!               [--seed X] [--walk-cap W] [--walk-total T] [--fe-frac F] [--stage-words W]
//!               [--rmat A,B,C] [--limit-s S] [--window-min N] [--window-max W] [--defer-min N]
//!               [--defer-wanted N]
//!               [--skip-ms MS] [--split] [--settle-ms MS] [--wake]
//! ```
//!
//! Engines `zp-v2` and `gcsm-v2` run match v2's settings in the same run:
//! no windows (`--window-min 0`), no small-batch task balance and, for
//! `gcsm-v2`, an estimate on every batch (no small-batch skip);
//! `zp-v4` and `gcsm-v4` run match v4's settings: its task split options
//! ([`TaskOptions::v4`]: the balance may expand into the last level) and no
//! heavy-node deferral; `zp-v5` and `gcsm-v5` run match v5's settings:
//! its task split ([`TaskOptions::v5`]: heavy seeds of every batch
//! expanded on the host; match v6 expands only those of small batches),
//! deferral from lists of 2,048 in slices of 512 and no cold skip (v4's
//! engines have no cold skip either); `-noexp` expands none
//! (small batches are only sliced too); `-sliceN` cuts those slices no
//! smaller than N (`TaskOptions::slice_min`, default 32); `gcsm-coldN`
//! skips the estimate on a query's first batch when it has fewer than N
//! seeds (`WalkSelector::cold_skip_seeds`, default 512; `-cold0`: off);
//! `-dsN` defers heavy nodes in slices of N elements (default 256);
//! `-nomemo` turns the last-level memo off (match v17,
//! [`MatcherConfig::memo_slots`]) and `-mminN` memoises last-level nodes
//! from iterated lists of N elements (`MatcherConfig::memo_min`, 512);
//! `-mslotsN` gives the memo N Mi slots (`MatcherConfig::memo_slots`, 1)
//! and `-mdefer` defers memo misses as any node
//! (`MatcherConfig::memo_defer`); `-mlab` memoises plans that check
//! vertex labels too (`MatcherConfig::memo_labelled`; by default only
//! unlabelled graphs' plans are);
//! `-seq` runs a lane's membership searches one after another (match
//! v12) instead of in lockstep (match v13, [`MatcherConfig::lockstep`]);
//! `-roundsN` lets N launches defer (`MatcherConfig::defer_rounds`, 3);
//! `-drainN` defers from N candidates once a launch's tasks are all taken
//! (match v14, `MatcherConfig::defer_drained`, default 32; 0: off);
//! `-nodefer` turns
//! only the deferral off, `-deferN` defers from iterated lists of N
//! elements on every level (instead of `--defer-min`, and with no label
//! shares); match v11 defers a level's node from `--defer-wanted` (128)
//! candidates of its label (`MatcherConfig::defer_wanted`): `-wantN`
//! sets that number, `-v10` turns it off (match v10's deferral, every
//! level from `--defer-min` elements); the last level, counted in one
//! intersection, defers by length (`--defer-min`) unless `-allshares`
//! (v11's first cut);
//! `zp-nobal` and `gcsm-nobal` turn only the task balance off; `-deep16`
//! balances batches of up to 4x more seeds; `gcsm-lite` gives the estimate
//! 1% of the predicted kernel time instead of `--fe-frac`; `gcsm-skipN`
//! skips estimate and copy below N ms of predicted kernel time (instead of
//! `--skip-ms`, default [`WalkSelector`]'s `skip_below`; 0: never skip).
//!
//! `gcsm-persist` (match v7) matches over the resident cache
//! ([`csm_gpu::resident`]): filled once with the longest lists within the
//! budget before the first batch (logged, not counted per batch); each
//! batch, right after staging, brings the cached lists it and the
//! previous batch changed up to date (merges the previous batch's staged
//! copies on the device, then sends this batch's marks and appended
//! parts), and that refresh is charged as DC to every `gcsm-persist` row
//! of the batch (each query pays it in full). `gcsm-persist-whole` (its
//! own resident cache) copies those lists whole instead (the first cut).
//! `gcsm-persist-v7` (its own resident cache) refreshes as match v7 did:
//! slices handed to cudarc's event tracking, bookkeeping on one thread
//! (match v8 passes raw addresses and spreads large refreshes' lookups
//! over rayon); `gcsm-persist-par` has v8's launches and spreads the
//! bookkeeping of refreshes from 128 slots over rayon's pool (off by
//! default: not quicker). With several resident caches, their refresh
//! order rotates per batch (the first one after staging is the slowest).
//! The refresh runs right after staging (match v8); `--refresh-late` runs
//! it after the host graph's mirror sync, as match v7 did. Match v9 moves
//! the merge of the previous batch's staged copies out of the refresh: it
//! is queued right after each commit ([`ResidentCache::commit`]), beside
//! the host graph's mirror sync, logged with its host and device time and,
//! like that sync, charged to no row; the refresh then patches only the
//! batch's own changed lists. `gcsm-persist-v8` (its own resident cache)
//! keeps v8's refresh, merge included. `gcsm-persist-fillN` (its own
//! resident cache) gives the cached lists' slots N% of the budget instead
//! of 90%, and `-slackD` (with it) each slot `len / D + 8` entries of
//! slack instead of `len / 8 + 8` (D 0: 8 only), e.g.
//! `gcsm-persist-fill100-slack0`. Any other `gcsm-persist-*` name
//! (e.g. `gcsm-persist-noexp`) runs on the `gcsm-persist` cache, sharing
//! its refresh, with that settings suffix applied.
//!
//! Match v9 also lets a `gcsm-persist` row run on ZP's path, charged no
//! refresh, when its query's earlier batches of that size predict a
//! refresh over a quarter of the kernel time ([`ResidentUse`]; the row's
//! `cache_vertices` is then 0); `gcsm-persist-always` (sharing the cache)
//! always uses the cache, `gcsm-persist-useN` lets the refresh cost up to
//! N% of the predicted kernel time (default 25). Match v15: a refresh over
//! that share is still paid when refresh plus kernel over the cache is at
//! most the kernel of the size class's rows that did not use it. Match v18
//! compares those kernels per search node (plus the mask's charge) and
//! re-tries the arm not taken after 16 batches of a size class;
//! `gcsm-persist-v17use` keeps v15-v17's rule (per update, no re-tries).
//! Match v20: from 2,048 updates (`csm_gpu::overlap::OVERLAP_FROM`) a row's
//! refresh or mask runs on a second thread beside its seeds and task
//! split, as in `GpuEngine`. The batch's refresh is made once, so a row
//! that uses it re-times the refresh's bookkeeping and pack on a clone of
//! the layout beside its own seeds and split, and is charged the wait plus
//! the refresh's enqueue and device time; a masked row masks beside them.
//! `gcsm-persist-inturn` (sharing the cache) keeps them in turn (`-seq` is
//! match v12's sequential searches);
//! `gcsm-persist-overN` overlaps them from N updates.
//!
//! Thirty-eighth session: the `gcsm-persist` cache refreshes beside the
//! host mirrors' sync, on the helper thread, as `GpuEngine` does by default
//! (`with_refresh_beside_sync`; the helper is woken before the staging,
//! `csm_gpu::overlap::wake_helper`): the batch's refresh is made there,
//! once, and each `gcsm-persist` row matches over the cache and is charged
//! the wait after the sync, the refresh's device time beyond the slack it
//! left before the sync's end, and a renewal when one was due. The log's
//! "refresh beside the sync" lines give the refresh's host time, the
//! sync's and the wait. The variants that share that cache keep their own
//! charging rules (above), now over a refresh made beside the sync.
//! `gcsm-persist-v21` (its own cache) is the protocol before: the refresh
//! right after staging, charged to the rows as above.
//!
//! Match v10: such a row no longer runs on ZP's path but over the cache
//! with the batch's changed lists hidden from the kernel
//! ([`ResidentCache::mask`]; they are read zero-copy), charged the mask
//! (slot-map words; its host and device time) instead of the refresh;
//! the words that show them again are queued after the kernel, not
//! charged (GpuEngine sends them with the refresh that follows the
//! kernel). `gcsm-persist-zpath` keeps v9's ZP path for those rows;
//! `gcsm-persist-bypass` masks every row (never refreshes first).
//!
//! Match v9 also picks each small batch's host expansion per engine and
//! query ([`SplitPolicy`]: no expansion when the query's earlier kernel
//! times predict under 1 ms); `-split` (e.g. `zp-split`,
//! `gcsm-persist-split`) keeps the task options as they are (match v8).
//!
//! `gcsm-persist-hot` (match v12, its own resident cache) gives
//! `--hot-frac` of the budget (default 0.4) to the batch's hot lists
//! ([`csm_gpu::hot`]: the changed lists its resident set does not serve,
//! copied to device memory before each row's kernel and charged as DC)
//! and the rest to the resident set.
//!
//! `--split` runs each query on its own graph: the edges of its label
//! triples only, as `csm stream` keeps them (`csm_engine::EdgesApart`; the
//! other edges cannot be part of a match), and per batch the updates of
//! those edges (a batch of 8,192 updates of the whole stream then matches
//! the few thousand it keeps; the rest would only be validated, which is
//! graph-update time, not matching time). Every engine of a query runs on
//! that graph, the cache budget is `--budget-frac` of it (as
//! `GpuEngine`'s is), and its figures go to the setup's `graphs.<query>`.
//! Without it one graph with every edge serves every query (GCSM's
//! protocol, and the figures of the notes up to match v10).
//!
//! `cpu16` is a replica of the CPU engine's batch count (its algorithm,
//! GCSM's order, no hub label groups) that can stop at `--limit-s`;
//! `cpu-engine` runs `csm_baselines`' `cpu` engine itself (`cpu-whole`
//! without `--split`), with every default, on its own copy of each graph
//! (one per query: memory), checked against the replica's counts.
//!
//! `--limit-s` bounds one engine's run on one batch (default 6 s): the CPU
//! engine stops between pieces of the batch, the kernel's warps stop taking
//! seeds; a (query, engine) that hits it is skipped for larger batches.
//!
//! `--settle-ms MS` pauses between a row's CPU engines and its GPU engines
//! (default 0): the first GPU engine after the CPU engines runs light rows
//! slower than the same engine later in the order, and the pause tells a
//! transient of the CPU run from a cost of the place. `--wake` launches
//! the kernel once with no tasks before a row's GPU engines, waits for it
//! and writes its wall time to the CSV as engine `wake` (not in the
//! tables): the time an idle device adds to the batch that wakes it.
//! `--warm-up` runs the row's query once on `zp`'s path before its GPU
//! engines and records nothing but its time in the log: the first GPU
//! engine of a row runs light rows 0.1-0.3 ms slower (host and GPU caches
//! the next engines find warm), which flatters whatever is compared with
//! it. Without it, put a sacrificial engine first (the default list's
//! `zp-seq`); the bench warns when `zp` or a `gcsm` variant comes first.
//! Match v17-v18's main-bench figures had `zp` first (docs/GPU_NOTES.md,
//! "match v20").
//!
//! `gcsm` uses the crate's path-sampling selector ([`WalkSelector`]);
//! `gcsm-sampler` uses csm-sampler's merged-walk policy with `--walk-cap`
//! walks per root. `gcsm`'s selector walks at most `--walk-cap` times per
//! seed and `--walk-total` times per batch (0: no cap), and with `--fe-frac
//! F` (0: off) bounds its estimate and copy to F of the predicted kernel
//! time each (learnt from the query's earlier batches).
//!
//! `--rmat` sets the R-MAT quadrant probabilities (default 0.45,0.22,0.22,
//! the issue's bench; Graph500's skew is 0.57,0.19,0.19).
//!
//! With no arguments the bench runs the README's table: a 500 M-edge
//! R-MAT, 8 labels, batches of 64 / 1,024 / 8,192 (5 of each), every
//! variant and the CPU engine on one graph (`--split`: the split protocol).
//!
//! Writes `bench.csv` (one row per batch and engine), `bench.json` (setup,
//! rows, summary, mean speed-ups) and `bench.md` (the summary table, then
//! each engine's mean speed-up over `zp`, `cpu16` and `cpu-engine`: means
//! over rows of per-row median ratios, and the summed-time speed-up, the
//! rows' summed medians over each other) to `--out` (default
//! `$OUT`, else `.`), with `bench.svg` (median ms per batch against batch
//! size, a panel per query; `--no-plot`: none), rewriting them after every
//! batch so that a run cut short still leaves its results. Without a GPU
//! only the CPU rows run. `--plot-from CSV` runs nothing and draws
//! `bench.svg` from a `bench.csv` (into `--out`, else beside the CSV).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

mod plot;

use clap::Parser;
use csm_baselines::cpu::{count_delta_parallel, Symmetry};
use csm_baselines::registry::{continuous_engine, EngineOptions};
use csm_engine::{Batch, ContinuousMatcher, EdgesApart};
use csm_gpu::cache::{
    CacheSelector, DegreeSelector, DeviceCache, KHopSelector, KernelCache, SamplerSelector, WalkSelector,
};
use csm_gpu::engine::{changed_vertices, launch, prepare, run_cached, run_staged, StagedRun};
use csm_gpu::overlap::{beside, Overlap, OVERLAP_FROM};
use csm_gpu::plan::{SplitPolicy, TaskOptions};
use csm_gpu::resident::{ResidentCache, ResidentLayout, ResidentUse, Slack, UseSample};
use csm_gpu::shared_ptr::SharedPtr;
use csm_gpu::shares::LabelShares;
use csm_gpu::{Budget, DeviceMatcher, Gpu, HostGraph, HostMemory, HotLists, MatcherConfig, QueryPlans};
use csm_graph::gen::{make_stream, standard_query, with_labels, StreamAmount};
use csm_graph::{
    CsrGraph, DynamicGraph, Edge, GraphData, GraphView, Label, LocatedUpdate, Nbrs, Strictness, Update, Version,
    VertexId,
};
use csm_planner::{Executor, GcsmOrder, GraphStats, Level, Plan, QueryGraph, Visitor};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::{json, Value};

/// Zero-copy read rates measured by probe v1 on the H100 (docs/GPU_NOTES.md).
const ZC_SEQ_GBPS: f64 = 51.0;
const ZC_RAND_GBPS: f64 = 14.2;

fn parse_num(s: &str) -> Result<f64, String> {
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1e3),
        Some('m' | 'M') => (&s[..s.len() - 1], 1e6),
        Some('g' | 'G' | 'b' | 'B') => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    num.parse::<f64>()
        .map(|x| x * mul)
        .map_err(|e| format!("bad number `{s}`: {e}"))
}

/// The number after `tag` in an engine name (`suffix_num("gcsm-skip25", "-skip")`
/// = 25), up to the next non-numeric character.
fn suffix_num(engine: &str, tag: &str) -> Option<f64> {
    let rest = engine.split(tag).nth(1)?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Command line (clap); [`Args::check`] checks what clap cannot.
#[derive(Parser, Debug)]
#[command(
    name = "csm-gpu-bench",
    about = "GCSM Sec. VI on one machine: per batch, the CPU engine and the GPU variants \
             (um, zp, vsgm, naive, gcsm, gcsm-persist) on an R-MAT graph",
    after_help = "Engines (--variants): cpu16 (the CPU count's replica, stops at --limit-s), cpu-engine \
                  (csm_baselines' cpu engine), um, zp, vsgm, naive, gcsm, gcsm-sampler, gcsm-persist, \
                  gcsm-persist-whole, gcsm-persist-hot, gcsm-persist-fillN[-slackD], and settings variants made by suffixes: -v2, -v4, -v5, \
                  -v10, -noexp, -nodefer, -nobal, -deep16, -split, -seq, -nomemo, -mminN, -mslotsN, -mdefer, -mlab, -always, -zpath, -bypass, -allshares, \
                  -deferN, -wantN, -sliceN, -dsN, -roundsN, -drainN, -useN, -v17use, -inturn, -overN, gcsm-skipN, gcsm-coldN \
                  (the module documentation says what each does). Numbers take k, M and G suffixes."
)]
struct Args {
    /// Undirected edges of the generated graph.
    #[arg(long, default_value = "500M", value_parser = count::<usize>)]
    edges: usize,
    /// log2 of the vertex count (default: from --edges).
    #[arg(long, value_parser = count::<u32>)]
    scale: Option<u32>,
    /// Vertex labels, assigned uniformly.
    #[arg(long, default_value_t = 8, value_parser = count::<u32>)]
    labels: u32,
    /// Batch sizes (updates).
    #[arg(long, value_delimiter = ',', default_value = "64,1024,8192", value_parser = count::<usize>)]
    sizes: Vec<usize>,
    /// Batches per size.
    #[arg(long, default_value_t = 5, value_parser = count::<usize>)]
    batches: usize,
    /// Queries (standard query names).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "house,5-cycle,prism,hexagon-2chords,7-wheel"
    )]
    queries: Vec<String>,
    /// Engines, in the order they run on each row. The default is the
    /// README's table; `zp-seq` takes the first GPU place, which runs light
    /// rows 0.1-0.3 ms slower than the engines after it (cold caches), so
    /// that the compared engines all come after one.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cpu-engine,zp-seq,um,zp,vsgm,naive,gcsm,gcsm-persist"
    )]
    variants: Vec<String>,
    /// Largest batch vsgm runs on.
    #[arg(long, default_value_t = 64, value_parser = count::<usize>)]
    vsgm_max_batch: usize,
    /// Cache budget as a fraction of the graph's bytes.
    #[arg(long, default_value_t = 0.05, value_parser = number)]
    budget_frac: f64,
    /// Share of the budget gcsm-persist-hot gives its hot lists (match v12).
    #[arg(long, default_value_t = csm_gpu::hot::HOT_FRAC, value_parser = number)]
    hot_frac: f64,
    /// Threads of the CPU engines.
    #[arg(long, default_value_t = 16, value_parser = count::<usize>)]
    threads: usize,
    /// Stop starting rows after this many seconds.
    #[arg(long, default_value_t = 420.0, value_parser = number)]
    deadline_s: f64,
    /// Output folder (default: $OUT, else the current folder).
    #[arg(long)]
    out: Option<PathBuf>,
    /// `--out`, else $OUT, else `.` (set by [`Args::check`]).
    #[arg(skip)]
    out_dir: PathBuf,
    /// Seed of the graph and stream.
    #[arg(long, default_value_t = 2024, value_parser = count::<u64>)]
    seed: u64,
    /// gcsm-sampler's walks per root; gcsm's walks per seed at most.
    #[arg(long, default_value_t = 64, value_parser = count::<u64>)]
    walk_cap: u64,
    /// gcsm's walks per batch at most (0: no cap).
    #[arg(long, default_value_t = 1 << 15, value_parser = count::<u64>)]
    walk_total: u64,
    /// gcsm's estimate and copy, each, at most this fraction of the predicted kernel time (0: off).
    #[arg(long, default_value_t = 0.05, value_parser = number)]
    fe_frac: f64,
    /// Words of a warp's staging area per level.
    #[arg(long, default_value_t = MatcherConfig::default().stage_words, value_parser = count::<u32>)]
    stage_words: u32,
    /// Host lists with an old part this long are searched through windows (0: none).
    #[arg(long, default_value_t = MatcherConfig::default().window_min, value_parser = count::<u32>)]
    window_min: u32,
    /// Largest window (words).
    #[arg(long, default_value_t = MatcherConfig::default().window_max, value_parser = count::<u32>)]
    window_max: u32,
    /// Defer nodes whose iterated list has at least this many elements.
    #[arg(long, default_value_t = MatcherConfig::default().defer_min, value_parser = count::<u32>)]
    defer_min: u32,
    /// Defer a level's node from this many candidates of its label (match v11; 0: --defer-min everywhere).
    #[arg(long, default_value_t = MatcherConfig::default().defer_wanted, value_parser = count::<u32>)]
    defer_wanted: u32,
    /// gcsm skips estimate and copy below this predicted kernel time (ms; default: the selector's).
    #[arg(long, value_parser = number)]
    skip_ms: Option<f64>,
    /// R-MAT quadrant probabilities a,b,c.
    #[arg(long, default_value = "0.45,0.22,0.22", value_parser = rmat_probabilities)]
    rmat: (f64, f64, f64),
    /// Share of the stream's updates that are insertions (the rest delete
    /// edges of the graph); 1 grows every list the stream touches.
    #[arg(long, default_value_t = 0.5, value_parser = probability)]
    insert_prob: f64,
    /// Seconds one engine may spend on one batch.
    #[arg(long, default_value_t = 6.0, value_parser = number)]
    limit_s: f64,
    /// Refresh the resident caches after the host mirror's sync (match v7).
    #[arg(long)]
    refresh_late: bool,
    /// After staging, write every touched list of the host mirrors whole
    /// (`HostGraph::sync`, as before the thirty-sixth session) instead of
    /// only the appended parts and marks of lists whose slots hold their
    /// committed lists (`HostGraph::sync_staged`). The log's "batch done"
    /// lines give both syncs' times.
    #[arg(long)]
    sync_whole: bool,
    /// One graph per query, with only the edges of its label triples.
    #[arg(long)]
    split: bool,
    /// Pause (ms) between a row's CPU engines and its GPU engines.
    #[arg(long, default_value_t = 0.0, value_parser = number)]
    settle_ms: f64,
    /// One empty launch before a row's GPU engines, written to the CSV as engine `wake`.
    #[arg(long)]
    wake: bool,
    /// Before a row's GPU engines, one `zp` run of the row's query whose
    /// figures are not recorded (the first GPU engine of a row runs on cold
    /// caches; match v20).
    #[arg(long)]
    warm_up: bool,
    /// Rotate the order of a row's GPU engines from batch to batch (batch
    /// b starts with the (b mod n)-th of the n): each engine runs first in
    /// some of a row's batches, so the medians mix both places (the first
    /// GPU engine of a row still ran 3-5% slower after `--warm-up`:
    /// thirty-eighth session).
    #[arg(long)]
    rotate: bool,
    /// Do not draw bench.svg (median time per batch size, a panel per query).
    #[arg(long)]
    no_plot: bool,
    /// Run nothing: draw bench.svg into --out from this bench.csv (e.g. one
    /// a device run brought back).
    #[arg(long, value_name = "CSV")]
    plot_from: Option<PathBuf>,
}

/// A number with an optional k / M / G suffix.
fn number(s: &str) -> Result<f64, String> {
    parse_num(s)
}

/// A whole number with an optional k / M / G suffix, of type `T`.
fn count<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    let x = parse_num(s)?;
    if x < 0.0 || x.fract() != 0.0 || x > u64::MAX as f64 {
        return Err(format!("`{s}` is not a whole number"));
    }
    T::try_from(x as u64).map_err(|_| format!("`{s}` is too large"))
}

fn rmat_probabilities(s: &str) -> Result<(f64, f64, f64), String> {
    let p = s
        .split(',')
        .map(|x| parse_num(x.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if p.len() != 3 || p.iter().any(|&x| x < 0.0) || p.iter().sum::<f64>() > 1.0 {
        return Err("--rmat needs a,b,c >= 0 with a+b+c <= 1".into());
    }
    Ok((p[0], p[1], p[2]))
}

/// A probability (0-1), for `--insert-prob`.
fn probability(s: &str) -> Result<f64, String> {
    let p = parse_num(s.trim())?;
    if !(0.0..=1.0).contains(&p) {
        return Err(format!("{s} is not a probability (0 to 1)"));
    }
    Ok(p)
}

impl Args {
    /// Checks what clap cannot and resolves the output folder.
    fn check(mut self) -> Result<Args, String> {
        if self.labels == 0 || self.batches == 0 || self.sizes.is_empty() || self.sizes.contains(&0) {
            return Err("labels, batches and sizes must be positive".into());
        }
        self.out_dir = (self.out.clone())
            .or_else(|| std::env::var_os("OUT").map(PathBuf::from))
            .unwrap_or_else(|| ".".into());
        Ok(self)
    }
}

// ---------------------------------------------------------------------------
// Generation (parallel R-MAT, labels, CSR).
// ---------------------------------------------------------------------------

/// Distinct undirected R-MAT pairs (keys u << 32 | v, u < v), in parallel:
/// the quadrant recursion of csm_graph::gen::rmat with quadrant
/// probabilities (a, b, c), one ChaCha8 stream per chunk, then sort + dedup, with
/// top-up rounds for the duplicates.
fn rmat_keys(scale: u32, edges: usize, (pa, pb, pc): (f64, f64, f64), seed: u64) -> Vec<u64> {
    let t16 = |p: f64| (p * 65_536.0).round() as u32;
    let (ta, tab, tabc) = (t16(pa), t16(pa + pb), t16(pa + pb + pc));
    let draw = |count: usize, round: u64| -> Vec<u64> {
        let chunks = 1024usize;
        let per = count.div_ceil(chunks);
        (0..chunks)
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed ^ round.wrapping_mul(0x9e37_79b9));
                rng.set_stream(c as u64);
                let n = per.min(count.saturating_sub(c * per));
                (0..n).filter_map(move |_| {
                    let (mut u, mut v) = (0u32, 0u32);
                    let mut bits = 0u64;
                    for level in 0..scale {
                        if level % 4 == 0 {
                            bits = rng.next_u64();
                        }
                        let r = (bits & 0xFFFF) as u32;
                        bits >>= 16;
                        let du = u32::from(r >= tab);
                        let dv = u32::from((r >= ta) & (r < tab)) | u32::from(r >= tabc);
                        u = (u << 1) | du;
                        v = (v << 1) | dv;
                    }
                    (u != v).then(|| {
                        let (a, b) = (u.min(v), u.max(v));
                        (u64::from(a) << 32) | u64::from(b)
                    })
                })
            })
            .collect()
    };
    let mut keys = draw(edges, 0);
    keys.par_sort_unstable();
    keys.dedup();
    for round in 1..=3u64 {
        if keys.len() >= edges {
            break;
        }
        let missing = edges - keys.len();
        let mut more = draw(missing + missing / 4 + 16, round);
        more.par_sort_unstable();
        more.dedup();
        let mut merged = Vec::with_capacity(keys.len() + more.len());
        let (mut i, mut j) = (0, 0);
        while i < keys.len() || j < more.len() {
            let x = if j >= more.len() || (i < keys.len() && keys[i] <= more[j]) {
                i += 1;
                keys[i - 1]
            } else {
                j += 1;
                more[j - 1]
            };
            if merged.last() != Some(&x) {
                merged.push(x);
            }
        }
        keys = merged;
    }
    if keys.len() > edges {
        // Drop the excess at evenly spread positions (keys are sorted, so a
        // plain truncate would bias towards small ids).
        let excess = keys.len() - edges;
        let step = keys.len() as f64 / excess as f64;
        let mut drop = vec![false; keys.len()];
        for k in 0..excess {
            drop[((k as f64 + 0.5) * step) as usize] = true;
        }
        let mut i = 0;
        keys.retain(|_| {
            i += 1;
            !drop[i - 1]
        });
    }
    keys
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A plain CSR built in parallel, viewed through [`GraphView`].
struct ParCsr {
    labels: Vec<Label>,
    offsets: Vec<u64>,
    nbrs: Vec<VertexId>,
    max_degree: usize,
}

impl ParCsr {
    fn build(labels: Vec<Label>, edges: &[Edge]) -> ParCsr {
        let n = labels.len();
        let deg: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        edges.par_iter().for_each(|e| {
            deg[e.u as usize].fetch_add(1, Ordering::Relaxed);
            deg[e.v as usize].fetch_add(1, Ordering::Relaxed);
        });
        let mut offsets = Vec::with_capacity(n + 1);
        let mut t = 0u64;
        offsets.push(0);
        for d in &deg {
            t += u64::from(d.load(Ordering::Relaxed));
            offsets.push(t);
        }
        let cursor: Vec<AtomicU64> = offsets[..n].iter().map(|&o| AtomicU64::new(o)).collect();
        let mut nbrs = vec![0u32; t as usize];
        let p = SharedPtr(nbrs.as_mut_ptr());
        edges.par_iter().for_each(|e| {
            for (a, b) in [(e.u, e.v), (e.v, e.u)] {
                let i = cursor[a as usize].fetch_add(1, Ordering::Relaxed);
                // SAFETY: each slot index is handed out once, below t.
                unsafe { *p.get().add(i as usize) = b };
            }
        });
        let max_degree = (0..n)
            .into_par_iter()
            .map(|v| {
                let (s, e) = (offsets[v] as usize, offsets[v + 1] as usize);
                // SAFETY: vertex ranges are disjoint.
                let list = unsafe { std::slice::from_raw_parts_mut(p.get().add(s), e - s) };
                list.sort_unstable();
                e - s
            })
            .max()
            .unwrap_or(0);
        ParCsr {
            labels,
            offsets,
            nbrs,
            max_degree,
        }
    }
}

impl GraphView for ParCsr {
    fn num_vertices(&self) -> usize {
        self.labels.len()
    }
    fn labels(&self) -> &[Label] {
        &self.labels
    }
    fn nbrs(&self, v: VertexId, _ver: Version) -> Nbrs<'_> {
        let (s, e) = (self.offsets[v as usize] as usize, self.offsets[v as usize + 1] as usize);
        Nbrs::plain(&self.nbrs[s..e], &[])
    }
    fn edge_labelled(&self) -> bool {
        false
    }
    fn max_degree(&self) -> usize {
        self.max_degree
    }
}

// ---------------------------------------------------------------------------
// Running.
// ---------------------------------------------------------------------------

struct Row {
    size: usize,
    batch: usize,
    query: String,
    engine: String,
    positive: u64,
    negative: u64,
    seconds: f64,
    fe: f64,
    dc: f64,
    kernel: f64,
    host_bytes: u64,
    cache_bytes: usize,
    cache_vertices: usize,
    seeds: u64,
    tasks: u64,
    split: f64,
    /// Seconds finding the batch's seeds.
    seeds_time: f64,
    nodes: u64,
    host_lists: u64,
    cached_lists: u64,
    staged_lists: u64,
    /// Tasks the kernel deferred (heavy nodes, match v5).
    deferred: u64,
    /// Wall time of the matcher's run (uploads, launches, their waits):
    /// beyond `kernel`, launch latency, queued work and device wake-up.
    kernel_wall: f64,
    /// Its parts: uploads, launches (host time to the end event's wait),
    /// downloads of the output words.
    upload: f64,
    launch_wall: f64,
    download: f64,
    launches: u32,
    /// Last-level memo hits and misses (match v17).
    memo_hits: u64,
    memo_misses: u64,
    ok: bool,
    /// A CPU count was available to compare with.
    verified: bool,
    error: String,
}

impl Row {
    fn failed(size: usize, batch: usize, query: &str, engine: &str, error: String) -> Row {
        Row {
            size,
            batch,
            query: query.to_string(),
            engine: engine.to_string(),
            positive: 0,
            negative: 0,
            seconds: f64::NAN,
            fe: 0.0,
            dc: 0.0,
            kernel: 0.0,
            host_bytes: 0,
            cache_bytes: 0,
            cache_vertices: 0,
            seeds: 0,
            tasks: 0,
            split: 0.0,
            seeds_time: 0.0,
            nodes: 0,
            host_lists: 0,
            cached_lists: 0,
            staged_lists: 0,
            deferred: 0,
            kernel_wall: 0.0,
            upload: 0.0,
            launch_wall: 0.0,
            download: 0.0,
            launches: 0,
            memo_hits: 0,
            memo_misses: 0,
            ok: false,
            verified: false,
            error,
        }
    }

    fn csv_header() -> &'static str {
        "size,batch,query,engine,positive,negative,seconds,fe_seconds,dc_seconds,kernel_seconds,\
         host_bytes,cache_bytes,cache_vertices,seeds,tasks,split_seconds,seeds_seconds,nodes,host_lists,cached_lists,staged_lists,deferred,kernel_wall_seconds,upload_seconds,launch_wall_seconds,download_seconds,launches,memo_hits,memo_misses,ok,verified,error"
    }
    fn csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{},{},{},{},{},{:.6},{:.6},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{},{},{},{},{},\"{}\"",
            self.size,
            self.batch,
            self.query,
            self.engine,
            self.positive,
            self.negative,
            self.seconds,
            self.fe,
            self.dc,
            self.kernel,
            self.host_bytes,
            self.cache_bytes,
            self.cache_vertices,
            self.seeds,
            self.tasks,
            self.split,
            self.seeds_time,
            self.nodes,
            self.host_lists,
            self.cached_lists,
            self.staged_lists,
            self.deferred,
            self.kernel_wall,
            self.upload,
            self.launch_wall,
            self.download,
            self.launches,
            self.memo_hits,
            self.memo_misses,
            self.ok,
            self.verified,
            self.error.replace('"', "'")
        )
    }
    fn json(&self) -> Value {
        json!({"size": self.size, "batch": self.batch, "query": self.query, "engine": self.engine,
               "positive": self.positive, "negative": self.negative, "seconds": self.seconds,
               "fe_seconds": self.fe, "dc_seconds": self.dc, "kernel_seconds": self.kernel,
               "host_bytes": self.host_bytes, "host_bytes_kind": "counted",
               "cache_bytes": self.cache_bytes, "cache_vertices": self.cache_vertices,
               "seeds": self.seeds, "tasks": self.tasks, "split_seconds": self.split, "seeds_seconds": self.seeds_time, "nodes": self.nodes, "host_lists": self.host_lists,
               "cached_lists": self.cached_lists, "staged_lists": self.staged_lists, "deferred": self.deferred,
               "kernel_wall_seconds": self.kernel_wall, "upload_seconds": self.upload,
               "launch_wall_seconds": self.launch_wall, "download_seconds": self.download, "launches": self.launches, "memo_hits": self.memo_hits, "memo_misses": self.memo_misses, "ok": self.ok, "verified": self.verified, "error": self.error})
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median of `f` over the successful batches of `engine` in row `key`
/// (batch size, query); NaN when there are none.
fn row_median(rows: &[Row], key: (usize, &str), engine: &str, f: &dyn Fn(&Row) -> f64) -> f64 {
    median(
        rows.iter()
            .filter(|r| (r.size, r.query.as_str()) == key && r.engine == engine && r.error.is_empty())
            .map(f)
            .collect(),
    )
}

fn fmt_ms(s: f64) -> String {
    if s.is_nan() {
        "-".into()
    } else {
        format!("{:.2}", s * 1e3)
    }
}

/// A sync's steps in ms, "decide / place / write / upload".
fn fmt_steps(t: &csm_gpu::host_graph::SyncTiming) -> String {
    format!(
        "{:.2} / {:.2} / {:.2} / {:.2}",
        t.decide * 1e3,
        t.place * 1e3,
        t.write * 1e3,
        t.upload * 1e3
    )
}

fn fmt_bytes(b: f64) -> String {
    if b.is_nan() {
        "-".into()
    } else if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.0} kB", b / 1e3)
    }
}

/// Summary per (size, query): median per engine over the batches.
fn summary(rows: &[Row], engines: &[String]) -> (String, Value) {
    let mut keys: Vec<(usize, String)> = rows.iter().map(|r| (r.size, r.query.clone())).collect();
    keys.dedup();
    let mut md = String::new();
    let mut js = Vec::new();
    let _ = writeln!(
        md,
        "| batch | query | {} | gcsm FE ms | gcsm DC ms | gcsm kernel ms | host bytes zp | host bytes gcsm | gcsm/zp | gcsm/cpu16 | ok |",
        engines.iter().map(|e| format!("{e} ms")).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(md, "|{}", "---|".repeat(engines.len() + 10));
    let mut seen = std::collections::HashSet::new();
    for (size, q) in keys {
        if !seen.insert((size, q.clone())) {
            continue;
        }
        let med = |e: &str, f: &dyn Fn(&Row) -> f64| row_median(rows, (size, &q), e, f);
        let t: Vec<f64> = engines.iter().map(|e| med(e, &|r| r.seconds)).collect();
        let ok = rows
            .iter()
            .filter(|r| r.size == size && r.query == q)
            .all(|r| r.ok || !r.error.is_empty());
        let g = med("gcsm", &|r| r.seconds);
        let zp = med("zp", &|r| r.seconds);
        let cpu = med("cpu16", &|r| r.seconds);
        let fe = med("gcsm", &|r| r.fe);
        let dc = med("gcsm", &|r| r.dc);
        let k = med("gcsm", &|r| r.kernel);
        let hz = med("zp", &|r| r.host_bytes as f64);
        let hg = med("gcsm", &|r| r.host_bytes as f64);
        let errs: Vec<String> = engines
            .iter()
            .filter(|e| {
                rows.iter()
                    .any(|r| r.size == size && r.query == q && &r.engine == *e && !r.error.is_empty())
            })
            .cloned()
            .collect();
        let _ = writeln!(
            md,
            "| {size} | {q} | {} | {} | {} | {} | {} | {} | {} | {} | {}{} |",
            t.iter().map(|&x| fmt_ms(x)).collect::<Vec<_>>().join(" | "),
            fmt_ms(fe),
            fmt_ms(dc),
            fmt_ms(k),
            fmt_bytes(hz),
            fmt_bytes(hg),
            if g > 0.0 { format!("{:.2}x", zp / g) } else { "-".into() },
            if g > 0.0 {
                format!("{:.2}x", cpu / g)
            } else {
                "-".into()
            },
            if ok { "yes" } else { "MISMATCH" },
            if errs.is_empty() {
                String::new()
            } else {
                format!(" (err: {})", errs.join(","))
            }
        );
        let mut per = serde_json::Map::new();
        for (e, &x) in engines.iter().zip(&t) {
            let kernel = med(e, &|r| r.kernel);
            let fe = med(e, &|r| r.fe);
            let dc = med(e, &|r| r.dc);
            let hb = med(e, &|r| r.host_bytes as f64);
            let split = med(e, &|r| r.split);
            let seeds = med(e, &|r| r.seeds_time);
            per.insert(
                e.clone(),
                json!({
                    "seconds": x, "kernel_seconds": kernel, "fe_seconds": fe, "dc_seconds": dc,
                    "split_seconds": split, "seeds_seconds": seeds,
                    "other_seconds": x - kernel.max(0.0) - fe.max(0.0) - dc.max(0.0) - split.max(0.0) - seeds.max(0.0),
                    "host_bytes": hb,
                    "zero_copy_floor_seq_seconds": hb / (ZC_SEQ_GBPS * 1e9),
                    "zero_copy_floor_rand_seconds": hb / (ZC_RAND_GBPS * 1e9),
                    "effective_host_gbps": hb / kernel / 1e9,
                }),
            );
        }
        js.push(json!({"size": size, "query": q, "engines": per,
                       "speedup_gcsm_over_zp": zp / g, "speedup_gcsm_over_cpu16": cpu / g,
                       "counts_agree": ok}));
    }
    (md, Value::Array(js))
}

/// The baselines every other engine's time is compared with in
/// [`mean_ratios`], in this order.
const BASELINES: [&str; 3] = ["zp", "cpu16", "cpu-engine"];

/// One line of [`mean_ratios`]: how many times quicker `engine` was than
/// `baseline`, as the mean over (size, query) rows of the ratio of their
/// median batch times, over all rows and per batch size.
#[derive(Debug, PartialEq)]
struct MeanRatio {
    engine: String,
    baseline: String,
    rows: usize,
    mean: f64,
    /// The same rows' summed baseline medians over the engine's: the
    /// speed-up of a stream that runs every row once (heavy rows weigh
    /// more than in `mean`).
    summed: f64,
    by_size: Vec<(usize, f64)>,
}

/// Every engine's speed-up over each baseline of [`BASELINES`] that ran
/// beside it (a baseline over those listed after it): the issue's goals (gcsm against zp and against the 16-thread
/// CPU engine) are means over rows of per-row ratios, measured in one run.
/// Rows where either engine has no successful batch are left out.
fn mean_ratios(rows: &[Row], engines: &[String]) -> Vec<MeanRatio> {
    let mut keys: Vec<(usize, &str)> = rows.iter().map(|r| (r.size, r.query.as_str())).collect();
    keys.sort_unstable();
    keys.dedup();
    let med = |e: &str, k: (usize, &str)| row_median(rows, k, e, &|r| r.seconds);
    let mut out = Vec::new();
    for base in BASELINES.iter().filter(|b| engines.iter().any(|e| e == *b)) {
        // other engines, and the baselines listed before this one (zp over
        // the CPU engines, the replica over the engine itself)
        let before = |e: &str| BASELINES.iter().position(|b| *b == e) < BASELINES.iter().position(|b| b == base);
        let not_base = |e: &str| !BASELINES.contains(&e);
        for e in engines.iter().filter(|e| not_base(e) || before(e)) {
            let both: Vec<(usize, f64, f64)> = keys
                .iter()
                .map(|&k| (k.0, med(base, k), med(e, k)))
                .filter(|(_, b, t)| (b / t).is_finite() && b / t > 0.0)
                .collect();
            let per: Vec<(usize, f64)> = both.iter().map(|&(s, b, t)| (s, b / t)).collect();
            if per.is_empty() {
                continue;
            }
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let mut sizes: Vec<usize> = per.iter().map(|p| p.0).collect();
            sizes.dedup();
            out.push(MeanRatio {
                engine: e.clone(),
                baseline: base.to_string(),
                rows: per.len(),
                mean: mean(&per.iter().map(|p| p.1).collect::<Vec<_>>()),
                summed: both.iter().map(|x| x.1).sum::<f64>() / both.iter().map(|x| x.2).sum::<f64>(),
                by_size: sizes
                    .into_iter()
                    .map(|s| {
                        let v: Vec<f64> = per.iter().filter(|p| p.0 == s).map(|p| p.1).collect();
                        (s, mean(&v))
                    })
                    .collect(),
            });
        }
    }
    out
}

/// [`mean_ratios`] as a markdown table.
fn ratios_md(ratios: &[MeanRatio]) -> String {
    let mut md = String::from(
        "| engine | over | rows | mean speed-up | summed-time speed-up | by batch size |\n|---|---|---|---|---|---|\n",
    );
    for r in ratios {
        let by: Vec<String> = r.by_size.iter().map(|(s, x)| format!("{s}: {x:.2}x")).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.2}x | {:.2}x | {} |",
            r.engine,
            r.baseline,
            r.rows,
            r.mean,
            r.summed,
            by.join(", ")
        );
    }
    md
}

/// `bench.svg` from the rows (the `wake` probe left out); a failure is
/// reported, not fatal.
fn write_plot(out: &std::path::Path, rows: &[Row]) {
    let samples = rows
        .iter()
        .filter(|r| r.engine != "wake")
        .map(|r| (r.size, r.query.clone(), r.engine.clone(), r.seconds, r.error.is_empty()));
    let points = plot::medians(samples);
    if points.is_empty() {
        return;
    }
    if let Err(e) = plot::write_svg(&out.join("bench.svg"), &points, "csm-gpu-bench: median time per batch") {
        eprintln!("csm-gpu-bench: {e}");
    }
}

/// `--plot-from`: bench.svg into `out` from a bench.csv.
fn plot_from(csv: &std::path::Path, out: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    let samples = plot::samples_from_csv(&text).map_err(|e| format!("{}: {e}", csv.display()))?;
    let points = plot::medians(samples.into_iter().filter(|s| s.2 != "wake"));
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let path = out.join("bench.svg");
    plot::write_svg(&path, &points, &format!("csm-gpu-bench: {}", csv.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

fn write_outputs(out: &std::path::Path, setup: &Value, rows: &[Row], engines: &[String], plot: bool) {
    let _ = std::fs::create_dir_all(out);
    let mut csv = String::from(Row::csv_header());
    csv.push('\n');
    for r in rows {
        csv.push_str(&r.csv());
        csv.push('\n');
    }
    let _ = std::fs::write(out.join("bench.csv"), csv);
    let (md, sum) = summary(rows, engines);
    let ratios = mean_ratios(rows, engines);
    let _ = std::fs::write(out.join("bench.md"), format!("{md}\n{}", ratios_md(&ratios)));
    let ratios: Vec<Value> = ratios
        .iter()
        .map(|r| {
            json!({"engine": r.engine, "baseline": r.baseline, "rows": r.rows, "mean_speedup": r.mean,
                   "summed_speedup": r.summed,
                   "by_size": r.by_size.iter().map(|(s, x)| json!({"size": s, "mean_speedup": x})).collect::<Vec<_>>()})
        })
        .collect();
    let doc = json!({"setup": setup, "rows": rows.iter().map(Row::json).collect::<Vec<_>>(), "summary": sum,
                     "mean_ratios": ratios});
    let _ = std::fs::write(
        out.join("bench.json"),
        serde_json::to_string_pretty(&doc).unwrap_or_default(),
    );
    if plot {
        write_plot(out, rows);
    }
}

fn log(t0: Instant, msg: impl AsRef<str>) {
    println!("[{:7.1}s] {}", t0.elapsed().as_secs_f64(), msg.as_ref());
    let _ = std::io::stdout().flush();
}

struct GpuSide<'m> {
    gpu: Arc<Gpu>,
    matcher: &'m mut DeviceMatcher,
    cache: DeviceCache,
    pinned: HostGraph,
    managed: Option<HostGraph>,
    /// The resident caches of `gcsm-persist` and `gcsm-persist-whole`
    /// (match v7), by engine name.
    resident: Vec<(String, ResidentCache)>,
    /// Per resident cache, its hot-list area (match v12; only
    /// `gcsm-persist-hot` has one).
    hot: Vec<Option<HotLists>>,
}

fn main() {
    let cli = Args::parse();
    if let Some(csv) = cli.plot_from.clone() {
        let out = cli
            .out
            .clone()
            .or_else(|| csv.parent().map(|p| p.to_path_buf()))
            .unwrap_or_else(|| ".".into());
        if let Err(e) = plot_from(&csv, &out) {
            eprintln!("csm-gpu-bench: {e}");
            std::process::exit(1);
        }
        return;
    }
    let args = match cli.check() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("csm-gpu-bench: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(args) {
        eprintln!("csm-gpu-bench: {e}");
        std::process::exit(1);
    }
}

/// The warning for a variant list whose first GPU engine is one the
/// tables compare (`zp` or a `gcsm` variant) with no `--warm-up`: that
/// engine runs each row's light batches on cold caches (match v20).
fn first_place_warning(variants: &[String], warm_up: bool) -> Option<String> {
    if warm_up {
        return None;
    }
    let first = variants
        .iter()
        .find(|e| !["cpu16", "cpu-engine"].contains(&e.as_str()))?;
    (first == "zp" || first.starts_with("gcsm")).then(|| {
        format!(
            "warning: `{first}` is the first GPU engine of every row: it runs light rows on caches the \
             engines after it find warm (0.1-0.3 ms on 64-update rows), so its ratios are off; put a \
             sacrificial engine first (e.g. zp-seq) or pass --warm-up"
        )
    })
}

fn run(a: Args) -> Result<(), String> {
    let t0 = Instant::now();
    if let Some(w) = first_place_warning(&a.variants, a.warm_up) {
        eprintln!("{w}");
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.max(1))
        .build_global()
        .map_err(|e| e.to_string())?;
    let scale = a
        .scale
        .unwrap_or_else(|| ((a.edges as f64 / 16.0).log2().round() as u32).clamp(4, 30));
    let n = 1usize << scale;
    log(
        t0,
        format!(
            "R-MAT{:?} scale {scale} ({n} vertices), {} edges requested, {} labels, {} threads",
            a.rmat, a.edges, a.labels, a.threads
        ),
    );

    let t = Instant::now();
    let keys = rmat_keys(scale, a.edges, a.rmat, a.seed);
    let gen_s = t.elapsed().as_secs_f64();
    log(t0, format!("generated {} distinct edges in {gen_s:.1} s", keys.len()));
    let t = Instant::now();
    let labels: Vec<Label> = (0..n as u64)
        .into_par_iter()
        .map(|v| (splitmix(a.seed ^ v) % u64::from(a.labels)) as Label)
        .collect();
    let edges: Vec<Edge> = keys
        .par_iter()
        .map(|&k| Edge::new((k >> 32) as u32, k as u32, 0))
        .collect();
    drop(keys);
    let g = GraphData {
        labels,
        edges,
        edge_labelled: false,
    };
    let total_updates: usize = a.sizes.iter().map(|s| s * a.batches).sum();
    let (g0, stream) = make_stream(&g, StreamAmount::Count(total_updates), a.insert_prob, a.seed ^ 1);
    drop(g);
    let stream_s = t.elapsed().as_secs_f64();
    log(t0, format!("stream of {} updates in {stream_s:.1} s", stream.len()));
    let engines: Vec<String> = a.variants.clone();
    let mut setup = json!({
        "edges_requested": a.edges, "scale": scale, "vertices": n,
        "labels": a.labels, "sizes": a.sizes, "batches": a.batches, "queries": a.queries,
        "engines": engines, "budget_fraction": a.budget_frac, "threads": a.threads,
        "generate_seconds": gen_s, "stream_seconds": stream_s,
        "walk_cap": a.walk_cap, "walk_total": a.walk_total, "fe_frac": a.fe_frac, "stage_words": a.stage_words, "window_min": a.window_min, "window_max": a.window_max, "defer_min": a.defer_min, "defer_wanted": a.defer_wanted, "skip_ms": a.skip_ms, "rmat": [a.rmat.0, a.rmat.1, a.rmat.2], "insert_prob": a.insert_prob,
        "split": a.split, "warm_up": a.warm_up, "rotate": a.rotate,
        "zero_copy_gbps": {"sequential": ZC_SEQ_GBPS, "random_128B": ZC_RAND_GBPS},
    });
    let queries: Vec<(String, QueryGraph)> = a
        .queries
        .iter()
        .map(|name| bench_query(name, a.labels).map(|q| (name.clone(), q)))
        .collect::<Result<_, _>>()?;

    // GPU side (optional): the device and its matcher, shared by every graph.
    let mut device = match Gpu::open(0) {
        Ok(gpu) => {
            let gpu = Arc::new(gpu);
            let matcher = DeviceMatcher::new(
                gpu.clone(),
                MatcherConfig {
                    stage_words: a.stage_words,
                    window_min: a.window_min,
                    window_max: a.window_max,
                    defer_min: a.defer_min,
                    defer_wanted: a.defer_wanted,
                    ..MatcherConfig::default()
                },
            )
            .map_err(|e| e.to_string())?;
            setup["gpu"] = json!(gpu.info());
            setup["grid_blocks"] = json!(matcher.blocks());
            Some((gpu, matcher))
        }
        Err(e) => {
            log(t0, format!("no GPU ({e}): only the CPU rows run"));
            setup["gpu"] = json!(null);
            None
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.max(1))
        .build()
        .map_err(|e| e.to_string())?;
    let mut run = Run {
        a: &a,
        t0,
        engines,
        setup,
        rows: Vec::new(),
        pool,
    };
    if a.split {
        // One graph per query: the edges of its label triples (what
        // `csm stream` keeps in the graph it matches on), and per batch the
        // updates of those edges; the others cannot change its matches.
        for (name, q) in &queries {
            let filter = EdgesApart::query_filter(q);
            let t = Instant::now();
            let labels = &g0.labels;
            let keeps = |u: VertexId, v: VertexId| filter.keeps(labels[u as usize], labels[v as usize], 0);
            let edges: Vec<Edge> = g0.edges.par_iter().filter(|e| keeps(e.u, e.v)).copied().collect();
            log(
                t0,
                format!(
                    "{name}: {} of {} edges kept (its label triples) in {:.1} s",
                    edges.len(),
                    g0.edges.len(),
                    t.elapsed().as_secs_f64()
                ),
            );
            let kept = |u: &LocatedUpdate| match u.update {
                Update::AddEdge(e) | Update::RemoveEdge(e) => keeps(e.u, e.v),
                _ => true,
            };
            let one = [(name.clone(), q.clone())];
            if run.graph(Some(name), g0.labels.clone(), edges, &stream, &kept, &one, &mut device)? {
                break;
            }
        }
    } else {
        let GraphData { labels, edges, .. } = g0;
        run.graph(None, labels, edges, &stream, &|_| true, &queries, &mut device)?;
    }
    run.finish()
}

/// Standard query `name` with vertex `i` labelled `i mod labels`.
fn bench_query(name: &str, labels: u32) -> Result<QueryGraph, String> {
    let q = standard_query(name).ok_or_else(|| format!("unknown query {name}"))?;
    let l: Vec<Label> = (0..q.labels.len() as u32).map(|i| i % labels).collect();
    QueryGraph::from_data(&with_labels(&q, &l)).map_err(|e| e.to_string())
}

/// A bench run: its arguments, the rows so far and where they go.
struct Run<'a> {
    a: &'a Args,
    t0: Instant,
    engines: Vec<String>,
    setup: Value,
    rows: Vec<Row>,
    /// The CPU engine's pool (`--threads`).
    pool: rayon::ThreadPool,
}

impl Run<'_> {
    fn write(&self) {
        write_outputs(&self.a.out_dir, &self.setup, &self.rows, &self.engines, !self.a.no_plot);
    }

    /// Writes the final outputs and prints the summary; an error when a GPU
    /// count disagreed with the CPU engine's.
    fn finish(mut self) -> Result<(), String> {
        self.setup["total_seconds"] = json!(self.t0.elapsed().as_secs_f64());
        self.write();
        let (md, _) = summary(&self.rows, &self.engines);
        println!("\nmedian per-batch times (ms) and GCSM figures; host bytes = counted zero-copy bytes\n");
        println!("{md}");
        println!("speed-ups over the baselines: means over rows of per-row median ratios\n");
        println!("{}", ratios_md(&mean_ratios(&self.rows, &self.engines)));
        let bad = self.rows.iter().filter(|r| !r.ok && r.error.is_empty()).count();
        if bad > 0 {
            return Err(format!("{bad} GPU rows disagree with the CPU engine"));
        }
        Ok(())
    }

    /// Runs every batch of `stream` (the updates `kept` keeps of each) for
    /// `queries` on the graph of `labels` and `edges`, every engine. `key`
    /// names the graph in the setup (`--split`: the query); without it the
    /// graph's figures go to the setup's top level. Returns whether the
    /// deadline stopped the run.
    #[allow(clippy::too_many_arguments)]
    fn graph(
        &mut self,
        key: Option<&str>,
        labels: Vec<Label>,
        edges: Vec<Edge>,
        stream: &[LocatedUpdate],
        kept: &(dyn Fn(&LocatedUpdate) -> bool + Sync),
        queries: &[(String, QueryGraph)],
        device: &mut Option<(Arc<Gpu>, DeviceMatcher)>,
    ) -> Result<bool, String> {
        let a = self.a;
        let t0 = self.t0;
        let mut gsetup = json!({});
        let t = Instant::now();
        let m0 = edges.len();
        // `cpu-engine`: the CPU engine itself, one per query on its own copy
        // of this graph (the `cpu16` rows are a replica of its batch count
        // that can stop at `--limit-s`, but it does not read hub lists by
        // label as the engine does)
        let mut cpu_engines: Vec<Box<dyn ContinuousMatcher>> = Vec::new();
        if self.engines.iter().any(|e| e == "cpu-engine") {
            let data = GraphData {
                labels: labels.clone(),
                edges: edges.clone(),
                edge_labelled: false,
            };
            let opts = EngineOptions {
                threads: a.threads,
                ..EngineOptions::default()
            };
            // on the whole graph, like the GPU engines (`cpu-whole`)
            let name = if key.is_some() { "cpu" } else { "cpu-whole" };
            for (_, q) in queries {
                let mut e = continuous_engine(name, &opts).map_err(|e| e.to_string())?;
                e.init(&data, q).map_err(|e| e.to_string())?;
                cpu_engines.push(e);
            }
        }
        let csr = ParCsr::build(labels, &edges);
        drop(edges);
        let snap = CsrGraph::from_view(&csr, Version::New);
        drop(csr);
        let mut graph = DynamicGraph::from_csr(&snap);
        drop(snap);
        let build_s = t.elapsed().as_secs_f64();
        log(
            t0,
            format!(
                "G0{}: {m0} edges, max degree {}, dynamic graph built in {build_s:.1} s",
                key.map(|k| format!(" of {k}")).unwrap_or_default(),
                graph.max_degree()
            ),
        );
        gsetup["edges_g0"] = json!(m0);
        gsetup["max_degree"] = json!(graph.max_degree());
        gsetup["build_seconds"] = json!(build_s);
        let engines = self.engines.clone();
        let want = |e: &str| engines.iter().any(|x| x == e);

        // GPU side (optional): this graph's host copies and caches.
        let t = Instant::now();
        let mut gpu_side = match device.as_mut() {
            Some((gpu, matcher)) => {
                let gpu = gpu.clone();
                let pinned =
                    HostGraph::build(gpu.clone(), &graph, HostMemory::Pinned, true).map_err(|e| e.to_string())?;
                let managed = if want("um") {
                    match HostGraph::build(gpu.clone(), &graph, HostMemory::Managed, true) {
                        Ok(h) => Some(h),
                        Err(e) => {
                            log(t0, format!("UM disabled: {e}"));
                            None
                        }
                    }
                } else {
                    None
                };
                log(
                    t0,
                    format!(
                        "GPU {}: {} blocks x 128 threads, scratch {}, host graph {} ({} allocated) in {:.1} s",
                        gpu.info().name,
                        matcher.blocks(),
                        fmt_bytes(matcher.scratch_bytes() as f64),
                        fmt_bytes(pinned.graph_bytes() as f64),
                        fmt_bytes(pinned.allocated_bytes() as f64),
                        t.elapsed().as_secs_f64()
                    ),
                );
                gsetup["host_graph_seconds"] = json!(t.elapsed().as_secs_f64());
                gsetup["graph_bytes"] = json!(pinned.graph_bytes());
                Some(GpuSide {
                    gpu,
                    matcher,
                    cache: DeviceCache::new(),
                    pinned,
                    managed,
                    resident: Vec::new(),
                    hot: Vec::new(),
                })
            }
            None => None,
        };
        let graph_bytes = gpu_side.as_ref().map_or(0, |s| s.pinned.graph_bytes());
        let budget = Budget::Fraction(a.budget_frac).resolve(graph_bytes);
        let vsgm_budget = gpu_side
            .as_ref()
            .and_then(|s| s.gpu.mem_info().ok())
            .map_or(0, |m| m.free / 2);
        gsetup["budget_bytes"] = json!(budget);
        // gcsm-persist (match v7): the resident cache is filled once, with the
        // graph (not counted per batch, like the host graph's own copy); each
        // batch then re-copies the cached lists it and the last batch changed,
        // and that refresh is charged to every gcsm-persist row of the batch.
        if let Some(s) = gpu_side.as_mut() {
            // "gcsm-persist-fillN[-slackD]": its own cache, its slots in N%
            // of the budget, each with len / D + 8 entries of slack (D 0: 8
            // only; default 8)
            let filled: Vec<&str> = engines
                .iter()
                .map(|e| e.as_str())
                .filter(|e| e.starts_with("gcsm-persist-fill"))
                .collect();
            let own: Vec<&str> = [
                "gcsm-persist",
                "gcsm-persist-whole",
                "gcsm-persist-v7",
                "gcsm-persist-v8",
                "gcsm-persist-par",
                "gcsm-persist-hot",
                "gcsm-persist-v21",
            ]
            .into_iter()
            .chain(filled.iter().copied())
            .collect();
            // the settings variants (`gcsm-persist-nomemo`, ...) run on the
            // default cache, made for them when `gcsm-persist` is not a row
            // itself
            let variants = engines
                .iter()
                .any(|e| e.starts_with("gcsm-persist-") && !own.contains(&e.as_str()));
            for &name in &own {
                let for_variants = name == "gcsm-persist" && variants;
                if !want(name) && !for_variants {
                    continue;
                }
                // Match v12: gcsm-persist-hot gives `hot_frac` of the budget
                // to the batch's hot lists and the rest to the resident set.
                let hot_frac = if name == "gcsm-persist-hot" { a.hot_frac } else { 0.0 };
                let (hot_bytes, resident_bytes) = csm_gpu::hot::split_budget(budget, hot_frac);
                let t = Instant::now();
                let ranked = csm_gpu::cache::top_degree(&graph, 1 << 20);
                let rank_s = t.elapsed().as_secs_f64();
                let fill = suffix_num(name, "-fill").map_or(ResidentCache::FILL, |p| p / 100.0);
                let slack = suffix_num(name, "-slack").map_or(Slack::default(), |d| Slack {
                    div: d as usize,
                    ..Slack::default()
                });
                let (mut c, load) = ResidentCache::build_with(&s.gpu, &graph, &ranked, resident_bytes, fill, slack)
                    .map_err(|e| e.to_string())?;
                let hot = if hot_bytes > 0 {
                    Some(HotLists::new(s.gpu.clone(), hot_bytes).map_err(|e| e.to_string())?)
                } else {
                    None
                };
                c.set_whole_only(name.ends_with("-whole"));
                if name.ends_with("-v7") {
                    // Match v7's refresh: slices handed to cudarc (its event
                    // tracking), bookkeeping on the calling thread.
                    c.tracked_launches = true;
                    c.set_serial_below(usize::MAX);
                }
                if name.ends_with("-par") {
                    // Bookkeeping on rayon's pool from 128 refreshed slots (tried
                    // in match v8, off by default).
                    c.set_serial_below(128);
                }
                log(
                t0,
                format!(
                    "{name}: resident cache of {} lists, {} of {} in {:.1} ms (ranking {:.1} ms; not counted per batch)",
                    c.layout().live(),
                    fmt_bytes(load.bytes as f64),
                    fmt_bytes(c.layout().bytes() as f64),
                    load.seconds * 1e3,
                    rank_s * 1e3
                ),
            );
                gsetup[format!("{name}_fill_seconds")] = json!(load.seconds);
                gsetup["resident_rank_seconds"] = json!(rank_s);
                gsetup["resident_lists"] = json!(c.layout().live());
                gsetup["resident_bytes"] = json!(c.layout().bytes());
                gsetup[format!("{name}_hot_bytes")] = json!(hot_bytes);
                s.resident.push((name.to_string(), c));
                s.hot.push(hot);
            }
        }
        gsetup["vsgm_budget_bytes"] = json!(vsgm_budget);

        // Queries.
        let stats = GraphStats::of(&graph);
        let mut plans: Vec<(String, QueryPlans, Symmetry)> = Vec::new();
        let shares = LabelShares::of(&graph);
        for (name, q) in queries {
            let mut qp = QueryPlans::new(q, &GcsmOrder, &stats, true).map_err(|e| e.to_string())?;
            qp.set_label_shares(&shares);
            let sym = Symmetry::of(q, &qp.plans);
            plans.push((name.clone(), qp, sym));
        }
        let queries = plans;
        let pool = &self.pool;
        let mut degree = DegreeSelector::default();
        if want("naive") && gpu_side.is_some() {
            let t = Instant::now();
            degree.prepare(&graph);
            log(
                t0,
                format!(
                    "degree ranking for naive in {:.2} s (not counted per batch)",
                    t.elapsed().as_secs_f64()
                ),
            );
        }
        let mut khop = KHopSelector::default();
        // One selector per query for "gcsm" and each of its settings variants
        // ("gcsm-v2": match v2's settings, estimate on every batch; "gcsm-nobal":
        // no small-batch task balance).
        let mut walks: std::collections::HashMap<String, Vec<WalkSelector>> = engines
            .iter()
            .filter(|e| {
                e.as_str() == "gcsm"
                    || (e.starts_with("gcsm-") && e.as_str() != "gcsm-sampler" && !e.starts_with("gcsm-persist"))
            })
            .map(|e| {
                let v2 = e.ends_with("-v2");
                let sel = queries
                    .iter()
                    .map(|_| {
                        let w = WalkSelector::with_walks(a.walk_cap)
                            .with_total((a.walk_total > 0).then_some(a.walk_total))
                            .with_cost_fraction((a.fe_frac > 0.0).then_some(a.fe_frac));
                        if v2 {
                            // match v2's selector: no skip, no fill, plain
                            // moving averages.
                            return w.with_skip_below(None).with_degree_fill(false).with_conservative(false);
                        }
                        let w = if e.contains("-lite") {
                            w.with_walk_fraction(Some(0.01))
                        } else {
                            w
                        };
                        let w = match suffix_num(e, "-cold") {
                            Some(n) => w.with_cold_skip(Some(n as usize)),
                            // v4's and v5's first batches always estimated.
                            None if e.ends_with("-v4") || e.ends_with("-v5") => w.with_cold_skip(None),
                            None => w,
                        };
                        match suffix_num(e, "-skip").or(a.skip_ms) {
                            Some(ms) => w.with_skip_below((ms > 0.0).then_some(ms * 1e-3)),
                            None => w,
                        }
                    })
                    .collect();
                (e.clone(), sel)
            })
            .collect();
        // The degree fill's ranking, once (not counted per batch, as for naive).
        if gpu_side.is_some() && walks.keys().any(|e| !e.ends_with("-v2")) {
            let t = Instant::now();
            let hubs = Arc::new(csm_gpu::cache::top_degree(&graph, 1 << 20));
            for (e, sels) in walks.iter_mut() {
                if !e.ends_with("-v2") {
                    for w in sels.iter_mut() {
                        *w = std::mem::take(w).with_hubs(hubs.clone());
                    }
                }
            }
            log(
                t0,
                format!(
                    "degree ranking for gcsm's fill in {:.2} s (not counted per batch)",
                    t.elapsed().as_secs_f64()
                ),
            );
        }
        // csm-sampler's GCSM policy (merged walks, Sec. IV-B), walk_cap walks per root.
        let mut sampler: Vec<SamplerSelector> = queries
            .iter()
            .map(|_| SamplerSelector::sampled(Some(a.walk_cap)))
            .collect();

        // Match v9: each (engine, query)'s small-batch expansion policy and,
        // for the resident engines, whether a batch uses the cache.
        let mut splits: std::collections::HashMap<(String, usize), SplitPolicy> = std::collections::HashMap::new();
        let mut uses: std::collections::HashMap<(String, usize), ResidentUse> = std::collections::HashMap::new();
        // (query, engine) pairs that hit the time limit: larger batches skip them.
        let mut heavy: std::collections::HashSet<(String, String)> = std::collections::HashSet::new();
        let limit_s = a.limit_s;
        if let Some(s) = gpu_side.as_mut() {
            s.matcher
                .set_time_limit(Some(std::time::Duration::from_secs_f64(limit_s)));
        }
        let nres = gpu_side.as_ref().map_or(0, |s| s.resident.len());
        // per resident cache: whether engines other than its own share it
        let shared: Vec<bool> = gpu_side.as_ref().map_or_else(Vec::new, |s| {
            (0..nres)
                .map(|ri| {
                    engines
                        .iter()
                        .any(|e| *e != s.resident[ri].0 && resident_of(&s.resident, e) == Some(ri))
                })
                .collect()
        });
        let mut offset = 0usize;
        let mut stopped = None;
        // per resident cache: seconds of a renewal its next refresh pays
        let mut renew_due: Vec<f64> = Vec::new();
        'sizes: for &size in &a.sizes {
            for b in 0..a.batches {
                if t0.elapsed().as_secs_f64() > a.deadline_s {
                    stopped = Some(format!(
                        "deadline of {} s reached before batch size {size}, batch {b}",
                        a.deadline_s
                    ));
                    break 'sizes;
                }
                // this batch's updates (`--split`: those of the graph's edges)
                let batch = &stream[offset..offset + size];
                offset += size;
                let kept_updates: Vec<LocatedUpdate>;
                let updates: &[LocatedUpdate] = if a.split {
                    kept_updates = batch.iter().filter(|u| kept(u)).copied().collect();
                    &kept_updates
                } else {
                    batch
                };
                let tu = Instant::now();
                // the `gcsm-persist` cache refreshes beside the sync: wake the
                // helper thread now, as GpuEngine does
                if gpu_side
                    .as_ref()
                    .is_some_and(|s| s.resident.iter().any(|(n, _)| by_sync(n)))
                {
                    csm_gpu::overlap::wake_helper(csm_gpu::overlap::WAKE_AT_MOST);
                }
                graph
                    .stage(updates, "stream", Strictness::Strict)
                    .map_err(|e| e.to_string())?;
                let changed = changed_vertices(&graph);
                // The resident caches' refresh for this batch (gcsm-persist):
                // right after staging, while the changed lists are still in the
                // host's caches (match v8), or after the host graph's mirror
                // sync (`--refresh-late`, match v7). With several resident
                // caches, the one refreshed first finds the lists colder: the
                // order rotates per batch.
                let mut stage_s = 0.0;
                // the host mirrors' syncs after staging and after the commit
                let mut sync_s = [0.0f64; 2];
                let mut sync_steps = [csm_gpu::host_graph::SyncTiming::default(); 2];
                let mut persist = vec![csm_gpu::resident::ResidentLoad::default(); nres];
                // per resident cache: its refresh's device time, once known
                let mut refresh_dev: Vec<Option<f64>> = vec![None; nres];
                // Match v20: the layouts before the refresh, for the rows
                // that time its bookkeeping beside their seeds and split
                // (from OVERLAP_FROM updates).
                let mut pre_layout: Vec<Option<ResidentLayout>> = vec![None; nres];
                // Thirty-eighth session: the `gcsm-persist` cache refreshes
                // beside the mirrors' sync, as GpuEngine does by default; its
                // rows pay what GpuEngine's batches do
                // (`Overlap::charge_with_device`) and a due renewal.
                let mut beside_sync: Vec<Option<(Overlap, f64)>> = vec![None; nres];
                for phase in 0..3 {
                    if phase == 1 {
                        let mut waited = 0.0;
                        if let Some(s) = gpu_side.as_mut() {
                            let ts = Instant::now();
                            let marks = graph.is_pending().then(|| graph.pending_marks());
                            let GpuSide {
                                gpu,
                                pinned,
                                managed,
                                resident,
                                ..
                            } = s;
                            let (g, changed) = (&graph, &changed);
                            let mut sync_all = || -> Result<(), String> {
                                let mut mirrors = vec![&mut *pinned];
                                mirrors.extend(managed.as_mut());
                                for h in mirrors {
                                    if a.sync_whole {
                                        h.sync(g, changed)
                                    } else {
                                        h.sync_staged(g, changed, marks)
                                    }
                                    .map_err(|e| e.to_string())?;
                                }
                                Ok(())
                            };
                            let sided: Vec<usize> = (0..nres).filter(|&i| by_sync(&resident[i].0)).collect();
                            if sided.is_empty() {
                                sync_all()?;
                                sync_s[0] = ts.elapsed().as_secs_f64();
                            } else {
                                // the layout before, for the variants that
                                // share the cache and re-time its refresh
                                for &ri in &sided {
                                    if shared[ri] {
                                        pre_layout[ri] = Some(resident[ri].1.layout().clone());
                                    }
                                }
                                let gpu = gpu.clone();
                                let res = &mut *resident;
                                let side = || {
                                    sided
                                        .iter()
                                        .map(|&ri| (ri, res[ri].1.refresh(&gpu, g, changed, marks)))
                                        .collect::<Vec<_>>()
                                };
                                let (synced, loads, ov) = beside(sync_all, side);
                                synced?;
                                for (ri, load) in loads {
                                    let mut load = load.map_err(|e| e.to_string())?;
                                    let renew = renew_due.get_mut(ri).map_or(0.0, std::mem::take);
                                    load.seconds += renew;
                                    beside_sync[ri] = Some((ov, renew));
                                    log(
                                        t0,
                                        format!(
                                            "{} refresh beside the sync: {} lists, {}, {:.2} ms host (bookkeeping \
                                             {:.2}, pack {:.2}, enqueue {:.2} ms), sync {:.2} ms, waited {:.3} ms",
                                            resident[ri].0,
                                            load.lists,
                                            fmt_bytes(load.bytes as f64),
                                            load.seconds * 1e3,
                                            load.bookkeeping_seconds * 1e3,
                                            load.pack_seconds * 1e3,
                                            load.enqueue_seconds * 1e3,
                                            ov.main_seconds * 1e3,
                                            ov.wait_seconds * 1e3
                                        ),
                                    );
                                    persist[ri] = load;
                                }
                                sync_s[0] = ov.main_seconds;
                                waited = ov.wait_seconds;
                            }
                            sync_steps[0] = pinned.timing;
                        }
                        let in_turn: f64 = (0..nres)
                            .filter(|&i| beside_sync[i].is_none())
                            .map(|i| persist[i].seconds)
                            .sum();
                        stage_s = tu.elapsed().as_secs_f64() - in_turn - waited;
                        continue;
                    }
                    if (phase == 2) != a.refresh_late {
                        continue;
                    }
                    if let Some(s) = gpu_side.as_mut() {
                        let gpu = s.gpu.clone();
                        for k in 0..nres {
                            let ri = (k + b) % nres;
                            let (name, c) = &mut s.resident[ri];
                            if by_sync(name) {
                                continue;
                            }
                            pre_layout[ri] = Some(c.layout().clone());
                            let marks = graph.is_pending().then(|| graph.pending_marks());
                            let mut load = c.refresh(&gpu, &graph, &changed, marks).map_err(|e| e.to_string())?;
                            if let Some(due) = renew_due.get_mut(ri) {
                                load.seconds += std::mem::take(due);
                            }
                            persist[ri] = load;
                            log(
                                t0,
                                format!(
                                "{name} refresh: {} lists ({} whole, {} merged/patched), {}, {} moved, {} evicted, \
                             {:.2} ms host (bookkeeping {:.2}, pack {:.2}, enqueue {:.2} ms; queued, no sync), {} live",
                                load.lists,
                                load.whole,
                                load.patched,
                                fmt_bytes(load.bytes as f64),
                                load.moved,
                                load.evicted,
                                load.seconds * 1e3,
                                load.bookkeeping_seconds * 1e3,
                                load.pack_seconds * 1e3,
                                load.enqueue_seconds * 1e3,
                                c.layout().live()
                            ),
                            );
                        }
                    }
                }
                let delta = graph.pending_delta().expect("staged").clone();
                for (qi, (qname, qp, sym)) in queries.iter().enumerate() {
                    if t0.elapsed().as_secs_f64() > a.deadline_s {
                        stopped = Some(format!(
                            "deadline of {} s reached in batch size {size}, batch {b}, before query {qname}",
                            a.deadline_s
                        ));
                        break;
                    }
                    let cpu = if want("cpu16") && !heavy.contains(&(qname.clone(), "cpu16".to_string())) {
                        Some(cpu_count(pool, &graph, qp, &delta, limit_s))
                    } else {
                        None
                    };
                    let reference = match &cpu {
                        Some(Ok((c, _))) => Some((c.positive, c.negative)),
                        _ => None,
                    };
                    // The deadline-capable CPU count is a replica of the CPU
                    // engine's: check it against csm_baselines once per query
                    // on the first batch when it was quick.
                    if let (Some(Ok((c, secs))), true) = (&cpu, size == a.sizes[0] && b == 0) {
                        if *secs < 2.0 {
                            let real = pool.install(|| count_delta_parallel(&graph, &qp.plans, Some(sym), &delta));
                            if (real.positive, real.negative) != (c.positive, c.negative) {
                                return Err(format!(
                                    "{qname}: the CPU replica counts (+{} / -{}) but csm_baselines (+{} / -{})",
                                    c.positive, c.negative, real.positive, real.negative
                                ));
                            }
                            println!("   cpu replica agrees with csm_baselines::cpu::count_delta_parallel on {qname}");
                        }
                    }
                    let mut line = format!("size {size:5} batch {b} {qname:16}");
                    match &cpu {
                        Some(Ok((c, secs))) => {
                            let _ = write!(
                                line,
                                " cpu16 {:>9} ms (+{} / -{})",
                                fmt_ms(*secs),
                                c.positive,
                                c.negative
                            );
                            self.rows.push(Row {
                                positive: c.positive,
                                negative: c.negative,
                                seconds: *secs,
                                ok: true,
                                verified: true,
                                ..Row::failed(size, b, qname, "cpu16", String::new())
                            });
                        }
                        Some(Err(err)) => {
                            let _ = write!(line, " cpu16 TIMEOUT");
                            heavy.insert((qname.clone(), "cpu16".to_string()));
                            self.rows.push(Row::failed(size, b, qname, "cpu16", err.clone()));
                        }
                        None => {}
                    }
                    if let Some(engine) = cpu_engines.get_mut(qi) {
                        let batch = Batch {
                            updates,
                            source: "stream",
                            strictness: Strictness::Strict,
                        };
                        let r = engine.process(batch).map_err(|e| e.to_string())?;
                        let ok = agrees(reference, (r.positive, r.negative), "cpu-engine", size, b, qname);
                        let _ = write!(line, " | cpu-engine {} ms", fmt_ms(r.seconds));
                        self.rows.push(Row {
                            positive: r.positive,
                            negative: r.negative,
                            seconds: r.seconds,
                            ok,
                            verified: reference.is_some(),
                            ..Row::failed(size, b, qname, "cpu-engine", String::new())
                        });
                    }
                    if a.settle_ms > 0.0 && (cpu.is_some() || qi < cpu_engines.len()) {
                        std::thread::sleep(std::time::Duration::from_secs_f64(a.settle_ms / 1e3));
                    }
                    if let (true, Some(s)) = (a.wake, gpu_side.as_mut()) {
                        let secs = s.matcher.wake().map_err(|e| e.to_string())?;
                        let _ = write!(line, " | wake {} ms", fmt_ms(secs));
                        self.rows.push(Row {
                            seconds: secs,
                            ok: true,
                            ..Row::failed(size, b, qname, "wake", String::new())
                        });
                    }
                    if let (true, Some(s)) = (a.warm_up, gpu_side.as_mut()) {
                        let t = Instant::now();
                        run_cached(s.matcher, None, &graph, &s.pinned, qp, None).map_err(|e| e.to_string())?;
                        let _ = write!(line, " | warm-up {} ms", fmt_ms(t.elapsed().as_secs_f64()));
                    }
                    if let Some(s) = gpu_side.as_mut() {
                        let mut on_gpu: Vec<&String> = engines
                            .iter()
                            .filter(|e| !["cpu16", "cpu-engine"].contains(&e.as_str()))
                            .collect();
                        if a.rotate && !on_gpu.is_empty() {
                            let k = b % on_gpu.len();
                            on_gpu.rotate_left(k);
                        }
                        for e in on_gpu {
                            if heavy.contains(&(qname.clone(), e.clone())) {
                                continue;
                            }
                            // "-allshares": the last level defers by
                            // candidates too (match v11's first cut)
                            let all_shares;
                            let qp = if e.contains("-allshares") {
                                all_shares = with_last_share(qp, &shares);
                                &all_shares
                            } else {
                                qp
                            };
                            let GpuSide {
                                gpu: sgpu,
                                matcher,
                                cache,
                                pinned,
                                managed,
                                resident,
                                hot,
                            } = s;
                            // the (engine, query)'s small-batch expansion policy
                            let pol = uses_split_policy(e).then(|| splits.entry((e.clone(), qi)).or_default());
                            // (only the cache's own engine: the variants
                            // sharing it keep their rules)
                            let sided = resident_of(resident, e)
                                .filter(|&ri| resident[ri].0 == *e)
                                .and_then(|ri| beside_sync[ri].map(|b| (ri, b)));
                            let res = if let Some((ri, (ov, renew))) = sided {
                                // Refreshed beside the mirrors' sync (above):
                                // the row matches over the cache and pays the
                                // wait after the sync, the refresh's device
                                // time beyond the slack it left before the
                                // sync's end, and a renewal.
                                let dev = device_seconds_once(&mut refresh_dev[ri], &resident[ri].1)?;
                                let c = &resident[ri].1;
                                let bytes = persist[ri].bytes;
                                with_settings(matcher, e, a, |m| {
                                    run_cached(m, Some(c as &dyn KernelCache), &graph, pinned, qp, pol)
                                })
                                .map(|mut r| {
                                    let dc = ov.charge_with_device(dev) + renew;
                                    r.charge_cache_load(dc, bytes, c.layout().live());
                                    r
                                })
                            } else if let Some(ri) = resident_of(resident, e) {
                                let load = persist[ri];
                                // the refresh's device time, taken before any
                                // row's mask queues more work on the cache
                                let refresh_dev = device_seconds_once(&mut refresh_dev[ri], &resident[ri].1)?;
                                // Match v9: a batch predicted light runs on ZP's
                                // path (cache_vertices 0 in its row) and is
                                // charged no refresh (GpuEngine queues it after
                                // the kernel); `-always` and the v7/v8/whole/par
                                // caches always use the cache.
                                let always = e.contains("-always")
                                    || ["-v7", "-v8", "-whole", "-par"].iter().any(|x| e.ends_with(x));
                                // "-useN": the refresh may cost N% of the kernel.
                                let frac = match suffix_num(e, "-use") {
                                    Some(n) => n / 100.0,
                                    None if always => 0.0,
                                    None => ResidentUse::FRAC,
                                };
                                // "-v17use": match v15-v17's rule (per update, no re-tries).
                                let u = uses.entry((e.clone(), qi)).or_insert_with(|| {
                                    let u = ResidentUse::new(frac);
                                    if e.contains("-v17use") {
                                        u.per_update()
                                    } else {
                                        u
                                    }
                                });
                                // Match v10: a row that does not use the
                                // refreshed cache matches over it with the
                                // batch's changed lists hidden (`-bypass`: every
                                // row; `-zpath` and the v7/v8/whole/par caches:
                                // on ZP's path, as v9 did).
                                let bypass_all = e.contains("-bypass");
                                let zpath = e.contains("-zpath") || always;
                                let used = !bypass_all && u.use_cache(size);
                                // Match v20: from OVERLAP_FROM updates the row's
                                // refresh or mask runs beside its seeds and
                                // split (`-inturn`: in turn, as before), as in
                                // GpuEngine. The refresh was made once for the
                                // batch; a used row times its bookkeeping and
                                // pack again, on a clone of the layout before
                                // it, beside its own seeds and split, and pays
                                // the wait plus the refresh's enqueue and
                                // device time.
                                let from = suffix_num(e, "-over").map_or(OVERLAP_FROM, |n| n as usize);
                                let threaded =
                                    !e.contains("-inturn") && hot[ri].is_none() && size >= from && (used || !zpath);
                                if threaded {
                                    let mut pre = if used { pre_layout[ri].clone() } else { None };
                                    // the real refresh's patch, as large as this one
                                    let mut buf = if used {
                                        vec![0u32; load.bytes / 4 + 1]
                                    } else {
                                        Vec::new()
                                    };
                                    let c = &mut resident[ri].1;
                                    let g = &graph;
                                    let marks = g.is_pending().then(|| g.pending_marks());
                                    let changed = &changed;
                                    let sided = with_settings(matcher, e, a, |m| {
                                        let base = m.task_options();
                                        let t0 = Instant::now();
                                        let (prep, side, ov) = beside(
                                            || prepare(g, qp, base, pol.as_deref()),
                                            || match pre.as_mut() {
                                                Some(l) => {
                                                    let p = l.refresh_with(g, changed, marks);
                                                    if buf.len() < p.packed_words() {
                                                        buf.resize(p.packed_words(), 0);
                                                    }
                                                    p.pack(g, &mut buf);
                                                    Ok(None)
                                                }
                                                None => c.mask(sgpu, g, changed).map(Some),
                                            },
                                        );
                                        let mask = side?;
                                        let r = launch(m, Some(&*c as &dyn KernelCache), pinned, qp, prep, pol, t0)?;
                                        Ok::<_, csm_gpu::GpuError>((mask, r, ov))
                                    });
                                    let c = &resident[ri].1;
                                    let res = sided.map(|(mask, mut r, ov)| {
                                        // the refresh's enqueue and device time
                                        // (made at the batch's start)
                                        let book = load.bookkeeping_seconds + load.pack_seconds;
                                        let after = load.charged_seconds(refresh_dev) - book;
                                        let mut mask_secs = 0.0;
                                        let refresh_secs;
                                        if used {
                                            r.note_cache_load(ov.wait_seconds + after, load.bytes, c.layout().live());
                                            r.seconds += after;
                                            refresh_secs = ov.wait_seconds + after;
                                        } else {
                                            let (m, hidden) = mask.as_ref().expect("a threaded unused row masks");
                                            mask_secs = ov.wait_seconds;
                                            let live = c.layout().live().saturating_sub(hidden.len());
                                            r.note_cache_load(mask_secs, m.bytes, live);
                                            // what the refresh would have added beside
                                            refresh_secs = (book - ov.main_seconds).max(0.0) + after;
                                        }
                                        u.observe(UseSample {
                                            updates: size,
                                            refresh_seconds: refresh_secs,
                                            mask_seconds: mask_secs,
                                            kernel_seconds: r.kernel_seconds,
                                            nodes: r.kernel.nodes,
                                            used,
                                        });
                                        (r, mask)
                                    });
                                    match res {
                                        Ok((r, mask)) => {
                                            if let Some((_, hidden)) = &mask {
                                                // not charged (see below)
                                                resident[ri].1.show(sgpu, &graph, hidden).map_err(|e| e.to_string())?;
                                            }
                                            Ok(r)
                                        }
                                        Err(e) => Err(e),
                                    }
                                } else {
                                    let c = &mut resident[ri].1;
                                    let mask = if used || zpath {
                                        None
                                    } else {
                                        Some(c.mask(sgpu, &graph, &changed).map_err(|e| e.to_string())?)
                                    };
                                    let c = &*c;
                                    let kc = (used || mask.is_some()).then_some(c as &dyn KernelCache);
                                    // Match v12: the changed lists the resident set
                                    // does not serve (hidden, evicted or never
                                    // cached) go to the hot area for this row.
                                    let hot_load = match hot[ri].as_mut() {
                                        Some(h) => {
                                            let hidden: &[VertexId] = mask.as_ref().map_or(&[], |(_, h)| &h[..]);
                                            let served = |v: VertexId| kc.is_some() && c.layout().serves(v, hidden);
                                            Some(h.stage(pinned, &changed, served).map_err(|e| e.to_string())?)
                                        }
                                        _ => None,
                                    };
                                    // The refresh is queued without a synchronisation
                                    // (the kernel follows it on the stream): every
                                    // row that uses the cache is charged its host
                                    // time and its device time (events; the enqueue
                                    // counted once), as if it ran alone. A masked
                                    // row is charged its mask alike (its refresh
                                    // comes after the kernel, in the update).
                                    let res =
                                        with_settings(matcher, e, a, |m| run_cached(m, kc, &graph, pinned, qp, pol))
                                            .and_then(|mut r| {
                                                let secs = load.charged_seconds(refresh_dev);
                                                let mut mask_secs = 0.0;
                                                if used {
                                                    r.charge_cache_load(secs, load.bytes, c.layout().live());
                                                } else if let Some((m, hidden)) = &mask {
                                                    mask_secs = m.charged_seconds(c.device_seconds()?);
                                                    let live = c.layout().live().saturating_sub(hidden.len());
                                                    r.charge_cache_load(mask_secs, m.bytes, live);
                                                }
                                                u.observe(UseSample {
                                                    updates: size,
                                                    refresh_seconds: secs,
                                                    mask_seconds: mask_secs,
                                                    kernel_seconds: r.kernel_seconds,
                                                    nodes: r.kernel.nodes,
                                                    used,
                                                });
                                                if let Some(l) = hot_load {
                                                    r.add_cache_load(l.seconds, l.bytes);
                                                }
                                                Ok(r)
                                            });
                                    if let Some(h) = hot[ri].as_mut() {
                                        // not charged: a restore of table entries
                                        h.restore(pinned).map_err(|e| e.to_string())?;
                                    }
                                    if let Some((_, hidden)) = &mask {
                                        // not charged: in GpuEngine these words ride
                                        // on the refresh after the kernel
                                        resident[ri].1.show(sgpu, &graph, hidden).map_err(|e| e.to_string())?;
                                    }
                                    res
                                }
                            } else {
                                let (host, sel, bud): (&HostGraph, Option<&mut dyn CacheSelector>, usize) =
                                    match e.as_str() {
                                        z if z == "zp" || z.starts_with("zp-") => (pinned, None, budget),
                                        "um" => match managed.as_ref() {
                                            Some(m) => (m, None, budget),
                                            None => continue,
                                        },
                                        "naive" => (pinned, Some(&mut degree as &mut dyn CacheSelector), budget),
                                        "gcsm-sampler" => {
                                            (pinned, Some(&mut sampler[qi] as &mut dyn CacheSelector), budget)
                                        }
                                        g if walks.contains_key(g) => (
                                            pinned,
                                            Some(&mut walks.get_mut(g).expect("present")[qi] as &mut dyn CacheSelector),
                                            budget,
                                        ),
                                        "vsgm" => {
                                            if size > a.vsgm_max_batch {
                                                continue;
                                            }
                                            (pinned, Some(&mut khop as &mut dyn CacheSelector), vsgm_budget)
                                        }
                                        other => return Err(format!("unknown engine {other}")),
                                    };
                                with_settings(matcher, e, a, |m| run_staged(m, cache, sel, &graph, host, qp, bud, pol))
                            };
                            let row = match res {
                                Ok(r) => {
                                    let ok = agrees(reference, (r.positive, r.negative), e, size, b, qname);
                                    let _ = write!(line, " | {e} {} ms", fmt_ms(r.seconds));
                                    let mut row = row_of(size, b, qname, e, &r, ok);
                                    row.verified = reference.is_some();
                                    row
                                }
                                Err(err) => {
                                    let _ = write!(line, " | {e} ERR");
                                    println!("{e} size {size} batch {b} {qname}: {err}");
                                    if matches!(err, csm_gpu::GpuError::TimedOut(_) | csm_gpu::GpuError::OverBudget(_))
                                    {
                                        heavy.insert((qname.clone(), e.clone()));
                                    }
                                    Row::failed(size, b, qname, e, err.to_string())
                                }
                            };
                            self.rows.push(row);
                        }
                    }
                    println!("{line}");
                    put_setup(&mut self.setup, key, &gsetup);
                    self.write();
                }
                if let Some(s) = gpu_side.as_ref() {
                    for (name, c) in &s.resident {
                        let dev = c.device_seconds().map_err(|e| e.to_string())?;
                        log(t0, format!("{name} refresh device time {:.3} ms", dev * 1e3));
                    }
                }
                let tc = Instant::now();
                graph.commit();
                if let Some(s) = gpu_side.as_mut() {
                    // The resident caches' device-side commit (match v9; not
                    // `-v7` / `-v8`, which merge in the next refresh): queued
                    // now, beside the host mirror's sync, and like that sync
                    // part of the update, not charged to the next batch's rows.
                    let mut commits = Vec::new();
                    for (name, c) in s.resident.iter_mut() {
                        if name.ends_with("-v7") || name.ends_with("-v8") {
                            continue;
                        }
                        let l = c.commit(&s.gpu, &graph).map_err(|e| e.to_string())?;
                        commits.push((name.clone(), l));
                    }
                    let ts = Instant::now();
                    s.pinned.sync(&graph, &changed).map_err(|e| e.to_string())?;
                    if let Some(m) = s.managed.as_mut() {
                        m.sync(&graph, &changed).map_err(|e| e.to_string())?;
                    }
                    sync_s[1] = ts.elapsed().as_secs_f64();
                    sync_steps[1] = s.pinned.timing;
                    for (name, l) in commits {
                        let c = &s.resident.iter().find(|(n, _)| *n == name).expect("present").1;
                        let dev = c.device_seconds().map_err(|e| e.to_string())?;
                        log(
                            t0,
                            format!(
                                "{name} commit: {} lists merged on the device, {}, {:.2} ms host (bookkeeping {:.2}, \
                             pack {:.2}, enqueue {:.2} ms), device {:.3} ms (not charged to the rows)",
                                l.patched,
                                fmt_bytes(l.bytes as f64),
                                l.seconds * 1e3,
                                l.bookkeeping_seconds * 1e3,
                                l.pack_seconds * 1e3,
                                l.enqueue_seconds * 1e3,
                                dev * 1e3
                            ),
                        );
                    }
                    // Match v16: a resident cache whose growing lists were
                    // evicted is ranked and filled again from the committed
                    // graph; the next batch's rows of that engine pay it with
                    // its refresh.
                    renew_due.resize(s.resident.len(), 0.0);
                    for (i, due) in renew_due.iter_mut().enumerate() {
                        if !s.resident[i].1.worn_out() {
                            continue;
                        }
                        let (name, old) = s.resident.remove(i);
                        let (c, l) = old.renew(&s.gpu, &graph).map_err(|e| e.to_string())?;
                        log(
                            t0,
                            format!(
                                "{name} renewed: {} lists, {} in {:.1} ms (charged to the next batch)",
                                c.layout().live(),
                                fmt_bytes(l.bytes as f64),
                                l.seconds * 1e3
                            ),
                        );
                        *due += l.seconds;
                        s.resident.insert(i, (name, c));
                    }
                }
                log(
                    t0,
                    format!(
                        "batch done (stage+sync {:.1} ms, commit+sync {:.1} ms; of which the host mirrors' syncs \
                         {:.1} / {:.1} ms; the pinned mirror's decide / place / write / upload {} and {} ms)",
                        stage_s * 1e3,
                        tc.elapsed().as_secs_f64() * 1e3,
                        sync_s[0] * 1e3,
                        sync_s[1] * 1e3,
                        fmt_steps(&sync_steps[0]),
                        fmt_steps(&sync_steps[1])
                    ),
                );
                put_setup(&mut self.setup, key, &gsetup);
                self.write();
                if stopped.is_some() {
                    break 'sizes;
                }
            }
        }
        if let Some(s) = &stopped {
            log(t0, s);
            gsetup["stopped"] = json!(s);
        }
        put_setup(&mut self.setup, key, &gsetup);
        self.write();
        Ok(stopped.is_some())
    }
}

/// Puts a graph's setup figures `gsetup` into the run's `setup`: under
/// `graphs.<key>`, or at the top level without a key.
fn put_setup(setup: &mut Value, key: Option<&str>, gsetup: &Value) {
    let to = match key {
        Some(k) => &mut setup["graphs"][k],
        None => setup,
    };
    if let (Some(to), Some(from)) = (to.as_object_mut(), gsetup.as_object()) {
        to.extend(from.iter().map(|(k, v)| (k.clone(), v.clone())));
    } else {
        *to = gsetup.clone();
    }
}

/// Whether `engine`'s counts `got` equal the `reference` (the `cpu16`
/// replica's; none: nothing to compare), printing a MISMATCH line if not.
fn agrees(reference: Option<(u64, u64)>, got: (u64, u64), engine: &str, size: usize, b: usize, q: &str) -> bool {
    let ok = reference.map_or(true, |x| x == got);
    if !ok {
        println!(
            "MISMATCH {engine} size {size} batch {b} {q}: (+{} / -{}) cpu16 {reference:?}",
            got.0, got.1
        );
    }
    ok
}

/// `qp` with a label share on every level, the last one included (match
/// v11's first cut: last-level nodes deferred by candidates too).
fn with_last_share(qp: &QueryPlans, shares: &LabelShares) -> QueryPlans {
    let mut q = qp.clone();
    q.set_label_shares_with(shares, true);
    q
}

/// The resident cache engine `e` runs on: its own (`gcsm-persist`,
/// `-whole`, `-v7`, `-v8`, `-par`), else, for another `gcsm-persist-*`
/// name (a settings variant such as `gcsm-persist-noexp`), the default
/// `gcsm-persist` cache, whose refresh it shares.
/// The device time of a resident cache's last refresh, read once per batch
/// (before any row queues more work on the cache) and kept in `slot`.
fn device_seconds_once(slot: &mut Option<f64>, c: &ResidentCache) -> Result<f64, String> {
    if let Some(d) = *slot {
        return Ok(d);
    }
    let d = c.device_seconds().map_err(|e| e.to_string())?;
    *slot = Some(d);
    Ok(d)
}

/// Whether the bench refreshes the resident cache of engine `name` beside
/// the host mirrors' sync (GpuEngine's default since the thirty-eighth
/// session): `gcsm-persist`'s; the other caches keep the refresh right
/// after staging.
fn by_sync(name: &str) -> bool {
    name == "gcsm-persist"
}

fn resident_of(resident: &[(String, ResidentCache)], e: &str) -> Option<usize> {
    resident.iter().position(|(n, _)| n == e).or_else(|| {
        e.starts_with("gcsm-persist-")
            .then(|| resident.iter().position(|(n, _)| n == "gcsm-persist"))
            .flatten()
    })
}

/// Whether engine `e` picks each small batch's host expansion from its
/// query's earlier kernel times ([`SplitPolicy`], match v9): every engine
/// but the settings variants that fix the split (`-v2`, `-v4`, `-v5`,
/// `-noexp`, `-nobal`, `-sliceN`, `-deep16`) and `-split` (match v8's
/// split: the task options as they are).
fn uses_split_policy(e: &str) -> bool {
    !(e.contains("-split")
        || e.ends_with("-v2")
        || e.ends_with("-v4")
        || e.ends_with("-v5")
        || e.contains("-noexp")
        || e.contains("-nobal")
        || e.contains("-slice")
        || e.contains("-deep16"))
}

/// Runs `f` with engine `e`'s settings variant applied to the matcher (see
/// the module docs: `-v2`, `-v4`, `-v5`, `-noexp`, `-nobal`, `-sliceN`,
/// `-deep16`, `-nodefer`, `-deferN`, `-dsN`), then restores the run's
/// settings. Both the per-batch-cache engines and the resident ones
/// (`gcsm-persist-noexp`, ...) go through here.
fn with_settings<R>(m: &mut DeviceMatcher, e: &str, a: &Args, f: impl FnOnce(&mut DeviceMatcher) -> R) -> R {
    let v2 = e.ends_with("-v2");
    let nobal = v2 || e.contains("-nobal");
    let tasks = m.config().tasks;
    if v2 {
        m.set_windows(0, 0);
    }
    if nobal {
        // v2 expanded every batch's heavy seeds (v5's first pass).
        let base = if v2 { TaskOptions::v5() } else { tasks };
        m.set_tasks(TaskOptions {
            target_tasks: 0,
            ..base
        });
    } else if e.ends_with("-v4") {
        m.set_tasks(TaskOptions::v4());
    } else if e.ends_with("-v5") {
        m.set_tasks(TaskOptions::v5());
    } else if e.contains("-noexp") {
        m.set_tasks(TaskOptions {
            expand_few: false,
            ..tasks
        });
    } else if let Some(n) = suffix_num(e, "-slice") {
        m.set_tasks(TaskOptions {
            slice_min: n as u32,
            ..tasks
        });
    } else if e.contains("-deep16") {
        m.set_tasks(TaskOptions {
            deep_factor: 16,
            ..tasks
        });
    }
    // "-v2", "-v4" and "-nodefer": no heavy-node deferral; "-deferN":
    // deferral from iterated lists of N on every level (as up to match
    // v10); "-wantN": from N candidates of the level's label (match v11).
    let wanted = m.config().defer_wanted;
    if v2 || e.ends_with("-v4") || e.contains("-nodefer") {
        m.set_defer_min(0);
    } else if let Some(n) = suffix_num(e, "-defer") {
        m.set_defer_min(n as u32);
        m.set_defer_wanted(0);
    } else if e.ends_with("-v5") {
        // match v5's deferral: lists of 2,048, slices of 512.
        m.set_defer_min(2048);
        m.set_defer_wanted(0);
    } else if let Some(n) = suffix_num(e, "-want") {
        m.set_defer_wanted(n as u32);
    } else if e.ends_with("-v10") {
        m.set_defer_wanted(0);
    }
    // "-dsN": deferred slices of N elements.
    let defer_slice = m.config().defer_slice;
    if let Some(n) = suffix_num(e, "-ds") {
        m.set_defer_slice(n as u32);
    } else if e.ends_with("-v5") {
        m.set_defer_slice(512);
    }
    // "-seq": membership searches one after another (match v12), not in
    // lockstep (match v13).
    let lockstep = m.config().lockstep;
    if e.contains("-seq") {
        m.set_lockstep(false);
    }
    // "-roundsN": N launches may defer (default 3); "-drainN": defer from
    // N candidates once a launch's tasks are all taken (match v14; 0: off).
    let rounds = m.config().defer_rounds;
    if let Some(n) = suffix_num(e, "-rounds") {
        m.set_defer_rounds(n as u32);
    }
    let drained = m.config().defer_drained;
    if let Some(n) = suffix_num(e, "-drain") {
        m.set_defer_drained(n as u32);
    }
    // "-nomemo": no last-level memo (as up to match v16); "-mminN": memoise
    // last-level nodes from N elements (match v17).
    // "-mslotsN": N Mi slots; "-mdefer": memo misses defer as any node.
    // "-mlab": plans that check labels are memoised too.
    let c = *m.config();
    let (memo_slots, memo_min, memo_defer, memo_labelled) = (c.memo_slots, c.memo_min, c.memo_defer, c.memo_labelled);
    if e.contains("-nomemo") {
        m.set_memo_slots(0);
    } else if let Some(n) = suffix_num(e, "-mslots") {
        m.set_memo_slots((n * f64::from(1u32 << 20)) as u32);
    }
    if let Some(n) = suffix_num(e, "-mmin") {
        m.set_memo_min(n as u32);
    }
    if e.contains("-mdefer") {
        m.set_memo_defer(true);
    }
    if e.contains("-mlab") {
        m.set_memo_labelled(true);
    }
    let r = f(m);
    m.set_memo_slots(memo_slots);
    m.set_memo_min(memo_min);
    m.set_memo_defer(memo_defer);
    m.set_memo_labelled(memo_labelled);
    m.set_defer_drained(drained);
    m.set_defer_rounds(rounds);
    m.set_lockstep(lockstep);
    m.set_windows(a.window_min, a.window_max);
    m.set_tasks(tasks);
    m.set_defer_min(a.defer_min);
    m.set_defer_slice(defer_slice);
    m.set_defer_wanted(wanted);
    r
}

fn row_of(size: usize, b: usize, q: &str, e: &str, r: &StagedRun, ok: bool) -> Row {
    Row {
        size,
        batch: b,
        query: q.to_string(),
        engine: e.to_string(),
        positive: r.positive,
        negative: r.negative,
        seconds: r.seconds,
        fe: r.fe_seconds,
        dc: r.dc_seconds,
        kernel: r.kernel_seconds,
        host_bytes: r.kernel.host_bytes,
        cache_bytes: r.cache_bytes,
        cache_vertices: r.cache_vertices,
        seeds: r.roots as u64,
        tasks: r.tasks as u64,
        split: r.split_seconds,
        seeds_time: r.seeds_seconds,
        nodes: r.kernel.nodes,
        host_lists: r.kernel.host_lists,
        cached_lists: r.kernel.cached_lists,
        staged_lists: r.kernel.staged_lists,
        deferred: r.kernel.deferred,
        kernel_wall: r.kernel.wall_seconds,
        upload: r.kernel.upload_seconds,
        launch_wall: r.kernel.launch_wall_seconds,
        download: r.kernel.download_seconds,
        launches: r.kernel.launches,
        memo_hits: r.kernel.memo_hits,
        memo_misses: r.kernel.memo_misses,
        ok,
        verified: false,
        error: String::new(),
    }
}

/// Stops the CPU count once the deadline passes (prunes every node after).
struct Deadline {
    until: Instant,
    hit: AtomicBool,
}

struct DeadlineVisitor<'a> {
    d: &'a Deadline,
    n: u32,
}

impl Visitor for DeadlineVisitor<'_> {
    /// Only prunes (once the deadline passed), so counting may skip whole
    /// levels as the CPU engine's does (`NoVisitor`): an observing visitor
    /// made the executor enumerate what it counts, 13x slower than the
    /// engine on a skewed R-MAT's house batches.
    const OBSERVES: bool = false;

    #[inline]
    fn enter(&mut self, _depth: usize, _emb: &[VertexId], _level: &Level) -> bool {
        self.n = self.n.wrapping_add(1);
        if self.n & 1023 == 0 && Instant::now() > self.d.until {
            self.d.hit.store(true, Ordering::Relaxed);
        }
        !self.d.hit.load(Ordering::Relaxed)
    }
}

/// `csm_baselines::cpu::count_split` with a deadline: the next level is
/// split across threads when it has at least 48 candidates and two levels
/// remain below it.
fn count_split(g: &DynamicGraph, plan: &Plan, prefix: &[VertexId], ex: &mut Executor, dl: &Deadline) -> u64 {
    let d = prefix.len();
    let mut vis = DeadlineVisitor { d: dl, n: 0 };
    if d + 2 >= plan.depth() || rayon::current_num_threads() == 1 {
        return ex.count(g, plan, prefix, &mut vis);
    }
    if dl.hit.load(Ordering::Relaxed) {
        return 0;
    }
    let mut cands = Vec::new();
    ex.candidates(g, plan, prefix, &mut cands);
    let mut p = [0 as VertexId; 32];
    p[..d].copy_from_slice(prefix);
    if cands.len() < 48 {
        return cands
            .iter()
            .map(|&c| {
                p[d] = c;
                ex.count(g, plan, &p[..=d], &mut vis)
            })
            .sum();
    }
    cands
        .par_chunks(8)
        .map_init(Executor::new, |ex, chunk| {
            let mut p = p;
            chunk
                .iter()
                .map(|&c| {
                    p[d] = c;
                    count_split(g, plan, &p[..=d], ex, dl)
                })
                .sum::<u64>()
        })
        .sum()
}

/// The CPU engine's count of a staged batch on `pool`: the algorithm of
/// `csm_baselines::cpu::count_delta_parallel` (same seeds and symmetry
/// weights, same executor, same splitting of heavy seeds), with a deadline
/// of `limit_s` seconds after which the count is abandoned.
fn cpu_count(
    pool: &rayon::ThreadPool,
    g: &DynamicGraph,
    qp: &QueryPlans,
    delta: &csm_graph::BatchDelta,
    limit_s: f64,
) -> Result<(csm_planner::DeltaCounts, f64), String> {
    let t = Instant::now();
    let dl = Deadline {
        until: t + std::time::Duration::from_secs_f64(limit_s),
        hit: AtomicBool::new(false),
    };
    let seeds = qp.seeds(g, delta);
    let counts = pool.install(|| {
        let one = |ex: &mut Executor, s: &csm_gpu::Seed, split: bool| {
            let p = &qp.plans[s.plan as usize];
            let n = if split {
                count_split(g, &p.plan, &[s.x, s.y], ex, &dl)
            } else {
                ex.count(g, &p.plan, &[s.x, s.y], &mut DeadlineVisitor { d: &dl, n: 0 })
            };
            let mut c = csm_planner::DeltaCounts::default();
            c.add(p.sign, u64::from(s.weight) * n);
            c
        };
        if seeds.len() == 1 {
            let mut ex = Executor::new();
            seeds
                .iter()
                .map(|s| one(&mut ex, s, false))
                .fold(Default::default(), csm_planner::DeltaCounts::merge)
        } else {
            seeds
                .par_iter()
                .map_init(Executor::new, |ex, s| one(ex, s, true))
                .reduce(csm_planner::DeltaCounts::default, csm_planner::DeltaCounts::merge)
        }
    });
    if dl.hit.load(Ordering::Relaxed) {
        return Err(format!("timed out: over {limit_s} s"));
    }
    Ok((counts, t.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::{first_place_warning, mean_ratios, suffix_num, Args, MatcherConfig, MeanRatio, PathBuf, Row};
    use clap::Parser;

    fn row(size: usize, query: &str, engine: &str, seconds: f64) -> Row {
        Row {
            seconds,
            ok: true,
            ..Row::failed(size, 0, query, engine, String::new())
        }
    }

    /// Means of per-row median ratios, against a hand count: medians of
    /// three batches, a row without the baseline and a failed row left out.
    #[test]
    fn mean_ratios_average_per_row_medians() {
        let mut rows = Vec::new();
        for (size, q, zp, g) in [
            (64, "house", [4.0, 2.0, 9.0], [1.0, 1.0, 2.0]),
            (1024, "house", [6.0, 6.0, 6.0], [3.0, 2.0, 1.0]),
        ] {
            for i in 0..3 {
                rows.push(row(size, q, "zp", zp[i]));
                rows.push(row(size, q, "gcsm", g[i]));
            }
        }
        // no zp here: left out; a failed row does not count
        rows.push(row(64, "5-cycle", "gcsm", 1.0));
        rows.push(Row::failed(1024, 1, "house", "gcsm", "timeout".into()));
        let engines = vec!["zp".to_string(), "gcsm".to_string()];
        let got = mean_ratios(&rows, &engines);
        // 64: median 4 / median 1 = 4; 1024: 6 / 2 = 3
        assert_eq!(
            got,
            vec![MeanRatio {
                engine: "gcsm".into(),
                baseline: "zp".into(),
                rows: 2,
                mean: 3.5,
                // (4 + 6) / (1 + 2)
                summed: 10.0 / 3.0,
                by_size: vec![(64, 4.0), (1024, 3.0)],
            }]
        );
        // with the replica beside them: every engine over it, zp included
        for size in [64, 1024] {
            rows.push(row(size, "house", "cpu16", 8.0));
        }
        let engines = vec!["cpu16".to_string(), "zp".to_string(), "gcsm".to_string()];
        let got: Vec<(String, String, f64)> = mean_ratios(&rows, &engines)
            .into_iter()
            .map(|r| (r.engine, r.baseline, r.mean))
            .collect();
        let want = [
            ("gcsm", "zp", 3.5),
            ("zp", "cpu16", (2.0 + 8.0 / 6.0) / 2.0),
            ("gcsm", "cpu16", 6.0),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((e, b, x), (we, wb, wx)) in got.iter().zip(want) {
            assert_eq!((e.as_str(), b.as_str()), (we, wb));
            assert!((x - wx).abs() < 1e-12, "{e} over {b}: {x} against {wx}");
        }
    }

    #[test]
    fn command_line_reads_suffixed_numbers_lists_and_defaults() {
        use clap::CommandFactory;
        Args::command().debug_assert();
        let a = Args::try_parse_from([
            "csm-gpu-bench",
            "--edges",
            "2M",
            "--sizes",
            "64,1k",
            "--variants",
            "cpu-engine,zp,gcsm-persist",
            "--rmat",
            "0.45,0.22,0.22",
            "--split",
            "--insert-prob",
            "1",
            "--out",
            "/tmp/x",
        ])
        .expect("valid")
        .check()
        .expect("checked");
        assert_eq!(a.edges, 2_000_000);
        assert_eq!(a.sizes, [64, 1000]);
        assert_eq!(a.variants, ["cpu-engine", "zp", "gcsm-persist"]);
        assert_eq!(a.rmat, (0.45, 0.22, 0.22));
        assert_eq!(a.insert_prob, 1.0);
        assert!(a.split && !a.wake);
        assert_eq!(a.out_dir, PathBuf::from("/tmp/x"));
        assert_eq!(a.labels, 8);
        assert_eq!(a.defer_wanted, MatcherConfig::default().defer_wanted);
        // bad input is refused with the option named
        for bad in [
            ["--rmat", "0.6,0.3,0.3"],
            ["--edges", "1.5"],
            ["--sizes", "64,x"],
            ["--insert-prob", "1.5"],
        ] {
            let e = Args::try_parse_from(["csm-gpu-bench", bad[0], bad[1]]).expect_err(bad[1]);
            assert!(e.to_string().contains(bad[0]), "{e}");
        }
        let zero = Args::try_parse_from(["csm-gpu-bench", "--sizes", "0"]).expect("parses");
        assert!(zero.check().is_err());
    }

    #[test]
    fn a_compared_engine_in_the_first_gpu_place_is_warned_of() {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(first_place_warning(&v(&["zp", "gcsm-persist"]), false).is_some());
        assert!(first_place_warning(&v(&["cpu16", "gcsm-persist", "zp"]), false).is_some());
        assert!(first_place_warning(&v(&["zp", "gcsm-persist"]), true).is_none());
        assert!(first_place_warning(&v(&["cpu16", "zp-seq", "zp", "gcsm-persist"]), false).is_none());
        assert!(first_place_warning(&v(&["cpu16"]), false).is_none());
    }

    #[test]
    fn engine_suffix_numbers() {
        assert_eq!(suffix_num("gcsm-skip25", "-skip"), Some(25.0));
        assert_eq!(suffix_num("gcsm-skip2.5-nobal", "-skip"), Some(2.5));
        assert_eq!(suffix_num("zp-defer8192", "-defer"), Some(8192.0));
        assert_eq!(suffix_num("gcsm-nodefer", "-defer"), None);
        assert_eq!(suffix_num("gcsm", "-skip"), None);
        assert_eq!(suffix_num("gcsm-persist-fill95-slack16", "-fill"), Some(95.0));
        assert_eq!(suffix_num("gcsm-persist-fill95-slack16", "-slack"), Some(16.0));
        assert_eq!(suffix_num("gcsm-persist-fill100-slack0", "-slice"), None);
    }
}
