//! [`SampledOrder`]: chooses among a few candidate matching orders by their
//! work on the data graph, estimated with random probes of each order's
//! search tree.
//!
//! The greedy orders ([`crate::GcsmOrder`], [`crate::CostOrder`]) look only
//! at the query and label frequencies. On queries of ten vertices or more,
//! the start vertex and the tie-breaking decide between milliseconds and
//! minutes, and neither rule is right everywhere: on a Zipf-labelled R-MAT a
//! 20-vertex query took 0.3 s with one and over 10 s with the other, and a
//! 10-vertex one 0.85 s against 4.9 s the other way round. The candidates
//! here are three greedy tie rules (label bucket first, query degree first,
//! id first as GCSM) from the few most promising start vertices.
//!
//! **Estimator.** Knuth's random-probe estimate of a backtracking tree
//! (Knuth, "Estimating the efficiency of backtrack programs", 1975), the
//! idea behind GCSM's own random walk (Sec. IV-A, Eq. 3): a probe draws a
//! root, adds each node's cost times the inverse probability of reaching it,
//! and descends to one drawn child. Draws are weighted by (degree + 1) to
//! the number of later levels that read the vertex's list (importance
//! sampling: the heavy subtrees hang under hubs, and uniform draws missed
//! them and underestimated by orders of magnitude); the inverse
//! probabilities keep the mean unbiased (tested against exhaustive
//! traversal). A node's cost approximates its intersection (merge or
//! galloping, [`crate::intersect`]); the last level is counted, not
//! expanded, as the executor does. Symmetry breaking, the last-level memo
//! and the tail product are not modelled.
//!
//! **Where it applies.** Static plans of queries with at least
//! [`SampledOrder::min_query`] vertices whose cost-order estimate exceeds
//! [`SampledOrder::min_work`]; a candidate replaces the cost order only
//! below [`SampledOrder::margin`] times its estimate. Delta plans keep the
//! cost order unless [`SampledOrder::delta`] is set (see there why).

use std::cmp::Reverse;
use std::collections::HashMap;

use csm_graph::{GraphView, Label, Version, VertexId, ABSENT};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::intersect::{intersect_into, Operand};
use crate::order::{greedy, CostOrder, OrderStrategy};
use crate::plan::{defer_leaf, levels_for};
use crate::query::{QVertex, QueryGraph};
use crate::stats::GraphStats;

/// Picks the order with the least sampled work among a few candidates; the
/// CLI's `--order auto`. Without a data graph ([`OrderStrategy::order`]) it
/// is [`CostOrder`].
#[derive(Clone, Copy, Debug)]
pub struct SampledOrder {
    /// Probes per candidate order.
    pub probes: usize,
    /// Seed of the probes (plans are reproducible).
    pub seed: u64,
    /// Queries with fewer vertices keep [`CostOrder`].
    pub min_query: usize,
    /// Sample delta plans' orders too (prefix = the seed edge). Off by
    /// default: on continuous runs (batches of 64 on a Zipf-labelled R-MAT)
    /// the sampled delta orders were no quicker than the cost order, and
    /// one 10-vertex query was 1.3× slower at 128 probes per candidate and
    /// still so at 2,048.
    pub delta: bool,
    /// A candidate replaces the cost order only below this fraction of its
    /// estimated work.
    pub margin: f64,
    /// Static plans try this many start vertices (best label frequency per
    /// query degree first), plus the highest-degree one.
    pub starts: usize,
    /// The cost order stays when its estimated work is below this (in list
    /// entries scanned): the other candidates' probes would cost more than
    /// they could save. On 40 random queries of 6-16 vertices one core ran
    /// about 10^7 units per millisecond (the executor's shortcuts cut much
    /// of the tree), so the default is about 10 ms of matching.
    pub min_work: f64,
}

impl Default for SampledOrder {
    fn default() -> Self {
        SampledOrder {
            probes: 128,
            seed: 0x5eed_0bde,
            min_query: 6,
            delta: false,
            margin: 0.8,
            starts: 4,
            min_work: 1e8,
        }
    }
}

