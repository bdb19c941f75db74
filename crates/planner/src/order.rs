//! Matching-order strategies: which query vertex a plan binds next.

use csm_graph::GraphView;

use crate::query::{QVertex, QueryGraph};
use crate::sampled::SampledOrder;
use crate::stats::GraphStats;

/// Chooses the order in which a plan binds query vertices.
///
/// `prefix` holds the vertices already fixed (the seed edge's endpoints of a
/// delta plan, or nothing for a static plan); the result starts with it and
/// every later vertex has at least one earlier neighbour.
pub trait OrderStrategy: Send + Sync {
    fn name(&self) -> &'static str;
    fn order(&self, q: &QueryGraph, prefix: &[QVertex], stats: &GraphStats) -> Vec<QVertex>;
    /// The order when the data graph is at hand (engines building plans for
    /// a graph call this); strategies that sample the graph override it.
    fn order_on(&self, q: &QueryGraph, prefix: &[QVertex], stats: &GraphStats, g: &dyn GraphView) -> Vec<QVertex> {
        let _ = g;
        self.order(q, prefix, stats)
    }
    /// A strategy that costs nothing to run and that this one refines (the
    /// sampled order's cost order), or `None`. When only the first
    /// embeddings are wanted (a limit), the time spent choosing may exceed
    /// the search itself, and the two orders' searches differ by orders of
    /// magnitude either way: engines may race the quick order's plan
    /// against this one's.
    fn quick(&self) -> Option<&dyn OrderStrategy> {
        None
    }
}

/// Extends `prefix` greedily: among unbound vertices adjacent to the bound
/// set, the one with the most bound neighbours wins, `tie` breaking ties
/// (smaller key first).
pub(crate) fn greedy<K: Ord>(q: &QueryGraph, prefix: &[QVertex], tie: impl Fn(QVertex) -> K) -> Vec<QVertex> {
    greedy_in(q, prefix, |u, _| tie(u))
}

/// [`greedy`] with a tie key that also sees the order so far.
pub(crate) fn greedy_in<K: Ord>(
    q: &QueryGraph,
    prefix: &[QVertex],
    tie: impl Fn(QVertex, &[QVertex]) -> K,
) -> Vec<QVertex> {
    let n = q.num_vertices();
    let mut order = prefix.to_vec();
    let mut bound = prefix.iter().fold(0u32, |m, &u| m | 1 << u);
    while order.len() < n {
        let next = (0..n)
            .filter(|&u| bound >> u & 1 == 0 && q.adj_mask(u) & bound != 0)
            .max_by(|&a, &b| {
                let (ca, cb) = (
                    (q.adj_mask(a) & bound).count_ones(),
                    (q.adj_mask(b) & bound).count_ones(),
                );
                ca.cmp(&cb).then_with(|| tie(b, &order).cmp(&tie(a, &order)))
            })
            .expect("query is connected");
        order.push(next);
        bound |= 1 << next;
    }
    order
}

/// GCSM's fixed, data-independent order (Fig. 2): most bound neighbours
/// first, ties by smallest id; a static plan starts at the highest-degree vertex.
#[derive(Clone, Copy, Debug, Default)]
pub struct GcsmOrder;

impl OrderStrategy for GcsmOrder {
    fn name(&self) -> &'static str {
        "gcsm"
    }
    fn order(&self, q: &QueryGraph, prefix: &[QVertex], _stats: &GraphStats) -> Vec<QVertex> {
        if prefix.is_empty() {
            let start = (0..q.num_vertices())
                .max_by_key(|&u| (q.degree(u), std::cmp::Reverse(u)))
                .unwrap_or(0);
            return greedy(q, &[start], |u| u);
        }
        greedy(q, prefix, |u| u)
    }
}

/// Cost-based order: most bound neighbours first (tighter intersections),
/// ties by rarest label on a log2 scale (frequencies in the same power-of-two
/// bucket count as equal; in delta plans the scale is relative to the
/// query's rarest label), then, in delta plans, by the fewest query edges
/// among the bound neighbours and the latest bound neighbour
/// (`CostOrder::chain_key`), then by highest query degree; a static plan
/// starts at the vertex minimising label frequency / degree. The CLI's
/// default: on labelled graphs with skewed labels and queries of 6-16
/// vertices it was 2.1× quicker than [`GcsmOrder`] (geometric mean), and on
/// uniform labels it leaves the order to the query's structure like
/// [`GcsmOrder`] does.
#[derive(Clone, Copy, Debug, Default)]
pub struct CostOrder;

