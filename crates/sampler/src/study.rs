//! [`run_batch_study`]: the cache-effectiveness study of GCSM Sec. VI-D over
//! an update stream. For each batch: stage it, let the policy select (timed:
//! the FE time), run exact incremental matching (timed), count the exact list
//! accesses, compute the metrics of [`crate::metrics`], optionally build the
//! DCSR pack (timed), and commit.

use std::time::Instant;

use csm_graph::phases::{relabels, split_relabels};
use csm_graph::{BatchDelta, DynamicGraph, InputError, LocatedUpdate, Strictness};
use csm_planner::{count_batch, DeltaCounts, DeltaPlan, Executor, NoVisitor};
use serde::Serialize;

use crate::budget::Refinement;
use crate::cache::{CachePolicy, SelectError, SelectionContext};
use crate::dcsr::{DcsrError, DcsrPack};
use crate::exact::{exact_access_counts, exact_access_counts_par};
use crate::metrics::{cache_metrics, fe_fraction, CacheMetrics};
use crate::tree::ExecutionTree;

/// Exact incremental matching of a staged batch, for the FE-fraction
/// denominator, e.g. `csm_baselines::cpu::count_delta_parallel`.
pub type ExactMatcher<'a> = &'a (dyn Fn(&DynamicGraph, &[DeltaPlan], &BatchDelta) -> DeltaCounts + Sync);

/// Single-threaded exact matching (the planner's reference driver).
pub fn sequential_exact_match(g: &DynamicGraph, plans: &[DeltaPlan], delta: &BatchDelta) -> DeltaCounts {
    count_batch(g, plans, delta, &mut Executor::new(), &mut NoVisitor)
}

/// Runs `f` inside a rayon pool of `threads` workers (0 = every core), so
/// that callers need no rayon dependency of their own.
pub fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> Result<R, rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    Ok(pool.install(f))
}

/// Worker threads a pool of `threads` (0 = every core) would have.
pub fn pool_threads(threads: usize) -> usize {
    if threads == 0 {
        rayon::current_num_threads()
    } else {
        threads
    }
}

/// Study parameters.
#[derive(Clone, Debug)]
pub struct StudyConfig {
    /// Updates per batch (> 0).
    pub batch_size: usize,
    /// Byte budget of the cache (DCSR pack size).
    pub budget_bytes: usize,
    /// Stop after this many batches.
    pub max_batches: Option<usize>,
    pub strictness: Strictness,
    /// Source name for update errors.
    pub source: String,
    /// Build the DCSR pack of each selection (and time it).
    pub pack: bool,
    /// Count exact accesses with rayon.
    pub parallel_exact: bool,
}

impl Default for StudyConfig {
    fn default() -> Self {
        StudyConfig {
            batch_size: 4096,
            budget_bytes: usize::MAX,
            max_batches: None,
            strictness: Strictness::Strict,
            source: "<updates>".into(),
            pack: true,
            parallel_exact: true,
        }
    }
}

/// Why a study stopped.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("DCSR pack: {0}")]
    Pack(#[from] DcsrError),
    #[error("batch size must be at least 1")]
    BatchSize,
}

/// One batch's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BatchReport {
    pub batch: usize,
    pub updates: usize,
    pub inserted: usize,
    pub deleted: usize,
    pub skipped: usize,
    /// `R`: root nodes of the execution tree.
    pub roots: usize,
    /// `D`.
    pub max_degree: usize,
    /// Tree nodes that read lists (exact).
    pub tree_nodes: u64,
    pub positive: u64,
    pub negative: u64,
    pub walks: Option<u64>,
    pub sampled_vertices: Option<usize>,
    pub refinement: Option<Refinement>,
    pub cached_vertices: usize,
    pub cached_bytes: usize,
    /// Bytes the policy wanted when it went over budget (k-hop).
    pub over_budget_bytes: Option<usize>,
    #[serde(flatten)]
    pub metrics: CacheMetrics,
    pub stage_seconds: f64,
    /// Policy selection time (frequency estimation for the sampled policy).
    pub select_seconds: f64,
    /// Exact incremental matching time.
    pub match_seconds: f64,
    pub fe_fraction: f64,
    pub exact_count_seconds: f64,
    pub pack_seconds: f64,
    pub pack_bytes: usize,
    pub commit_seconds: f64,
}

