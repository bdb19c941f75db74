//! The registered query's graph without the edges it cannot use
//! ([`csm_graph::relevant`]): batches are split between the matcher's
//! [`DynamicGraph`] and an [`OtherEdges`] map, so an update of a label
//! triple no query edge has costs a hash lookup and no list work, and the
//! lists the matcher intersects hold only edges of the query's triples
//! (RapidFlow's views by label triple).

use std::time::Instant;

use csm_engine::{Batch, BatchResult, EngineError};
use csm_graph::{EdgeFilter, GraphData, OtherEdges, Route, Strictness, ABSENT};
use csm_planner::QueryGraph;

use super::CpuEngine;

/// The edges kept apart and the filter that chose them.
#[derive(Clone)]
pub(super) struct Others {
    filter: EdgeFilter,
    edges: OtherEdges,
}

impl Others {
    /// The filter of `q`'s label triples and `g` split by it; `None` when
    /// the filter could drop nothing (one vertex label throughout and no
    /// edge labels in the query) or `g` has an invalid edge.
    pub(super) fn split(g: &GraphData, q: &QueryGraph) -> Option<(GraphData, Others)> {
        let ql = q.labels();
        let one = ql.iter().all(|&l| l == ql[0]);
        if !q.edge_labelled() && one && g.labels.iter().all(|&l| l == ql[0] || l == ABSENT) {
            return None;
        }
        let filter = EdgeFilter::new(
            q.edges().iter().map(|&(a, b, el)| (ql[a], ql[b], el)),
            q.edge_labelled(),
        );
        let (kept, edges) = filter.split(g)?;
        Some((kept, Others { filter, edges }))
    }

    /// Edges kept apart.
    pub(super) fn len(&self) -> usize {
        self.edges.len()
    }
}

/// A result for an update that went to [`OtherEdges`].
fn apart(update_seconds: f64, skipped: usize) -> BatchResult {
    BatchResult {
        update_seconds,
        skipped,
        ..BatchResult::default()
    }
}

impl CpuEngine {
    /// [`csm_engine::ContinuousMatcher::process`] with the edges kept apart:
    /// the graph's part of the batch through [`CpuEngine::process_graph`],
    /// the rest into the map once the graph took its part.
    pub(super) fn process_split(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        if OtherEdges::removes_vertex(batch.updates) {
            self.merge_others()?;
            return self.process_graph(batch);
        }
        let t0 = Instant::now();
        let (Some(state), Some(others)) = (self.state.as_ref(), self.others.as_ref()) else {
            return Err(EngineError::NotInitialised("cpu".into()));
        };
        let routed = others
            .edges
            .route(&state.0, &others.filter, batch.updates, batch.source, batch.strictness);
        if let Some(err) = routed.error {
            // strict mode: an earlier update the graph rejects comes first
            state.0.check(&routed.graph, batch.source)?;
            return Err(err.into());
        }
        if routed.all_graph() {
            return self.process_graph(batch);
        }
        let routing = t0.elapsed().as_secs_f64();
        let mut result = if routed.graph.is_empty() {
            BatchResult::default()
        } else {
            self.process_graph(Batch {
                updates: &routed.graph,
                ..batch
            })?
        };
        let t1 = Instant::now();
        self.others.as_mut().expect("checked above").edges.apply(&routed.routes);
        result.skipped += routed.skipped;
        result.update_seconds += routing + t1.elapsed().as_secs_f64();
        Ok(result)
    }

    /// [`csm_engine::ContinuousMatcher::process_each`] with the edges kept
    /// apart: the graph's updates go through the overlapped path as one
    /// stream, the others into the map; results come back in the batch's
    /// order.
    pub(super) fn process_each_split(
        &mut self,
        batch: Batch<'_>,
        out: &mut Vec<BatchResult>,
    ) -> Result<(), EngineError> {
        if OtherEdges::removes_vertex(batch.updates) {
            self.merge_others()?;
            return self.process_each_overlapped(batch, out);
        }
        let t0 = Instant::now();
        let (Some(state), Some(others)) = (self.state.as_ref(), self.others.as_ref()) else {
            return Err(EngineError::NotInitialised("cpu".into()));
        };
        let routed = others
            .edges
            .route(&state.0, &others.filter, batch.updates, batch.source, batch.strictness);
        let routing = t0.elapsed().as_secs_f64();
        // the graph's updates, matched with nothing kept apart to route
        let mut inner = Vec::with_capacity(routed.graph.len());
        let others = self.others.take();
        let run = self.process_each_overlapped(
            Batch {
                updates: &routed.graph,
                ..batch
            },
            &mut inner,
        );
        self.others = others;
        // the updates done: those before the graph's failing update, or
        // before the one rejected here, or all
        let graph_done = inner.len();
        let mut done = 0;
        let mut graph_seen = 0;
        for r in &routed.routes {
            if *r == Route::Graph {
                if graph_seen == graph_done {
                    break;
                }
                graph_seen += 1;
            } else if *r == Route::Rejected && batch.strictness == Strictness::Strict {
                break;
            }
            done += 1;
        }
        let t1 = Instant::now();
        let others = self.others.as_mut().expect("split engines keep their map");
        others.edges.apply(&routed.routes[..done]);
        let apart_n = routed.routes[..done].iter().filter(|r| **r != Route::Graph).count();
        let each = (routing + t1.elapsed().as_secs_f64()) / apart_n.max(1) as f64;
        let mut inner = inner.into_iter();
        for r in &routed.routes[..done] {
            out.push(match r {
                Route::Graph => inner.next().expect("one result per graph update"),
                Route::Rejected => apart(each, 1),
                Route::Insert(..) | Route::Remove(_) => apart(each, 0),
            });
        }
        run?;
        match routed.error {
            Some(err) => Err(err.into()),
            None => Ok(()),
        }
    }

    /// Moves the edges kept apart back into the graph (before a batch that
    /// removes a vertex, whose edges may be in either store) and plans
    /// again on the whole graph; later batches are not split.
    fn merge_others(&mut self) -> Result<(), EngineError> {
        let Some(mut others) = self.others.take() else {
            return Ok(());
        };
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised("cpu".into()))?;
        let edges = others.edges.take();
        state.0.apply(&edges, "<edges kept apart>", Strictness::Strict)?;
        let state = self.state.as_ref().expect("checked above");
        let (plans, sym, hubs) = self.planned(&state.0, &state.4, &[]);
        let state = self.state.as_mut().expect("checked above");
        (state.1, state.2, state.3) = (plans, sym, hubs);
        self.reset_learning();
        Ok(())
    }
}