impl CostOrder {
    /// The tie key among equally bound vertices (smaller first): the label
    /// frequency's power-of-two bucket, so that uniform labels tie and leave
    /// the order to the query's structure, then the higher query degree.
    pub(crate) fn tie_key(q: &QueryGraph, stats: &GraphStats, u: QVertex) -> (u32, std::cmp::Reverse<usize>, QVertex) {
        (stats.freq(q.label(u)).max(1).ilog2(), std::cmp::Reverse(q.degree(u)), u)
    }

    /// The tie key of delta plans, smaller first:
    ///
    /// 1. the label's frequency on a log2 scale relative to `rarest` (the
    ///    query's rarest label frequency): labels within 2× of it tie (an
    ///    absolute power-of-two bucket split an edge-labelled Enron's four
    ///    uniform labels, 4,039 to 4,141 vertices, at 4,096);
    /// 2. the query edges among `u`'s bound neighbours, fewer first: lists
    ///    of adjacent vertices share much of their neighbourhoods in
    ///    clustered graphs, so their intersection stays large, where
    ///    vertices two hops apart share less (RapidFlow's delete Q_28 seeded
    ///    on 1-3 lists 219,000 nodes binding 4 from the adjacent 2 and 3,
    ///    133,000 binding 5 from 0 and 1 first);
    /// 3. the position of `u`'s latest bound neighbour in `order`, later
    ///    first: a vertex that hangs off the latest binding narrows the
    ///    search where one hanging off an early binding multiplies it by a
    ///    second independent choice (RapidFlow's delete Q_97 seeded on 1-2:
    ///    0 and 5 both off 2 list pairs of 2's neighbours; 3 off 0, then 5
    ///    off 2 and 3, lists 1.8× fewer nodes and intersects a quarter as
    ///    many lists);
    /// 4. the higher query degree, then the id.
    ///
    /// Delta plans only: on static plans of 16-32 vertices
    /// (SubgraphMatching-style, capped at 10^5 embeddings) keys 2 and 3
    /// turned 0.2-1.2 s searches into timeouts as often as the reverse.
    pub(crate) fn chain_key(
        q: &QueryGraph,
        stats: &GraphStats,
        rarest: usize,
        u: QVertex,
        order: &[QVertex],
    ) -> (u32, u32, std::cmp::Reverse<usize>, std::cmp::Reverse<usize>, QVertex) {
        let latest = order.iter().rposition(|&w| q.has_edge(u, w)).unwrap_or(0);
        let bucket = (stats.freq(q.label(u)).max(1) / rarest).ilog2();
        let bound = order.iter().fold(0u32, |m, &w| m | 1 << w) & q.adj_mask(u);
        let closed: u32 = (0..q.num_vertices())
            .filter(|&w| bound >> w & 1 == 1)
            .map(|w| (q.adj_mask(w) & bound).count_ones())
            .sum();
        (
            bucket,
            closed,
            std::cmp::Reverse(latest),
            std::cmp::Reverse(q.degree(u)),
            u,
        )
    }

    /// Orders start vertices of a static plan, best first: label frequency
    /// per query degree, then id.
    pub(crate) fn cmp_starts(q: &QueryGraph, stats: &GraphStats, a: QVertex, b: QVertex) -> std::cmp::Ordering {
        let cost = |u: QVertex| stats.freq(q.label(u)) as f64 / q.degree(u) as f64;
        cost(a).total_cmp(&cost(b)).then(a.cmp(&b))
    }
}

impl OrderStrategy for CostOrder {
    fn name(&self) -> &'static str {
        "cost"
    }
    fn order(&self, q: &QueryGraph, prefix: &[QVertex], stats: &GraphStats) -> Vec<QVertex> {
        if prefix.is_empty() {
            let start = (0..q.num_vertices())
                .min_by(|&a, &b| Self::cmp_starts(q, stats, a, b))
                .unwrap_or(0);
            return greedy(q, &[start], |u| Self::tie_key(q, stats, u));
        }
        let rarest = q.labels().iter().map(|&l| stats.freq(l).max(1)).min().unwrap_or(1);
        greedy_in(q, prefix, |u, order| Self::chain_key(q, stats, rarest, u, order))
    }
}

