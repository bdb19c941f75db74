//! csm-engine: the seams every matcher in csm plugs into.
//!
//! * [`StaticMatcher`]: graph + query → number of embeddings.
//! * [`ContinuousMatcher`]: registered query, then batch → (positive, negative, time).
//! * [`Recount`]: lifts any static matcher to a continuous one, exactly, by
//!   counting G, G' and the common graph G ∩ G' (M(G ∩ G') = M(G) ∩ M(G')).
//! * [`apart`]: [`EdgesApart`], for engines that keep the edges a query
//!   cannot use out of the graph they match on.
//! * [`phased`]: batches that re-add a vertex under another label, as two
//!   batches every engine can stage.

use std::time::Instant;

pub mod apart;
pub use apart::{EdgesApart, RoutedBatch};
pub mod phased;
pub use phased::{process_phases, process_phases_with, relabel_phases, relabel_phases_in};

use csm_graph::{CsrGraph, DynamicGraph, GraphData, InputError, LocatedUpdate, Strictness, Version};
use csm_planner::{count, QueryError, QueryGraph};
use serde::Serialize;

/// Errors an engine reports to its caller.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("invalid query: {0}")]
    Query(#[from] QueryError),
    #[error("engine {engine} does not support this: {reason}")]
    Unsupported { engine: String, reason: String },
    #[error("engine {0} was used before init()")]
    NotInitialised(String),
    #[error("{0}")]
    Other(String),
}

/// One batch as given to [`ContinuousMatcher::process`].
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    pub updates: &'a [LocatedUpdate],
    /// Name of the source (file) for error messages.
    pub source: &'a str,
    pub strictness: Strictness,
}

/// What an engine reports per batch.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BatchResult {
    /// |M(G') \ M(G)|
    pub positive: u64,
    /// |M(G) \ M(G')|
    pub negative: u64,
    /// Matching time (excluding the graph update), seconds.
    pub seconds: f64,
    /// Graph update time (staging + reorganisation), seconds.
    pub update_seconds: f64,
    /// Updates skipped in lenient mode.
    pub skipped: usize,
    /// Engine-specific figures (e.g. a GPU engine's transfer times), flattened into JSON output.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Full (static) matching.
pub trait StaticMatcher: Send + Sync {
    fn name(&self) -> &str;
    /// Number of embeddings of `q` in `g` (automorphic images counted separately).
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError>;

    /// `min(count, limit)`: the count when it is below `limit`, else
    /// `limit` (the `-num` cap of the SubgraphMatching study's tools).
    /// Engines that can stop once they have seen `limit` embeddings
    /// override this; the default counts them all first.
    fn count_at_most(&self, g: &CsrGraph, q: &QueryGraph, limit: u64) -> Result<u64, EngineError> {
        Ok(self.count(g, q)?.min(limit))
    }
}

