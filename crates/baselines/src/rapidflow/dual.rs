//! Dual matching (RapidFlow Sec. 5): automorphisms of the query make the
//! searches started from different query edges repeat each other.
//!
//! For a data edge (x, y) and a directed query edge (a, b), let
//! `N(a, b)` = the number of embeddings f with f(a) = x and f(b) = y (under
//! the batch's edge rule). If σ ∈ Aut(Q) maps (a, b) to (c, d), then
//! f ↦ f ∘ σ⁻¹ is a bijection between the embeddings counted by `N(a, b)`
//! and those counted by `N(c, d)`: it keeps the image edge set, so the rule
//! of [`super`] (which only looks at data edges) is preserved. Hence the
//! directed query edges split into orbits under Aut(Q), and only one
//! representative per orbit is searched; its count is multiplied by the
//! orbit size. Σ over all directed query edges of `N` counts every embedding
//! that maps some query edge onto (x, y) exactly once (the edge and its
//! direction are determined by f), so Σ over orbits |orbit| · N(rep) is exact.
//!
//! Orbits are found without enumerating the group: (a, b) and (c, d) share
//! an orbit iff an automorphism with σ(a) = c, σ(b) = d exists (a small
//! backtracking search with the two images prescribed).

use csm_planner::{exists_automorphism, QueryGraph};

/// One orbit of directed query edges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeOrbit {
    /// The representative (a, b) that is searched.
    pub rep: (usize, usize),
    /// Every directed edge of the orbit (the representative first).
    pub members: Vec<(usize, usize)>,
}

/// Orbits of the directed query edges under the labelled automorphisms.
/// With `dual = false` every directed edge is its own orbit.
pub fn edge_orbits(q: &QueryGraph, dual: bool) -> Vec<EdgeOrbit> {
    let directed: Vec<(usize, usize)> = q.edges().iter().flat_map(|&(a, b, _)| [(a, b), (b, a)]).collect();
    let mut assigned = vec![false; directed.len()];
    let mut out = Vec::new();
    for i in 0..directed.len() {
        if assigned[i] {
            continue;
        }
        assigned[i] = true;
        let (a, b) = directed[i];
        let mut members = vec![(a, b)];
        if dual {
            for j in i + 1..directed.len() {
                let (c, d) = directed[j];
                if !assigned[j]
                    && q.label(a) == q.label(c)
                    && q.label(b) == q.label(d)
                    && q.edge_label(a, b) == q.edge_label(c, d)
                    && exists_automorphism(q, &[(a, c), (b, d)])
                {
                    assigned[j] = true;
                    members.push((c, d));
                }
            }
        }
        out.push(EdgeOrbit { rep: (a, b), members });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbits_of_symmetric_queries() {
        let tri = QueryGraph::new(vec![0; 3], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
        let o = edge_orbits(&tri, true);
        assert_eq!(o.len(), 1);
        assert_eq!(o[0].members.len(), 6);
        // a path a-b-c with distinct end labels: no symmetry
        let path = QueryGraph::new(vec![0, 1, 2], &[(0, 1, 0), (1, 2, 0)], false).unwrap();
        assert_eq!(edge_orbits(&path, true).len(), 4);
        // a labelled-edge triangle: edge labels break the symmetry
        let lt = QueryGraph::new(vec![0; 3], &[(0, 1, 0), (1, 2, 1), (0, 2, 2)], true).unwrap();
        assert_eq!(edge_orbits(&lt, true).len(), 6);
        // square: one orbit of 8 directed edges
        let sq = QueryGraph::new(vec![0; 4], &[(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 0, 0)], false).unwrap();
        assert_eq!(edge_orbits(&sq, true).len(), 1);
        assert_eq!(edge_orbits(&sq, false).len(), 8);
        // orbit sizes always sum to 2|E|
        for q in [&tri, &path, &lt, &sq] {
            let total: usize = edge_orbits(q, true).iter().map(|o| o.members.len()).sum();
            assert_eq!(total, 2 * q.num_edges());
        }
    }
}