/// Looks a strategy up by name (`gcsm`, `cost`, `auto`).
pub fn strategy_by_name(name: &str) -> Option<Box<dyn OrderStrategy>> {
    match name {
        "gcsm" | "fixed" => Some(Box::new(GcsmOrder)),
        "cost" => Some(Box::new(CostOrder)),
        "auto" | "sampled" => Some(Box::new(SampledOrder::default())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(freq: &[usize]) -> GraphStats {
        GraphStats {
            label_freq: freq
                .iter()
                .enumerate()
                .map(|(l, &f)| (l as csm_graph::Label, f))
                .collect(),
            num_vertices: freq.iter().sum(),
            max_degree: 10,
        }
    }

    /// A query of `labels` with unlabelled `edges`.
    fn query(labels: Vec<csm_graph::Label>, edges: &[(usize, usize)]) -> QueryGraph {
        let edges: Vec<_> = edges.iter().map(|&(a, b)| (a, b, 0)).collect();
        QueryGraph::new(labels, &edges, false).unwrap()
    }

    /// A star 0-{1,2,3} with a pendant 3-4: after the seed 0, vertices 1, 2
    /// and 3 tie on bound neighbours.
    fn star() -> QueryGraph {
        QueryGraph::new(
            vec![0, 1, 2, 3, 0],
            &[(0, 1, 0), (0, 2, 0), (0, 3, 0), (3, 4, 0)],
            false,
        )
        .unwrap()
    }

    #[test]
    fn cost_takes_a_clearly_rarer_label_first() {
        // label 2 is 4x rarer than labels 1 and 3
        let order = CostOrder.order(&star(), &[0], &stats(&[100, 400, 100, 400]));
        assert_eq!(order[1], 2);
    }

    #[test]
    fn cost_treats_near_equal_labels_as_a_tie_and_follows_the_structure() {
        // labels in one power-of-two bucket: the higher query degree (3) wins,
        // although label 3 is the most frequent
        let order = CostOrder.order(&star(), &[0], &stats(&[100, 105, 100, 110]));
        assert_eq!(order[1], 3);
        // GCSM's order ignores labels and degrees: smallest id
        assert_eq!(GcsmOrder.order(&star(), &[0], &stats(&[100, 105, 100, 110]))[1], 1);
    }

    #[test]
    fn delta_orders_tie_labels_within_twice_the_rarest() {
        // an edge-labelled Enron's four uniform labels (4,039 to 4,141
        // vertices) straddle 4,096: on a fixed power-of-two scale label 3
        // looked twice as frequent as labels 1 and 2; relative to the
        // rarest they tie, and the query's structure (degree) decides
        let s = stats(&[4113, 4039, 4091, 4141]);
        assert_eq!(CostOrder.order(&star(), &[0], &s)[1], 3);
    }

    #[test]
    fn cost_extends_the_latest_binding_among_equally_bound_vertices() {
        // RapidFlow's delete Q_97 seeded on its leaf edge 1-2: after 0,
        // vertex 5 (query degree 3) hangs off 2 like 0 does, so binding it
        // next lists pairs of 2's neighbours; 3 and 4 hang off 0, the
        // latest binding, and after one of them 5 closes a cycle
        let q = query(
            vec![2, 3, 5, 2, 3, 0],
            &[(0, 2), (0, 3), (0, 4), (1, 2), (2, 5), (3, 5), (4, 5)],
        );
        let s = stats(&[100, 100, 100, 100, 100, 100]);
        let order = CostOrder.order(&q, &[1, 2], &s);
        assert_eq!(&order[..4], &[1, 2, 0, 3]);
        assert_eq!(order[4], 5);
        // static orders keep the degree tie-break
        assert_eq!(CostOrder.order(&q, &[], &s)[0], 0);
    }

    #[test]
    fn cost_prefers_bound_neighbours_that_are_not_adjacent() {
        // RapidFlow's delete Q_28 seeded on 1-3, after 0: vertex 2 would be
        // bound from 0 and 3 (adjacent), vertex 5 from 0 and 1 (not)
        let q = query(
            vec![0, 2, 2, 4, 1, 4],
            &[(0, 2), (0, 3), (0, 5), (1, 3), (1, 5), (2, 3), (2, 4), (3, 4), (4, 5)],
        );
        let order = CostOrder.order(&q, &[1, 3], &stats(&[100; 5]));
        assert_eq!(&order[..4], &[1, 3, 0, 5]);
    }
}