/// Continuous matching: a query registered on G_0, then a stream of batches.
pub trait ContinuousMatcher: Send {
    fn name(&self) -> &str;
    /// Registers the query on the initial graph.
    fn init(&mut self, g: &GraphData, q: &QueryGraph) -> Result<(), EngineError>;
    /// Applies one batch and reports the matches that appeared and vanished.
    /// On error the engine's graph is unchanged.
    fn process(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError>;

    /// Applies the updates of `batch` one at a time, each as its own batch
    /// in order, and appends one result per update to `out`: the same
    /// results as one [`ContinuousMatcher::process`] call per update, which
    /// is what this default does. Engines may overlap the updates (the `cpu`
    /// engine matches them concurrently, each against the graph at its own
    /// turn); a result's `seconds` is then its share of the run's wall time.
    ///
    /// On error, `out` holds the results of the updates before the failing
    /// one, which are applied; the failing update and the later ones are not.
    fn process_each(&mut self, batch: Batch<'_>, out: &mut Vec<BatchResult>) -> Result<(), EngineError> {
        self.process_each_until(batch, None, out)
    }

    /// [`ContinuousMatcher::process_each`] that starts no update after
    /// `deadline` (none: runs them all): `out` then holds the results of a
    /// prefix of the batch's updates, which are applied, and the rest are
    /// not, so the caller can go on from `out.len()` later. Engines that
    /// overlap updates size their runs so that one ends soon after the
    /// deadline; an update still running at the deadline finishes. This
    /// is how `csm stream --time-limit` reports every update that finished
    /// in time on a one-update-at-a-time stream.
    fn process_each_until(
        &mut self,
        batch: Batch<'_>,
        deadline: Option<Instant>,
        out: &mut Vec<BatchResult>,
    ) -> Result<(), EngineError> {
        process_each_sequentially(self, batch, deadline, out)
    }
}

/// The first run of single updates under a deadline (a caller's run of
/// [`ContinuousMatcher::process_each_until`], an engine's overlapped run):
/// small, so that a stream of heavy updates cannot overshoot the deadline
/// by a whole run; later runs at most double.
pub const FIRST_TIMED_RUN: usize = 16;

/// Whether `deadline` has passed (never, without one).
pub fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// [`ContinuousMatcher::process_each_until`]'s default: one `process` call
/// per update, in order, none started after `deadline` (for engines that
/// overlap only some runs).
pub fn process_each_sequentially<M: ContinuousMatcher + ?Sized>(
    m: &mut M,
    batch: Batch<'_>,
    deadline: Option<Instant>,
    out: &mut Vec<BatchResult>,
) -> Result<(), EngineError> {
    for u in batch.updates {
        if past(deadline) {
            break;
        }
        out.push(m.process(Batch {
            updates: std::slice::from_ref(u),
            ..batch
        })?);
    }
    Ok(())
}

/// Lifts a [`StaticMatcher`] to a [`ContinuousMatcher`] by recounting:
/// positive = |M(G')| − |M(G ∩ G')|, negative = |M(G)| − |M(G ∩ G')|.
pub struct Recount<S> {
    inner: S,
    name: String,
    state: Option<(DynamicGraph, QueryGraph, u64)>,
}

impl<S: StaticMatcher> Recount<S> {
    pub fn new(inner: S) -> Self {
        let name = format!("{}+recount", inner.name());
        Recount {
            inner,
            name,
            state: None,
        }
    }
}

impl<S: StaticMatcher> ContinuousMatcher for Recount<S> {
    fn name(&self) -> &str {
        &self.name
    }
    fn init(&mut self, g: &GraphData, q: &QueryGraph) -> Result<(), EngineError> {
        let dg = DynamicGraph::from_data(g)?;
        let count = self.inner.count(&dg.to_csr(Version::Old), q)?;
        self.state = Some((dg, q.clone(), count));
        Ok(())
    }
    fn process(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        if let Some(phases) = self
            .state
            .as_ref()
            .map(|st| relabel_phases(&st.0, batch))
            .transpose()?
            .flatten()
        {
            return process_phases(self, batch, phases);
        }
        let (g, q, current) = self
            .state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised(self.name.clone()))?;
        let t0 = Instant::now();
        let skipped = g.stage(batch.updates, batch.source, batch.strictness)?.skipped;
        let update_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let counted = (|| -> Result<(u64, u64), EngineError> {
            let after = self.inner.count(&g.to_csr(Version::New), q)?;
            let common = self.inner.count(&g.to_csr(Version::Common), q)?;
            Ok((after, common))
        })();
        let seconds = t1.elapsed().as_secs_f64();
        let t2 = Instant::now();
        let (after, common) = match counted {
            Ok(c) => c,
            Err(e) => {
                g.abort();
                return Err(e);
            }
        };
        g.commit();
        let result = BatchResult {
            positive: count::sub(after, common),
            negative: count::sub(*current, common),
            seconds,
            update_seconds: update_seconds + t2.elapsed().as_secs_f64(),
            skipped,
            extra: Default::default(),
        };
        *current = after;
        Ok(result)
    }
}