impl OrderStrategy for SampledOrder {
    fn name(&self) -> &'static str {
        "auto"
    }
    fn order(&self, q: &QueryGraph, prefix: &[QVertex], stats: &GraphStats) -> Vec<QVertex> {
        CostOrder.order(q, prefix, stats)
    }
    fn quick(&self) -> Option<&dyn OrderStrategy> {
        Some(&CostOrder)
    }
    fn order_on(&self, q: &QueryGraph, prefix: &[QVertex], stats: &GraphStats, g: &dyn GraphView) -> Vec<QVertex> {
        let fallback = CostOrder.order(q, prefix, stats);
        if q.num_vertices() < self.min_query || (!prefix.is_empty() && !self.delta) {
            return fallback;
        }
        let fixed = prefix.len().max(1);
        let mut probe = Prober::new(g, q, self.seed);
        let base = probe.work(&defer_leaf(q, fallback.clone(), fixed), self.probes);
        if base < self.min_work {
            return fallback;
        }
        let mut best = (base, fallback.clone());
        for cand in self.candidates(q, prefix, stats) {
            if cand == fallback {
                continue;
            }
            let w = probe.work(&defer_leaf(q, cand.clone(), fixed), self.probes);
            if w < best.0 {
                best = (w, cand);
            }
        }
        if best.0 < self.margin * base {
            best.1
        } else {
            fallback
        }
    }
}

impl SampledOrder {
    /// The candidate orders for `prefix` (deduplicated; may include the
    /// cost order itself).
    pub fn candidates(&self, q: &QueryGraph, prefix: &[QVertex], stats: &GraphStats) -> Vec<Vec<QVertex>> {
        let bucket = |u: QVertex| stats.freq(q.label(u)).max(1).ilog2();
        let by_label = |u: QVertex| CostOrder::tie_key(q, stats, u);
        let by_degree = |u: QVertex| (Reverse(q.degree(u)), bucket(u), u);
        let by_id = |u: QVertex| (0, Reverse(0), u);
        let starts: Vec<Vec<QVertex>> = if prefix.is_empty() {
            let mut vs: Vec<QVertex> = (0..q.num_vertices()).collect();
            vs.sort_by(|&a, &b| CostOrder::cmp_starts(q, stats, a, b));
            vs.truncate(self.starts);
            let hub = (0..q.num_vertices())
                .max_by_key(|&u| (q.degree(u), Reverse(u)))
                .unwrap_or(0);
            if !vs.contains(&hub) {
                vs.push(hub);
            }
            vs.into_iter().map(|s| vec![s]).collect()
        } else {
            vec![prefix.to_vec()]
        };
        let mut out: Vec<Vec<QVertex>> = Vec::new();
        for s in &starts {
            for cand in [greedy(q, s, by_label), greedy(q, s, by_degree), greedy(q, s, by_id)] {
                if !out.contains(&cand) {
                    out.push(cand);
                }
            }
        }
        out
    }
}

/// Estimated work (list entries merged, as [`SampledOrder`] weighs
/// candidates) of a full static run of `order` over `g`: the mean of
/// `probes` Knuth probes of its search tree, unbiased (see the module docs).
/// Lets callers decide whether preparation that pays per unit of work
/// (e.g. grouping lists by label) is worth its fixed cost.
pub fn estimated_work(g: &dyn GraphView, q: &QueryGraph, order: &[QVertex], probes: usize, seed: u64) -> f64 {
    Prober::new(g, q, seed).work(order, probes)
}

/// Random probes of one query's search trees over one graph.
struct Prober<'g> {
    g: &'g dyn GraphView,
    q: &'g QueryGraph,
    rng: ChaCha8Rng,
    /// The vertices of each query label with the running sums of their
    /// draw weights per power, built on first use.
    roots: HashMap<(Label, i32), (Vec<VertexId>, Vec<f64>)>,
    cands: Vec<VertexId>,
}

impl<'g> Prober<'g> {
    fn new(g: &'g dyn GraphView, q: &'g QueryGraph, seed: u64) -> Self {
        Prober {
            g,
            q,
            rng: ChaCha8Rng::seed_from_u64(seed),
            roots: HashMap::new(),
            cands: Vec::new(),
        }
    }

