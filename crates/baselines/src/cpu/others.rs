//! The registered query's graph without the edges it cannot use
//! ([`csm_graph::relevant`], [`csm_engine::EdgesApart`]): batches are split between
//! the matcher's `DynamicGraph` and a set of the other edges, so an update
//! of a label triple no query edge has costs a set lookup and no list
//! work, and the lists the matcher intersects hold only edges of the
//! query's triples (RapidFlow's views by label triple).

use std::sync::Arc;
use std::time::Instant;

use csm_engine::apart::apart_result;
use csm_engine::{past, Batch, BatchResult, EngineError};
use csm_graph::{Route, Strictness};

use super::{graph_work, CpuEngine};

impl CpuEngine {
    /// [`csm_engine::ContinuousMatcher::process`] with edges kept apart:
    /// the graph's part of the batch through [`CpuEngine::process_graph`],
    /// the rest into the set once the graph took its part.
    pub(super) fn process_split(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let (Some(state), Some(apart)) = (self.state.as_ref(), self.apart.as_ref()) else {
            return Err(EngineError::NotInitialised("cpu".into()));
        };
        // large batches look their edges up on the pool
        let pool = Arc::clone(&self.pool);
        let on_pool = self.threads > 1 && apart.wants_pool(batch.updates.len());
        let routed = graph_work(&pool, on_pool, || apart.route(&state.0, batch))?;
        if routed.all_graph() {
            return self.process_graph(batch);
        }
        let result = routed.process_graph_part(batch, |b| self.process_graph(b))?;
        Ok(routed.finish(self.apart.as_mut().expect("checked above"), result))
    }

    /// [`csm_engine::ContinuousMatcher::process_each`] with edges kept
    /// apart: the graph's updates go through the overlapped path as one
    /// stream, the others into the set; results come back in the batch's
    /// order. Past `deadline` the graph's part stops
    /// ([`csm_engine::ContinuousMatcher::process_each_until`]); the batch
    /// then ends after its last finished graph update (the set's updates
    /// are applied after the graph's, so those after it count as not
    /// started).
    pub(super) fn process_each_split(
        &mut self,
        batch: Batch<'_>,
        deadline: Option<Instant>,
        out: &mut Vec<BatchResult>,
    ) -> Result<(), EngineError> {
        let (Some(state), Some(apart)) = (self.state.as_ref(), self.apart.as_ref()) else {
            return Err(EngineError::NotInitialised("cpu".into()));
        };
        if past(deadline) {
            return Ok(());
        }
        let (routed, routing) = apart.route_each(&state.0, batch);
        // the graph's updates, matched with nothing kept apart to route
        let mut inner = Vec::with_capacity(routed.graph.len());
        let apart = self.apart.take();
        let run = self.process_each_overlapped(
            Batch {
                updates: &routed.graph,
                ..batch
            },
            deadline,
            &mut inner,
        );
        self.apart = apart;
        // the updates done: those before the graph's failing update, or
        // before the one rejected here, or all
        let graph_done = inner.len();
        let stopped = run.is_ok() && graph_done < routed.graph.len();
        let mut done = 0;
        let mut graph_seen = 0;
        // the updates up to the last finished graph update, when stopped
        let mut through_graph = 0;
        for r in &routed.routes {
            if r.to_graph() {
                if graph_seen == graph_done {
                    break;
                }
                graph_seen += 1;
                through_graph = done + 1;
            } else if *r == Route::Rejected && batch.strictness == Strictness::Strict {
                break;
            }
            done += 1;
        }
        if stopped {
            done = through_graph;
        }
        let t = Instant::now();
        let apart = self.apart.as_mut().expect("split engines keep their set");
        apart.apply_first(&routed, done);
        let in_map = routed.routes[..done].iter().filter(|r| !r.to_graph()).count();
        let each = (routing + t.elapsed().as_secs_f64()) / in_map.max(1) as f64;
        let mut inner = inner.into_iter();
        for r in &routed.routes[..done] {
            out.push(match r {
                Route::Graph | Route::GraphRemoving(_) => inner.next().expect("one result per graph update"),
                Route::Rejected => apart_result(each, 1),
                Route::Insert(..) | Route::Remove(_) => apart_result(each, 0),
            });
        }
        run?;
        if stopped {
            // the deadline came before any rejected update
            return Ok(());
        }
        match routed.error {
            Some(err) => Err(err.into()),
            None => Ok(()),
        }
    }
}
