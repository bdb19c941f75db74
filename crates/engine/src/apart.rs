//! [`EdgesApart`]: what an engine that serves one query needs to keep the
//! edges the query cannot use out of the graph it matches on
//! ([`csm_graph::relevant`]): the split at `init`, and each batch routed
//! between the graph and the set of the other edges, with the errors of the
//! whole graph's validation.

use std::borrow::Cow;
use std::time::Instant;

use csm_graph::{
    compact, CsrGraph, DynamicGraph, EdgeFilter, GraphData, InputError, OtherEdges, Routed, WholeGraph, ABSENT,
};
use csm_planner::QueryGraph;

use crate::{Batch, BatchResult, EngineError};

/// A query's [`EdgeFilter`] and the edges it drops.
#[derive(Clone, Debug)]
pub struct EdgesApart {
    filter: EdgeFilter,
    edges: OtherEdges,
}

impl EdgesApart {
    /// `g` without the edges whose label triple no edge of `q` has, and
    /// those edges; `None` when the filter could drop nothing (one vertex
    /// label throughout and no edge labels in the query) or `g` has an
    /// invalid edge (which building the whole graph then reports).
    pub fn split(g: &GraphData, q: &QueryGraph) -> Option<(GraphData, EdgesApart)> {
        let filter = Self::filter(g, q)?;
        let (kept, edges) = filter.split(g)?;
        Some((kept, EdgesApart { filter, edges }))
    }

    /// The graph an engine registers `q` on: with `filter` on and labels
    /// that tell edges apart, the edges of `q`'s triples and the others
    /// apart; else all of `g`.
    pub fn graph_for(
        g: &GraphData,
        q: &QueryGraph,
        filter: bool,
    ) -> Result<(DynamicGraph, Option<EdgesApart>), EngineError> {
        Ok(match filter.then(|| Self::split(g, q)).flatten() {
            Some((kept, apart)) => (DynamicGraph::from_data(&kept)?, Some(apart)),
            None => (DynamicGraph::from_data(g)?, None),
        })
    }

    /// `g` with only the edges of `q`'s label triples, for a static count
    /// ([`EdgeFilter::kept`]); `None` as for [`EdgesApart::split`].
    pub fn kept(g: &GraphData, q: &QueryGraph) -> Option<GraphData> {
        Self::filter(g, q)?.kept(g)
    }