/// Averages over the batches that accessed any list.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StudySummary {
    pub policy: String,
    pub batches: usize,
    /// Batches with at least one access (the averages are over these).
    pub measured_batches: usize,
    pub coverage_top1: f64,
    pub coverage_top5: f64,
    pub top1_access_share: f64,
    pub top5_access_share: f64,
    pub hit_rate: f64,
    /// Mean of the per-batch FE fractions.
    pub fe_fraction: f64,
    /// Σ select time / Σ match time.
    pub fe_fraction_total: f64,
    /// Mean walks per batch (0 for policies that do not walk).
    pub walks: f64,
    pub roots: f64,
    /// Mean `D` (max degree while the batch is staged).
    pub max_degree: f64,
    pub cached_vertices: f64,
    pub cached_bytes: f64,
    pub accessed_vertices: f64,
    pub over_budget_batches: usize,
    pub select_seconds: f64,
    pub match_seconds: f64,
    pub exact_count_seconds: f64,
    pub pack_seconds: f64,
    pub positive: u64,
    pub negative: u64,
}

impl StudySummary {
    /// Folds the batch reports into averages.
    pub fn of(policy: &str, reports: &[BatchReport]) -> StudySummary {
        let measured: Vec<&BatchReport> = reports.iter().filter(|r| r.metrics.total_accesses > 0.0).collect();
        let k = measured.len().max(1) as f64;
        let mean = |f: &dyn Fn(&BatchReport) -> f64| measured.iter().fold(0.0, |a, r| a + f(r)) / k;
        let sum = |f: &dyn Fn(&BatchReport) -> f64| reports.iter().fold(0.0, |a, r| a + f(r));
        StudySummary {
            policy: policy.to_string(),
            batches: reports.len(),
            measured_batches: measured.len(),
            coverage_top1: mean(&|r| r.metrics.coverage_top1),
            coverage_top5: mean(&|r| r.metrics.coverage_top5),
            top1_access_share: mean(&|r| r.metrics.top1_access_share),
            top5_access_share: mean(&|r| r.metrics.top5_access_share),
            hit_rate: mean(&|r| r.metrics.hit_rate),
            fe_fraction: mean(&|r| r.fe_fraction),
            fe_fraction_total: fe_fraction(sum(&|r| r.select_seconds), sum(&|r| r.match_seconds)),
            walks: mean(&|r| r.walks.unwrap_or(0) as f64),
            roots: mean(&|r| r.roots as f64),
            max_degree: mean(&|r| r.max_degree as f64),
            cached_vertices: mean(&|r| r.cached_vertices as f64),
            cached_bytes: mean(&|r| r.cached_bytes as f64),
            accessed_vertices: mean(&|r| r.metrics.accessed_vertices as f64),
            over_budget_batches: reports.iter().filter(|r| r.over_budget_bytes.is_some()).count(),
            select_seconds: sum(&|r| r.select_seconds),
            match_seconds: sum(&|r| r.match_seconds),
            exact_count_seconds: sum(&|r| r.exact_count_seconds),
            pack_seconds: sum(&|r| r.pack_seconds),
            positive: reports.iter().map(|r| r.positive).sum(),
            negative: reports.iter().map(|r| r.negative).sum(),
        }
    }
}

