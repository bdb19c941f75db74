//! Query plans for PBE: search sequences (paper 003 Sec. 3.1 for the intra
//! plan Q_a, Sec. 4.3 GENSEARCHSEQUENCE for the inter plan) and the
//! equivalence edge classes of Sec. 4.3 (GENEQUIVALENCEEDGECLASS).
//!
//! **Search sequences.** The paper enumerates all vertex orders and keeps
//! the one with the smallest cost Σ_l Cost(π, l), Cost(π, l) =
//! |R(P_{l−1})| · K (Eq. 1, 3). We do the same for queries up to
//! [`EXHAUSTIVE_MAX`] vertices (branch and bound over orders whose every
//! prefix is connected, as NOTES.md asks), estimating |R(P_l)| under an
//! independence model: |R(P_1)| = freq(label(π(1))), and each further
//! vertex multiplies by freq(label) · (d̄ / |V|)^{|N₊(u)|}, d̄ the average
//! degree; K is constant. Larger queries take the greedy order (most
//! backward neighbours first, then the rarer label, then the higher degree).
//!
//! **Edge classes.** Two pattern edges are equivalent when a (vertex- and
//! edge-label-preserving) automorphism maps one onto the other, in either
//! orientation. We find the classes with one automorphism search per pair
//! (edge, class representative), keeping the automorphism, which REMAP needs.

use std::collections::HashMap;

use csm_graph::Label;
use csm_planner::QueryGraph;

/// Queries up to this many vertices get the exhaustive order search.
pub const EXHAUSTIVE_MAX: usize = 8;

/// Data statistics for the cost model.
pub struct CostStats {
    pub num_vertices: f64,
    pub avg_degree: f64,
    pub label_freq: HashMap<Label, f64>,
}

impl CostStats {
    fn freq(&self, l: Label) -> f64 {
        self.label_freq.get(&l).copied().unwrap_or(0.0)
    }

    /// Growth factor |R(P_l)| / |R(P_{l−1})| when `u` joins with `back`
    /// backward neighbours.
    fn factor(&self, q: &QueryGraph, u: usize, back: u32) -> f64 {
        let p = self.avg_degree / self.num_vertices.max(1.0);
        self.freq(q.label(u)) * p.powi(back as i32)
    }
}

/// A search sequence with what COMPUTE needs per position.
#[derive(Clone, Debug)]
pub struct SearchSeq {
    /// π: query vertices in matching order.
    pub order: Vec<usize>,
    /// Vertex label of π(l).
    pub labels: Vec<Label>,
    /// N₊(π(l)): positions (< l) of its backward neighbours, with the edge
    /// label to require (`None` when edge labels do not matter).
    pub back: Vec<Vec<(usize, Option<Label>)>>,
}

