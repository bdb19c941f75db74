//! Matching orders (RapidFlow Sec. 4.2): because the update is reduced to a
//! batch matching problem, the order is chosen for the reduced query from
//! the local candidate sizes, as batch matchers do, instead of always
//! expanding from the updated edge.
//!
//! Rule (GraphQL / RI style, on the reduced query): the first vertex is the
//! one with the fewest local candidates *anywhere* in the reduced query
//! (ties: more neighbours among the fixed a, b, then smaller id), so a
//! vertex far from the update with a tiny candidate set goes first; each
//! next vertex is, among those adjacent to an already ordered vertex
//! (a and b included), the one with the fewest local candidates (ties: more
//! backward neighbours, then smaller id). Orders are computed per task,
//! from the sizes the reduction produced, which is cheap for queries of at
//! most 32 vertices. The static mode uses the same rule on the global
//! candidate sets, with the first vertex chosen by |C(u)| / degree(u).

use csm_planner::QueryGraph;

/// Order of the vertices not in `fixed` (a bit mask), from candidate sizes.
pub fn order(q: &QueryGraph, fixed: u32, sizes: &[usize]) -> Vec<usize> {
    let n = q.num_vertices();
    let mut done = fixed;
    let mut out = Vec::with_capacity(n);
    while (done.count_ones() as usize) < n {
        let adjacent: Vec<usize> = (0..n)
            .filter(|&u| done >> u & 1 == 0 && (out.is_empty() || q.adj_mask(u) & done != 0))
            .collect();
        let pool = if adjacent.is_empty() {
            (0..n).filter(|&u| done >> u & 1 == 0).collect()
        } else {
            adjacent
        };
        let first_static = fixed == 0 && out.is_empty();
        let u = *pool
            .iter()
            .min_by(|&&a, &&b| {
                let ka = key(q, done, sizes, a, first_static);
                let kb = key(q, done, sizes, b, first_static);
                ka.partial_cmp(&kb).expect("finite").then(a.cmp(&b))
            })
            .expect("non-empty");
        out.push(u);
        done |= 1 << u;
    }
    out
}

fn key(q: &QueryGraph, done: u32, sizes: &[usize], u: usize, first_static: bool) -> (f64, i64) {
    let back = (q.adj_mask(u) & done).count_ones() as i64;
    if first_static {
        (sizes[u] as f64 / q.degree(u) as f64, 0)
    } else {
        (sizes[u] as f64, -back)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_far_vertex_with_few_candidates_goes_first() {
        // path 0-1-2-3, reduced on (0, 1): vertex 3 is far but has 1 candidate
        let q = QueryGraph::new(vec![0, 0, 0, 1], &[(0, 1, 0), (1, 2, 0), (2, 3, 0)], false).unwrap();
        let o = order(&q, 0b0011, &[1, 1, 50, 1]);
        assert_eq!(o, vec![3, 2]);
        let o = order(&q, 0b0011, &[1, 1, 5, 9]);
        assert_eq!(o, vec![2, 3]);
        // static: every vertex, connected after the first
        let o = order(&q, 0, &[10, 10, 10, 2]);
        assert_eq!(o, vec![3, 2, 1, 0]);
    }
}
