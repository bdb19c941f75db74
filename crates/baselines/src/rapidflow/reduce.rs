//! Query reduction (RapidFlow Sec. 4): when a data edge (x, y) is matched to
//! the query edge (a, b), what remains is a *batch* matching problem on the
//! reduced query Q − {a, b} over the region of the data graph the update can
//! affect. That region is captured by local candidate sets `LC(u)`:
//!
//! * `LC(a) = {x}`, `LC(b) = {y}`;
//! * the other query vertices are visited in an *indexing order*: first
//!   those adjacent to both a and b, then those adjacent to one, then the
//!   rest, each time the vertex with the most already-visited neighbours
//!   (its backward neighbours);
//! * `LC(u)` = the vertices of `C(u)` (the global candidate index) adjacent,
//!   through an edge of the right label, to some member of `LC(w)` for
//!   *every* backward neighbour `w` (a semi-join per backward edge), minus
//!   x and y.
//!
//! An empty `LC` proves that the update yields no match through (a, b), and
//! the search never starts. The sets then drive the matching order of the
//! reduced query ([`super::order`]) and the enumeration ([`super::search`]).

use csm_graph::VertexId;
use csm_planner::QueryGraph;

use super::index::DataIndex;

/// Indexing order of the reduced query for query edge (a, b): the remaining
/// vertices and, per vertex, its backward neighbours (earlier in the order
/// or a / b).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexingOrder {
    pub a: usize,
    pub b: usize,
    pub order: Vec<usize>,
    pub back: Vec<Vec<usize>>,
}

impl IndexingOrder {
    pub fn new(q: &QueryGraph, a: usize, b: usize) -> IndexingOrder {
        let n = q.num_vertices();
        let mut visited: u32 = 1 << a | 1 << b;
        let mut order = Vec::new();
        let mut back = Vec::new();
        let class = |u: usize| match (q.has_edge(u, a), q.has_edge(u, b)) {
            (true, true) => 0,
            (false, false) => 2,
            _ => 1,
        };
        for c in 0..3 {
            loop {
                let next = (0..n)
                    .filter(|&u| visited >> u & 1 == 0 && class(u) == c && q.adj_mask(u) & visited != 0)
                    .max_by_key(|&u| ((q.adj_mask(u) & visited).count_ones(), std::cmp::Reverse(u)));
                let Some(u) = next else { break };
                back.push((0..n).filter(|&w| visited >> w & 1 == 1 && q.has_edge(u, w)).collect());
                order.push(u);
                visited |= 1 << u;
            }
        }
        // class-2 vertices may only become reachable through later ones
        while visited.count_ones() as usize != n {
            let u = (0..n)
                .filter(|&u| visited >> u & 1 == 0 && q.adj_mask(u) & visited != 0)
                .max_by_key(|&u| ((q.adj_mask(u) & visited).count_ones(), std::cmp::Reverse(u)))
                .expect("connected query");
            back.push((0..n).filter(|&w| visited >> w & 1 == 1 && q.has_edge(u, w)).collect());
            order.push(u);
            visited |= 1 << u;
        }
        IndexingOrder { a, b, order, back }
    }
}

/// Local candidate sets (sorted) for the task (a, b) → (x, y), or `None`
/// when one is empty.
pub fn local_candidates(
    idx: &DataIndex,
    q: &QueryGraph,
    io: &IndexingOrder,
    x: VertexId,
    y: VertexId,
) -> Option<Vec<Vec<VertexId>>> {
    let n = q.num_vertices();
    let mut lc: Vec<Vec<VertexId>> = vec![Vec::new(); n];
    lc[io.a] = vec![x];
    lc[io.b] = vec![y];
    for (u, back) in io.order.iter().copied().zip(&io.back) {
        let lu = q.label(u);
        let pivot = *back.iter().min_by_key(|&&w| lc[w].len()).expect("a backward neighbour");
        let el = q.edge_label(pivot, u).expect("edge");
        let mut cand: Vec<VertexId> = Vec::new();
        for &v in &lc[pivot] {
            cand.extend(
                idx.nbrs(v, el, lu)
                    .iter()
                    .map(|e| e.2)
                    .filter(|&c| c != x && c != y && idx.is_candidate(u, c)),
            );
        }
        cand.sort_unstable();
        cand.dedup();
        for &w in back.iter().filter(|&&w| w != pivot) {
            let elw = q.edge_label(w, u).expect("edge");
            let lw = &lc[w];
            let lwl = q.label(w);
            cand.retain(|&c| {
                if lw.len() <= 8 {
                    lw.iter().any(|&z| idx.has_edge(c, z, elw))
                } else {
                    idx.nbrs(c, elw, lwl).iter().any(|e| lw.binary_search(&e.2).is_ok())
                }
            });
        }
        if cand.is_empty() {
            return None;
        }
        lc[u] = cand;
    }
    Some(lc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexing_order_visits_both_then_one_then_none() {
        // diamond 0-1-2-3 with chord 0-2, tail 3-4; reduce on (0, 2)
        let q = QueryGraph::new(
            vec![0; 5],
            &[(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 0, 0), (0, 2, 0), (3, 4, 0)],
            false,
        )
        .unwrap();
        let io = IndexingOrder::new(&q, 0, 2);
        assert_eq!(io.order, vec![1, 3, 4]);
        assert_eq!(io.back, vec![vec![0, 2], vec![0, 2], vec![3]]);
        // on (3, 4): 0 and 2 adjacent to 3 only, 1 adjacent to none
        let io = IndexingOrder::new(&q, 3, 4);
        assert_eq!(io.order.len(), 3);
        assert_eq!(*io.order.last().unwrap(), 1);
    }
}
