//! GENEVA (Lu et al., "Fast GPU-based Subgraph Search Using Parallel Vertex
//! Matching", paper 002) as a CPU-parallel static matcher, structured step
//! for step like the GPU kernels so that a GPU port is mechanical.
//!
//! | module | paper |
//! |---|---|
//! | [`pcsr`] | interval-PCSR storage (Sec. 4), GENMAP VID renaming (Alg. 2) |
//! | [`decompose`] | core / tree decomposition (Sec. 2.1, after CFL), smallest cycle |
//! | [`symmetry`] | GraphZero/GraphPi VID-order restrictions (Sec. 2.1, Alg. 8 line 1) |
//! | [`patterns`] | matching patterns P0–P7 (Fig. 1 as NOTES.md reads it), DOUEXT / OPTDOUEXT / NEXT (Alg. 4–6, defects fixed) |
//! | [`order`] | phase queue (Alg. 8; acyclic queries rooted as CFL does), priorities (Sec. 5.5) |
//! | [`phases`] | extension kernel (Alg. 3), elimination kernel (Alg. 7), breadth-first driver (Alg. 1) |
//!
//! **Semantics.** GENEVA counts unique subgraphs (symmetry restrictions);
//! csm reports embeddings, so [`Geneva`] returns `unique × |Aut(Q)|` with
//! labelled automorphisms ([`QueryGraph::automorphism_count`]). With
//! `symmetry_breaking = false` no restriction is generated and every
//! embedding is enumerated (a cross-check; the tests run both). Edge labels
//! are honoured only when the query is edge-labelled; otherwise the graph is
//! stored as one partition.
//!
//! **Parallelism.** Breadth-first, one kernel per phase: a rayon parallel
//! map over the materialised partial embeddings (rows of VIDs), where a GPU
//! would run one warp per row; per-worker output buffers stand for the
//! `atomicAdd`-reserved write ranges. Output is bounded by a memory budget
//! for the whole run (blocks, and a row's output flushed in pieces, see
//! [`phases`]), like a GPU's fixed result buffer.
//!
//! **PV versus SV (Sec. 8.3).** `multi_vertex = false` splits every
//! extension phase into single-vertex (P0) phases exactly as the paper's
//! SV-match variant does, keeping the order, the storage, the restrictions
//! and the elimination phases; [`Geneva::run`] reports time, phases, number
//! of PV phases and the rows / VIDs materialised between phases, so the two
//! can be compared on the same query:
//!
//! ```no_run
//! # use csm_baselines::geneva::Geneva;
//! # fn f(g: &csm_graph::CsrGraph, q: &csm_planner::QueryGraph) {
//! let pv = Geneva::new(0).unwrap().run(g, q);
//! let sv = Geneva::new(0).unwrap().with_multi_vertex(false).run(g, q);
//! assert_eq!(pv.embeddings, sv.embeddings);
//! println!("PV {:.3}s ({} PV phases, {} VIDs written), SV {:.3}s ({} VIDs written)",
//!     pv.match_seconds, pv.pv_phases, pv.words_written, sv.match_seconds, sv.words_written);
//! # }
//! ```
//!
//! `crates/baselines/tests/geneva.rs` has an ignored timing test that prints
//! this split (see BENCH-geneva-rapidflow.md).

pub mod decompose;
pub mod order;
pub mod patterns;
pub mod pcsr;
pub mod phases;
pub mod symmetry;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use csm_engine::{EngineError, StaticMatcher};
use csm_graph::{CsrGraph, Label};
use csm_planner::{count, QueryGraph};

pub use order::{Phase, Plan};
pub use patterns::Pattern;
pub use pcsr::IntervalPcsr;

/// Default bound on the VIDs the phases' blocks hold together (256 MiB; see
/// [`phases`] for what else a run holds).
pub const DEFAULT_BUDGET_WORDS: usize = 1 << 26;

/// The GENEVA engine (static; `csm stream` lifts it with [`csm_engine::Recount`]).
#[derive(Clone)]
pub struct Geneva {
    /// Parallel vertex matching (patterns P1–P7); `false` = SV-match.
    pub multi_vertex: bool,
    /// Count unique subgraphs under VID-order restrictions and multiply by
    /// |Aut(Q)| (the paper's scheme); `false` enumerates every embedding.
    pub symmetry_breaking: bool,
    /// Bound on the VIDs the blocks of all phases hold at once (each phase
    /// gets an even share, at least 64).
    pub budget_words: usize,
    pool: Arc<rayon::ThreadPool>,
}