    /// Draws a root of label `l` as [`Self::draw`] does, from cached sums.
    fn draw_root(&mut self, l: Label, power: i32) -> Option<(VertexId, f64)> {
        let g = self.g;
        let (vs, sums) = self.roots.entry((l, power)).or_insert_with(|| {
            let vs: Vec<VertexId> = (0..g.num_vertices() as VertexId)
                .filter(|&v| g.labels()[v as usize] == l && l != ABSENT)
                .collect();
            let sums = vs
                .iter()
                .scan(0.0, |acc, &v| {
                    *acc += weight_of(g, v, power);
                    Some(*acc)
                })
                .collect();
            (vs, sums)
        });
        let total = *sums.last()?;
        let x = self.rng.random_range(0.0..total);
        let k = sums.partition_point(|&s| s <= x).min(vs.len() - 1);
        Some((vs[k], total / weight_of(g, vs[k], power)))
    }

    /// Estimated cost of running `order` from every vertex of its first
    /// query vertex's label: the mean of `probes` Knuth probes.
    fn work(&mut self, order: &[QVertex], probes: usize) -> f64 {
        let (g, q) = (self.g, self.q);
        let n = order.len();
        // the plan's own reads: level d reads the lists of its earlier
        // neighbours (on a committed graph every version is the current one)
        let levels = levels_for(q, order, |_| Version::New, None);
        // how many later levels read each level's binding: a child's
        // subtree grows about as its degree to that power
        let fanout: Vec<i32> = (0..n)
            .map(|d| {
                levels
                    .iter()
                    .filter(|l| l.reads.iter().any(|r| r.pos as usize == d))
                    .count()
                    .clamp(1, 3) as i32
            })
            .collect();
        if n < 2 || probes == 0 {
            return 0.0;
        }
        let mut total = 0.0;
        let mut emb = [0 as VertexId; 32];
        for _ in 0..probes {
            let Some((v, mut weight)) = self.draw_root(q.label(order[0]), fanout[0]) else {
                return 0.0;
            };
            emb[0] = v;
            for d in 1..n {
                let mut ops: Vec<Operand<'_>> = levels[d]
                    .reads
                    .iter()
                    .map(|r| Operand {
                        list: g.nbrs(emb[r.pos as usize], Version::New),
                        elabel: r.elabel,
                    })
                    .collect();
                total += weight * node_cost(&ops);
                if d + 1 == n {
                    break;
                }
                let mut cands = std::mem::take(&mut self.cands);
                intersect_into(&mut ops, &mut cands);
                let (label, labels, bound) = (q.label(order[d]), g.labels(), &emb[..d]);
                cands.retain(|&c| labels[c as usize] == label && !bound.contains(&c));
                if cands.is_empty() {
                    self.cands = cands;
                    break;
                }
                let (c, w) = self.draw(&cands, fanout[d]);
                weight *= w;
                emb[d] = c;
                self.cands = cands;
            }
        }
        total / probes as f64
    }
}

impl Prober<'_> {
    /// Draws one of `vs` with probability proportional to its degree + 1
    /// (importance sampling: in skewed graphs the subtrees under hubs are
    /// the heavy ones) and returns it with its inverse probability, which
    /// keeps the estimate unbiased.
    fn draw(&mut self, vs: &[VertexId], power: i32) -> (VertexId, f64) {
        let g = self.g;
        let size = |v: VertexId| weight_of(g, v, power);
        let sum: f64 = vs.iter().map(|&v| size(v)).sum();
        let mut x = self.rng.random_range(0.0..sum);
        for &v in vs {
            x -= size(v);
            if x < 0.0 {
                return (v, sum / size(v));
            }
        }
        let v = *vs.last().expect("non-empty");
        (v, sum / size(v))
    }
}

/// A vertex's draw weight: (degree + 1)^power.
fn weight_of(g: &dyn GraphView, v: VertexId, power: i32) -> f64 {
    ((g.nbrs(v, Version::New).len() + 1) as f64).powi(power)
}

