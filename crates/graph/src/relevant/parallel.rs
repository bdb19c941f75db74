//! The lookups of a large batch of edge updates, on a rayon pool.
//!
//! Routing in order ([`Router::route_in_order`]) needs, per update, its
//! end labels, whether the filter keeps its triple and, for the first
//! update of each edge, whether the set holds the edge: a binary search,
//! the bulk of the time. Without vertex updates in the batch none of these
//! depend on the updates before, so they are looked up on the pool first
//! and the in-order pass only follows each edge's place through the batch.

use rayon::prelude::*;

use super::{LookedUp, Router};
use crate::types::{LocatedUpdate, Update};

/// Smallest share of a batch one task looks up.
const MIN_TASK: usize = 256;

/// Per update of `updates` (edge updates only, on the current pool): what
/// routing it in order would look up before any update of the batch.
pub(super) fn look_up(router: &Router<'_>, updates: &[LocatedUpdate]) -> Vec<LookedUp> {
    updates
        .par_iter()
        .with_min_len(MIN_TASK)
        .map(|lu| {
            let (Update::AddEdge(e) | Update::RemoveEdge(e)) = lu.update else {
                unreachable!("edge updates only")
            };
            let u = router.edge(&lu.update, router.committed_label(e.u), router.committed_label(e.v))?;
            Some((u, Some(router.first_place(u.key))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::OtherEdges;
    use crate::dynamic::{DynamicGraph, Strictness};
    use crate::relevant::EdgeFilter;
    use crate::types::{Edge, GraphData, LocatedUpdate, Update};

    /// What must agree between two routings of one batch.
    fn summary(r: &super::super::Routed) -> (Vec<super::super::Route>, Vec<LocatedUpdate>, Option<String>, usize) {
        let error = r.error.as_ref().map(|e| e.to_string());
        (r.routes.clone(), r.graph.clone(), error, r.skipped)
    }

    /// Degrees without trailing zeros (a key inserted and removed in one
    /// batch may grow the vector in order, not by its net change).
    fn degrees(o: &OtherEdges) -> Vec<u32> {
        let mut d = o.degree.clone();
        while d.last() == Some(&0) {
            d.pop();
        }
        d
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// On a pool, large batches of edge updates (many repeated edges,
        /// invalid ones of every kind) route exactly as in order, and
        /// applying their routes (with the slots found on the pool) leaves
        /// the set as the in-order routes do.
        #[test]
        fn routes_on_a_pool_as_in_order(
            labels in proptest::collection::vec(0u32..3, 12..24),
            edges in proptest::collection::vec((0u32..24, 0u32..24, 0u32..2), 0..120),
            triples in proptest::collection::vec((0u32..3, 0u32..3, 0u32..2), 1..4),
            batch in proptest::collection::vec((any::<bool>(), 0u32..26, 0u32..26, 0u32..2), 0..500),
            edge_labelled in any::<bool>(),
            strict in any::<bool>(),
        ) {
            let n = labels.len() as u32;
            let mut seen = std::collections::BTreeSet::new();
            let edges: Vec<Edge> = edges
                .into_iter()
                .filter(|&(a, b, _)| a != b && a < n && b < n && seen.insert((a.min(b), a.max(b))))
                .map(|(a, b, l)| Edge::new(a, b, if edge_labelled { l } else { 0 }))
                .collect();
            let g = GraphData { labels, edges, edge_labelled };
            let filter = EdgeFilter::new(triples, edge_labelled);
            let Some((kept, mut other)) = filter.split(&g) else {
                return Ok(());
            };
            let dg = DynamicGraph::from_data(&kept).unwrap();
            let updates: Vec<LocatedUpdate> = batch
                .into_iter()
                .enumerate()
                .map(|(i, (insert, a, b, l))| {
                    let e = Edge::new(a, b, if edge_labelled { l } else { 0 });
                    let update = if insert { Update::AddEdge(e) } else { Update::RemoveEdge(e) };
                    LocatedUpdate { line: i + 1, update }
                })
                .collect();
            let strictness = if strict { Strictness::Strict } else { Strictness::Lenient };
            let in_order = other.route(&dg, &filter, &updates, "s", strictness);
            other.set_parallel_min(0);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            let pooled = pool.install(|| other.route(&dg, &filter, &updates, "s", strictness));
            prop_assert_eq!(summary(&pooled), summary(&in_order));
            let mut applied = other.clone();
            applied.apply(&in_order);
            other.apply(&pooled);
            let keys = |o: &OtherEdges| {
                let mut k: Vec<_> = o.edges.keys().collect();
                k.sort_unstable();
                k
            };
            prop_assert_eq!(keys(&other), keys(&applied));
            prop_assert_eq!(degrees(&other), degrees(&applied));
        }
    }
}