    /// The graph a static count of `q` runs on: with `filter` on, the edges
    /// of `q`'s label triples where that drops anything, without the
    /// vertices they leave isolated where those are at least half of them
    /// (renumbered: [`compact::without_isolated`]); else `g`. Its vertex ids
    /// are `g`'s only when nothing was dropped, so it serves counts, not
    /// reports of vertices.
    pub fn counted_graph<'g>(g: &'g GraphData, q: &QueryGraph, filter: bool) -> Cow<'g, GraphData> {
        match filter.then(|| Self::kept(g, q)).flatten() {
            Some(kept) => Cow::Owned(compact::without_isolated(&kept, 0.5).unwrap_or(kept)),
            None => Cow::Borrowed(g),
        }
    }

    /// The CSR snapshot of [`EdgesApart::counted_graph`]. A build error
    /// (a repeated pair: the readers reject those, a caller's `GraphData`
    /// may hold one) is the whole graph's, which names `g`'s vertex ids
    /// and edge positions rather than the counted graph's.
    pub fn counted_csr(g: &GraphData, q: &QueryGraph, filter: bool) -> Result<CsrGraph, InputError> {
        let counted = Self::counted_graph(g, q, filter);
        CsrGraph::from_data(&counted).map_err(|e| match counted {
            Cow::Owned(_) => CsrGraph::from_data(g).err().unwrap_or(e),
            Cow::Borrowed(_) => e,
        })
    }

    /// `q`'s filter, unless it could drop nothing from `g` (one vertex
    /// label throughout and no edge labels in the query).
    fn filter(g: &GraphData, q: &QueryGraph) -> Option<EdgeFilter> {
        let ql = q.labels();
        let one = ql.iter().all(|&l| l == ql[0]);
        if !q.edge_labelled() && one && g.labels.iter().all(|&l| l == ql[0] || l == ABSENT) {
            return None;
        }
        Some(Self::query_filter(q))
    }

    /// The filter of `q`'s label triples (its edges' end labels and, for
    /// an edge-labelled query, edge labels).
    pub fn query_filter(q: &QueryGraph) -> EdgeFilter {
        let ql = q.labels();
        EdgeFilter::new(
            q.edges().iter().map(|&(a, b, el)| (ql[a], ql[b], el)),
            q.edge_labelled(),
        )
    }

    /// The whole graph, `g` (the kept edges) and the edges held here, as
    /// a batch's validation sees it ([`crate::relabel_phases`]).
    pub fn whole<'a>(&'a self, g: &'a DynamicGraph) -> WholeGraph<'a> {
        self.edges.with(g)
    }

    /// Edges kept apart.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// Whether routing a batch of `n` updates pays on a pool
    /// ([`OtherEdges::wants_pool`]): callers with one run
    /// [`EdgesApart::route`] inside it then.
    pub fn wants_pool(&self, n: usize) -> bool {
        self.edges.wants_pool(n)
    }

    /// Sets the batch size from which routing goes to the caller's pool
    /// ([`OtherEdges::set_parallel_min`]), for tests and experiments.
    pub fn set_parallel_min(&mut self, updates: usize) {
        self.edges.set_parallel_min(updates);
    }

    /// Heap bytes of the set.
    pub fn memory_bytes(&self) -> usize {
        self.edges.memory_bytes()
    }

    /// Routes `batch` between `g` (nothing pending) and the set
    /// ([`OtherEdges::route`]), in lenient mode, or in strict mode up to its
    /// first invalid update, which is then the error returned: the one the
    /// whole graph's validation names (an update `g` rejects before an
    /// insertion the set rejects comes first).
    pub fn route(&self, g: &DynamicGraph, batch: Batch<'_>) -> Result<RoutedBatch, EngineError> {
        let t0 = Instant::now();
        let routed = self
            .edges
            .route(g, &self.filter, batch.updates, batch.source, batch.strictness);
        let seconds = t0.elapsed().as_secs_f64();
        if let Some(err) = routed.error {
            g.check(&routed.graph, batch.source)?;
            return Err(err.into());
        }
        Ok(RoutedBatch { routed, seconds })
    }

    /// Routes `batch` for one-at-a-time processing
    /// ([`OtherEdges::route_each`]: a vertex removed may come back under
    /// another label): as [`EdgesApart::route`], but a strict error stays
    /// in the routes (the updates before it are still processed), and the
    /// seconds spent.
    pub fn route_each(&self, g: &DynamicGraph, batch: Batch<'_>) -> (Routed, f64) {
        let t0 = Instant::now();
        let routed = self
            .edges
            .route_each(g, &self.filter, batch.updates, batch.source, batch.strictness);
        (routed, t0.elapsed().as_secs_f64())
    }

    /// Applies the first `n` routes of `routed` to the set (their
    /// insertions and deletions; [`OtherEdges::apply_first`]).
    pub fn apply_first(&mut self, routed: &Routed, n: usize) {
        self.edges.apply_first(routed, n);
    }
}

/// A batch routed by [`EdgesApart::route`].
#[derive(Debug)]
pub struct RoutedBatch {
    routed: Routed,
    seconds: f64,
}

impl RoutedBatch {
    /// Whether every update goes to the graph (then process the batch as
    /// given and drop this).
    pub fn all_graph(&self) -> bool {
        self.routed.all_graph()
    }

    /// Runs `process` on the graph's part of `batch` (nothing when the
    /// part is empty), for [`RoutedBatch::finish`].
    pub fn process_graph_part(
        &self,
        batch: Batch<'_>,
        process: impl FnOnce(Batch<'_>) -> Result<BatchResult, EngineError>,
    ) -> Result<Option<BatchResult>, EngineError> {
        if self.routed.graph.is_empty() {
            return Ok(None);
        }
        process(Batch {
            updates: &self.routed.graph,
            ..batch
        })
        .map(Some)
    }

    /// Once the graph took its part (with `result`, or none when the part
    /// was empty): applies the set's part and charges it, and the routing,
    /// to the batch's update time.
    pub fn finish(self, apart: &mut EdgesApart, result: Option<BatchResult>) -> BatchResult {
        let t = Instant::now();
        apart.edges.apply(&self.routed);
        let mut r = result.unwrap_or_default();
        r.skipped += self.routed.skipped;
        r.update_seconds += self.seconds + t.elapsed().as_secs_f64();
        r
    }
}

/// The result of an update that went to the set.
pub fn apart_result(update_seconds: f64, skipped: usize) -> BatchResult {
    BatchResult {
        update_seconds,
        skipped,
        ..BatchResult::default()
    }
}