/// A node's intersection cost: the smallest list is scanned, each larger
/// one merged or galloped through, whichever is cheaper.
fn node_cost(ops: &[Operand<'_>]) -> f64 {
    let smallest = ops.iter().map(|o| o.list.len()).min().unwrap_or(0).max(1) as f64;
    let rest: f64 = ops
        .iter()
        .map(|o| o.list.len() as f64)
        .map(|l| l.min(smallest * (1.0 + (l / smallest).log2().max(0.0))))
        .sum();
    1.0 + rest
}

#[cfg(test)]
mod tests {
    //! The probe estimate against the exact cost of the same tree, summed
    //! over a full traversal with the same node costs; and the choice.
    use super::*;
    use csm_graph::gen::{graph_from_pairs, rmat, standard_query};
    use csm_graph::CsrGraph;

    /// Σ node_cost over every node of `order`'s tree, by exhaustive DFS.
    fn exact_work(g: &CsrGraph, q: &QueryGraph, order: &[QVertex]) -> f64 {
        fn rec(g: &CsrGraph, q: &QueryGraph, order: &[QVertex], emb: &mut Vec<VertexId>) -> f64 {
            let d = emb.len();
            let ops: Vec<Operand<'_>> = order[..d]
                .iter()
                .enumerate()
                .filter(|&(_, &w)| q.has_edge(w, order[d]))
                .map(|(p, _)| Operand {
                    list: g.nbrs(emb[p], Version::New),
                    elabel: None,
                })
                .collect();
            let mut total = node_cost(&ops);
            if d + 1 == order.len() {
                return total;
            }
            let mut ops = ops;
            let mut cands = Vec::new();
            intersect_into(&mut ops, &mut cands);
            for c in cands {
                if g.labels()[c as usize] == q.label(order[d]) && !emb.contains(&c) {
                    emb.push(c);
                    total += rec(g, q, order, emb);
                    emb.pop();
                }
            }
            total
        }
        (0..g.num_vertices() as VertexId)
            .filter(|&v| g.labels()[v as usize] == q.label(order[0]))
            .map(|v| rec(g, q, order, &mut vec![v]))
            .sum()
    }

    fn graph(labels: u32) -> CsrGraph {
        let pairs = rmat(8, 1_200, 0.57, 0.19, 0.19, 3);
        let labels = (0..256u32).map(|v| v * 7 % labels).collect();
        CsrGraph::from_data(&graph_from_pairs(256, &pairs, labels, None)).unwrap()
    }

    #[test]
    fn probes_estimate_the_trees_work_without_bias() {
        let g = graph(2);
        for (name, labels) in [("house", vec![0, 1, 0, 1, 0]), ("diamond", vec![0, 0, 1, 1])] {
            let mut data = standard_query(name).unwrap();
            data.labels = labels;
            let q = QueryGraph::from_data(&data).unwrap();
            for order in SampledOrder::default().candidates(&q, &[], &GraphStats::of(&g)) {
                let exact = exact_work(&g, &q, &order);
                let est = Prober::new(&g, &q, 9).work(&order, 40_000);
                let err = (est - exact).abs() / exact;
                assert!(err < 0.05, "{name} {order:?}: estimate {est:.0} against {exact:.0}");
            }
        }
    }

    #[test]
    fn small_queries_keep_the_cost_order_and_large_ones_get_a_candidate() {
        let g = graph(3);
        let stats = GraphStats::of(&g);
        let auto = SampledOrder {
            delta: true,
            ..SampledOrder::default()
        };
        let house = QueryGraph::from_data(&standard_query("house").unwrap()).unwrap();
        assert_eq!(
            auto.order_on(&house, &[], &stats, &g),
            CostOrder.order(&house, &[], &stats)
        );
        let wheel = QueryGraph::from_data(&standard_query("7-wheel").unwrap()).unwrap();
        for prefix in [&[][..], &[0, 1]] {
            let chosen = auto.order_on(&wheel, prefix, &stats, &g);
            assert!(
                auto.candidates(&wheel, prefix, &stats).contains(&chosen)
                    || chosen == CostOrder.order(&wheel, prefix, &stats)
            );
            assert!(chosen.starts_with(prefix));
        }
    }
}
