//! Query decomposition (GENEVA Sec. 2.1 / Sec. 6, after CFL): the *core* is
//! what remains after repeatedly removing degree-one vertices; the removed
//! vertices form trees hanging off the core. The smallest cycle of the core
//! opens the matching order (Alg. 8 line 3).

use csm_planner::QueryGraph;

/// Bit mask of the core vertices (0 when the query is acyclic).
pub fn core_mask(q: &QueryGraph) -> u32 {
    let n = q.num_vertices();
    let mut alive: u32 = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
    loop {
        let leaves: u32 = (0..n)
            .filter(|&u| alive >> u & 1 == 1 && (q.adj_mask(u) & alive).count_ones() <= 1)
            .fold(0, |m, u| m | 1 << u);
        if leaves == 0 {
            return alive;
        }
        alive &= !leaves;
    }
}

/// A shortest cycle inside the vertex set `mask`, as vertices in cycle
/// order (`c[i]` adjacent to `c[i+1]` and the last to the first). A shortest
/// cycle has no chords. `None` when `mask` holds no cycle.
pub fn smallest_cycle(q: &QueryGraph, mask: u32) -> Option<Vec<usize>> {
    let n = q.num_vertices();
    let mut best: Option<Vec<usize>> = None;
    // for every edge (a, b) of the core: shortest a–b path avoiding the edge
    for &(a, b, _) in q.edges() {
        if mask >> a & 1 == 0 || mask >> b & 1 == 0 {
            continue;
        }
        let mut parent = vec![usize::MAX; n];
        parent[a] = a;
        let mut frontier = vec![a];
        'bfs: while !frontier.is_empty() {
            let mut next = Vec::new();
            for &x in &frontier {
                let mut nbrs = q.adj_mask(x) & mask;
                while nbrs != 0 {
                    let y = nbrs.trailing_zeros() as usize;
                    nbrs &= nbrs - 1;
                    if parent[y] != usize::MAX {
                        continue;
                    }
                    if x == a && y == b {
                        continue; // the edge itself
                    }
                    parent[y] = x;
                    if y == b {
                        break 'bfs;
                    }
                    next.push(y);
                }
            }
            frontier = next;
        }
        if parent[b] == usize::MAX {
            continue;
        }
        let mut path = vec![b];
        while *path.last().expect("non-empty") != a {
            let x = *path.last().expect("non-empty");
            path.push(parent[x]);
        }
        if best.as_ref().is_none_or(|c| path.len() < c.len()) {
            best = Some(path);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: usize, edges: &[(usize, usize)]) -> QueryGraph {
        let e: Vec<_> = edges.iter().map(|&(a, b)| (a, b, 0)).collect();
        QueryGraph::new(vec![0; n], &e, false).unwrap()
    }

    #[test]
    fn core_of_a_tailed_square() {
        // square 0-1-2-3 with a tail 3-4-5 and a leaf 1-6
        let g = q(7, &[(0, 1), (1, 2), (2, 3), (3, 0), (3, 4), (4, 5), (1, 6)]);
        assert_eq!(core_mask(&g), 0b1111);
        let c = smallest_cycle(&g, core_mask(&g)).unwrap();
        assert_eq!(c.len(), 4);
        assert_eq!(core_mask(&q(3, &[(0, 1), (1, 2)])), 0);
    }

    #[test]
    fn smallest_cycle_prefers_triangles() {
        // a 5-cycle with a chord making a triangle 0-1-2
        let g = q(5, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2)]);
        let c = smallest_cycle(&g, core_mask(&g)).unwrap();
        assert_eq!(c.len(), 3);
        for i in 0..3 {
            assert!(g.has_edge(c[i], c[(i + 1) % 3]));
        }
    }
}