/// Runs the study over `updates` in batches of `cfg.batch_size` (see the
/// module docs), calling `on_batch` after each. `g` ends with every processed
/// batch committed. A batch that re-adds a vertex under another label
/// ([`csm_graph::phases`]) gives two reports of the same batch number, its
/// removal phase and its addition phase, as the engines process it.
pub fn run_batch_study(
    g: &mut DynamicGraph,
    plans: &[DeltaPlan],
    updates: &[LocatedUpdate],
    policy: &dyn CachePolicy,
    cfg: &StudyConfig,
    exact: ExactMatcher<'_>,
    mut on_batch: impl FnMut(&BatchReport),
) -> Result<(Vec<BatchReport>, StudySummary), StudyError> {
    if cfg.batch_size == 0 {
        return Err(StudyError::BatchSize);
    }
    let mut reports = Vec::new();
    for (i, chunk) in updates.chunks(cfg.batch_size).enumerate() {
        if cfg.max_batches.is_some_and(|m| i >= m) {
            break;
        }
        // a batch that re-adds a vertex under another label: studied as the
        // two batches every engine processes it as
        let phases = match relabels(&*g, chunk) {
            true => Some(split_relabels(&*g, chunk, &cfg.source, cfg.strictness)?),
            false => None,
        };
        let parts: Vec<&[LocatedUpdate]> = match &phases {
            Some(p) => [&p.removal[..], &p.addition[..]]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect(),
            None => vec![chunk],
        };
        for (k, part) in parts.into_iter().enumerate() {
            let mut r = study_batch(g, plans, part, i, policy, cfg, exact)?;
            if k == 0 {
                r.skipped += phases.as_ref().map_or(0, |p| p.skipped);
            }
            on_batch(&r);
            reports.push(r);
        }
    }
    let summary = StudySummary::of(&policy.name(), &reports);
    Ok((reports, summary))
}

/// One batch of [`run_batch_study`]; the batch is committed on success and
/// aborted on error.
pub fn study_batch(
    g: &mut DynamicGraph,
    plans: &[DeltaPlan],
    chunk: &[LocatedUpdate],
    index: usize,
    policy: &dyn CachePolicy,
    cfg: &StudyConfig,
    exact: ExactMatcher<'_>,
) -> Result<BatchReport, StudyError> {
    let t = Instant::now();
    let skipped = g.stage(chunk, &cfg.source, cfg.strictness)?.skipped;
    let mut r = BatchReport {
        batch: index,
        updates: chunk.len(),
        skipped,
        stage_seconds: t.elapsed().as_secs_f64(),
        ..BatchReport::default()
    };
    let gr: &DynamicGraph = g;
    let delta = gr.pending_delta().expect("staged");
    r.inserted = delta.inserted.len();
    r.deleted = delta.deleted.len();

    let ctx = SelectionContext {
        graph: gr,
        delta,
        plans,
        budget_bytes: cfg.budget_bytes,
        seed: index as u64,
    };
    let t = Instant::now();
    let sel = match policy.select_report(&ctx) {
        Ok(s) => s,
        Err(SelectError::OverBudget {
            needed_bytes, partial, ..
        }) => {
            r.over_budget_bytes = Some(needed_bytes);
            *partial
        }
    };
    r.select_seconds = t.elapsed().as_secs_f64();
    r.walks = sel.walks;
    r.sampled_vertices = sel.sampled;
    r.refinement = sel.refinement;
    r.cached_vertices = sel.vertices.len();
    r.cached_bytes = sel.bytes;

    let t = Instant::now();
    let counts = exact(gr, plans, delta);
    r.match_seconds = t.elapsed().as_secs_f64();
    r.positive = counts.positive;
    r.negative = counts.negative;
    r.fe_fraction = fe_fraction(r.select_seconds, r.match_seconds);

    let t = Instant::now();
    let tree = ExecutionTree::new(gr, plans, delta);
    r.roots = tree.num_roots();
    r.max_degree = tree.max_degree;
    let ex = if cfg.parallel_exact {
        exact_access_counts_par(&tree)
    } else {
        exact_access_counts(&tree)
    };
    r.exact_count_seconds = t.elapsed().as_secs_f64();
    r.tree_nodes = ex.nodes;
    r.metrics = cache_metrics(&ex.counts, &sel.vertices);

    if cfg.pack {
        let t = Instant::now();
        let pack = match DcsrPack::build(gr, &sel.vertices) {
            Ok(p) => p,
            Err(e) => {
                g.abort();
                return Err(e.into());
            }
        };
        r.pack_seconds = t.elapsed().as_secs_f64();
        r.pack_bytes = pack.bytes();
    }
    let t = Instant::now();
    g.commit();
    r.commit_seconds = t.elapsed().as_secs_f64();
    Ok(r)
}