impl SearchSeq {
    pub fn new(q: &QueryGraph, order: Vec<usize>) -> SearchSeq {
        let labels = order.iter().map(|&u| q.label(u)).collect();
        let back = (0..order.len())
            .map(|l| {
                (0..l)
                    .filter(|&p| q.has_edge(order[p], order[l]))
                    .map(|p| {
                        (
                            p,
                            if q.edge_labelled() {
                                q.edge_label(order[p], order[l])
                            } else {
                                None
                            },
                        )
                    })
                    .collect()
            })
            .collect();
        SearchSeq { order, labels, back }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// The cheapest connected order extending `prefix` (see the module docs).
/// With an empty prefix the first vertex is free too.
pub fn search_order(q: &QueryGraph, prefix: &[usize], stats: &CostStats) -> Vec<usize> {
    let n = q.num_vertices();
    let mut order: Vec<usize> = prefix.to_vec();
    let mut used: u32 = prefix.iter().fold(0, |m, &u| m | 1 << u);
    // estimated |R(P_l)| of the prefix
    let mut est = 1.0;
    for (i, &u) in prefix.iter().enumerate() {
        let back = (q.adj_mask(u) & prefix[..i].iter().fold(0, |m, &w| m | 1 << w)).count_ones();
        est *= stats.factor(q, u, back);
    }
    if n <= EXHAUSTIVE_MAX {
        let mut best = (f64::INFINITY, Vec::new());
        exhaustive(q, stats, &mut order, used, est, 0.0, &mut best);
        return best.1;
    }
    while order.len() < n {
        let cands = (0..n).filter(|&u| used >> u & 1 == 0 && (used == 0 || q.adj_mask(u) & used != 0));
        let u = cands
            .max_by(|&a, &b| {
                let ba = (q.adj_mask(a) & used).count_ones();
                let bb = (q.adj_mask(b) & used).count_ones();
                ba.cmp(&bb)
                    .then(stats.freq(q.label(b)).total_cmp(&stats.freq(q.label(a))))
                    .then(q.degree(a).cmp(&q.degree(b)))
                    .then(b.cmp(&a))
            })
            .expect("connected query");
        order.push(u);
        used |= 1 << u;
    }
    order
}

fn exhaustive(
    q: &QueryGraph,
    stats: &CostStats,
    order: &mut Vec<usize>,
    used: u32,
    est: f64,
    cost: f64,
    best: &mut (f64, Vec<usize>),
) {
    let n = q.num_vertices();
    if order.len() == n {
        if cost < best.0 || best.1.is_empty() {
            *best = (cost, order.clone());
        }
        return;
    }
    // Cost(π, l) = |R(P_{l−1})| for every level after the first
    let cost = if order.is_empty() { cost } else { cost + est };
    if cost > best.0 {
        return;
    }
    for u in 0..n {
        if used >> u & 1 == 1 || (used != 0 && q.adj_mask(u) & used == 0) {
            continue;
        }
        let back = (q.adj_mask(u) & used).count_ones();
        order.push(u);
        exhaustive(
            q,
            stats,
            order,
            used | 1 << u,
            est * stats.factor(q, u, back),
            cost,
            best,
        );
        order.pop();
    }
}

/// An automorphism of `q` (labels and edge labels preserved) with the
/// given fixed images, if one exists.
pub fn find_automorphism(q: &QueryGraph, fixed: &[(usize, usize)]) -> Option<Vec<usize>> {
    let n = q.num_vertices();
    let mut map = vec![usize::MAX; n];
    let mut used = 0u32;
    for &(a, b) in fixed {
        if map[a] != usize::MAX && map[a] != b {
            return None;
        }
        if map[a] == usize::MAX && used >> b & 1 == 1 {
            return None;
        }
        map[a] = b;
        used |= 1 << b;
    }
    fn ok(q: &QueryGraph, map: &[usize], k: usize) -> bool {
        let t = map[k];
        if q.label(t) != q.label(k) || q.degree(t) != q.degree(k) {
            return false;
        }
        (0..q.num_vertices())
            .filter(|&p| p != k && map[p] != usize::MAX)
            .all(|p| q.has_edge(p, k) == q.has_edge(map[p], t) && q.edge_label(p, k) == q.edge_label(map[p], t))
    }
    for k in 0..n {
        if map[k] != usize::MAX && !ok(q, &map, k) {
            return None;
        }
    }
    fn rec(q: &QueryGraph, k: usize, map: &mut [usize], used: &mut u32, free: &[bool]) -> bool {
        let n = q.num_vertices();
        if k == n {
            return true;
        }
        if !free[k] {
            return rec(q, k + 1, map, used, free);
        }
        for t in 0..n {
            if *used >> t & 1 == 1 {
                continue;
            }
            map[k] = t;
            if ok(q, map, k) {
                *used |= 1 << t;
                if rec(q, k + 1, map, used, free) {
                    return true;
                }
                *used &= !(1 << t);
            }
            map[k] = usize::MAX;
        }
        false
    }
    let free: Vec<bool> = map.iter().map(|&m| m == usize::MAX).collect();
    rec(q, 0, &mut map, &mut used, &free).then_some(map)
}

/// One equivalence edge class: its representative pattern edge, and for
/// every member (the representative first) the member and an automorphism
/// A mapping the representative onto it (as an unordered pair).
#[derive(Clone, Debug)]
pub struct EdgeClass {
    pub rep: (usize, usize),
    pub members: Vec<((usize, usize), Vec<usize>)>,
}

/// The equivalence edge classes of `q`, in edge order of first appearance.
pub fn edge_classes(q: &QueryGraph) -> Vec<EdgeClass> {
    let mut classes: Vec<EdgeClass> = Vec::new();
    'edges: for &(a, b, _) in q.edges() {
        for c in &mut classes {
            let (x, y) = c.rep;
            let found = find_automorphism(q, &[(x, a), (y, b)]).or_else(|| find_automorphism(q, &[(x, b), (y, a)]));
            if let Some(aut) = found {
                c.members.push(((a, b), aut));
                continue 'edges;
            }
        }
        let id: Vec<usize> = (0..q.num_vertices()).collect();
        classes.push(EdgeClass {
            rep: (a, b),
            members: vec![((a, b), id)],
        });
    }
    classes
}