/// Outcome and figures of one [`Geneva::run`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GenevaReport {
    /// Embeddings (automorphic images counted separately).
    pub embeddings: u64,
    /// Unique subgraphs when symmetry breaking is on, else `embeddings`.
    pub unique: u64,
    pub phases: usize,
    pub pv_phases: usize,
    /// Interval-PCSR conversion (the paper's offline step), seconds.
    pub build_seconds: f64,
    /// Planning and matching, seconds.
    pub match_seconds: f64,
    pub pcsr_bytes: usize,
    pub intervals: usize,
    pub partitions: usize,
    /// Partial embeddings and VIDs written between phases; largest block.
    pub rows_written: u64,
    pub words_written: u64,
    pub peak_words: u64,
}

impl Geneva {
    /// PV matching with symmetry breaking on `threads` workers (0 = all cores).
    pub fn new(threads: usize) -> Result<Geneva, EngineError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| EngineError::Other(format!("cannot start thread pool: {e}")))?;
        Ok(Geneva {
            multi_vertex: true,
            symmetry_breaking: true,
            budget_words: DEFAULT_BUDGET_WORDS,
            pool: Arc::new(pool),
        })
    }

    pub fn with_multi_vertex(mut self, on: bool) -> Self {
        self.multi_vertex = on;
        self
    }

    pub fn with_symmetry_breaking(mut self, on: bool) -> Self {
        self.symmetry_breaking = on;
        self
    }

    pub fn with_budget_words(mut self, words: usize) -> Self {
        self.budget_words = words;
        self
    }

    /// The phase queue for `q` on an already converted graph.
    pub fn plan(&self, g: &IntervalPcsr, q: &QueryGraph) -> Plan {
        order::plan(q, &Stats(g), self.multi_vertex)
    }

    /// Converts `g`, plans and matches `q`.
    pub fn run(&self, g: &CsrGraph, q: &QueryGraph) -> GenevaReport {
        self.pool.install(|| {
            let t0 = Instant::now();
            let pcsr = IntervalPcsr::build(g, q.edge_labelled());
            let build_seconds = t0.elapsed().as_secs_f64();
            let mut r = self.run_on(&pcsr, q);
            r.build_seconds = build_seconds;
            r
        })
    }

    /// Plans and matches `q` on an already converted graph (built with
    /// `edge_labels = q.edge_labelled()`).
    pub fn run_on(&self, pcsr: &IntervalPcsr, q: &QueryGraph) -> GenevaReport {
        self.pool.install(|| {
            let t1 = Instant::now();
            let plan = self.plan(pcsr, q);
            let restrictions = if self.symmetry_breaking {
                symmetry::restrictions(q, &plan.order)
            } else {
                Vec::new()
            };
            let stats = phases::RunStats::default();
            let unique = phases::execute(pcsr, q, &plan, &restrictions, self.budget_words, &stats);
            let aut = if self.symmetry_breaking {
                q.automorphism_count()
            } else {
                1
            };
            GenevaReport {
                embeddings: count::from_wide(u128::from(unique).saturating_mul(aut)),
                unique,
                phases: plan.phases.len(),
                pv_phases: plan.pv_phases(),
                build_seconds: 0.0,
                match_seconds: t1.elapsed().as_secs_f64(),
                pcsr_bytes: pcsr.memory_bytes(),
                intervals: pcsr.num_intervals(),
                partitions: pcsr.partitions.len(),
                rows_written: stats.rows_written.load(Ordering::Relaxed),
                words_written: stats.words_written.load(Ordering::Relaxed),
                peak_words: stats.peak_words.load(Ordering::Relaxed),
            }
        })
    }
}

/// Label frequencies from the partitions' label-sorted row lists.
struct Stats<'a>(&'a IntervalPcsr);

impl order::Frequencies for Stats<'_> {
    fn freq(&self, l: Label, el: Label) -> usize {
        self.0
            .partition(el)
            .map_or(0, |p| p.rows_with_label(&self.0.labels, l).len())
    }
}

impl StaticMatcher for Geneva {
    fn name(&self) -> &str {
        if self.multi_vertex {
            "geneva"
        } else {
            "geneva-sv"
        }
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        Ok(self.run(g, q).embeddings)
    }
}
