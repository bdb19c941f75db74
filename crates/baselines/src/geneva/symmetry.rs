//! Symmetry-breaking restrictions (GENEVA Sec. 2.1 / Alg. 8 line 1, after
//! GraphZero and GraphPi): VID-order constraints `f(a) < f(b)` that keep
//! exactly one embedding of every subgraph, so that GENEVA counts unique
//! subgraphs and the engine reports `unique × |Aut(Q)|`.
//!
//! Construction (a stabiliser chain): with `H` = Aut(Q) (labelled: vertex
//! and edge labels preserved), take the first vertex `v` in the given
//! priority order whose orbit under `H` is non-trivial, require
//! `f(v) < f(w)` for every other `w` in the orbit, and continue with the
//! stabiliser of `v`. Among the |Aut(Q)| automorphic images `f ∘ σ` of one
//! embedding, the first rule keeps those with σ(v) = the orbit element of
//! least image, a coset of the stabiliser; by induction exactly one image
//! survives. Orbits are computed without enumerating the group: `w` is in
//! the orbit of `v` under the stabiliser of `fixed` iff an automorphism with
//! those prescribed images exists ([`exists_automorphism`]).

use csm_planner::{exists_automorphism, QueryGraph};

/// Restrictions `(a, b)`: an embedding must have `f(a) < f(b)`.
/// `priority` lists the query vertices in the order they are matched, so
/// that the restrictions bind early vertices and prune early.
pub fn restrictions(q: &QueryGraph, priority: &[usize]) -> Vec<(usize, usize)> {
    let mut fixed: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::new();
    loop {
        let mut found = false;
        for &v in priority {
            if fixed.iter().any(|&(a, _)| a == v) {
                continue;
            }
            let orbit: Vec<usize> = priority
                .iter()
                .copied()
                .filter(|&w| {
                    w != v && {
                        let mut pres = fixed.clone();
                        pres.push((v, w));
                        exists_automorphism(q, &pres)
                    }
                })
                .collect();
            if orbit.is_empty() {
                continue;
            }
            out.extend(orbit.iter().map(|&w| (v, w)));
            fixed.push((v, v));
            found = true;
            break;
        }
        if !found {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_with(q: &QueryGraph, r: &[(usize, usize)]) -> u128 {
        // embeddings of q into itself (automorphisms) that satisfy r, with the
        // identity order on vertex ids as "VIDs"
        let n = q.num_vertices();
        let mut total = 0;
        let mut perm: Vec<usize> = (0..n).collect();
        fn permute(k: usize, perm: &mut Vec<usize>, f: &mut dyn FnMut(&[usize])) {
            if k == perm.len() {
                f(perm);
                return;
            }
            for i in k..perm.len() {
                perm.swap(k, i);
                permute(k + 1, perm, f);
                perm.swap(k, i);
            }
        }
        permute(0, &mut perm, &mut |p| {
            let pres: Vec<(usize, usize)> = (0..n).map(|i| (i, p[i])).collect();
            if exists_automorphism(q, &pres) && r.iter().all(|&(a, b)| p[a] < p[b]) {
                total += 1;
            }
        });
        total
    }

    #[test]
    fn restrictions_keep_one_image_per_subgraph() {
        let cases: Vec<QueryGraph> = vec![
            QueryGraph::new(vec![0; 4], &[(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 0, 0)], false).unwrap(),
            QueryGraph::new(
                vec![0; 4],
                &[(0, 1, 0), (0, 2, 0), (0, 3, 0), (1, 2, 0), (1, 3, 0), (2, 3, 0)],
                false,
            )
            .unwrap(),
            QueryGraph::new(vec![0, 1, 1, 0], &[(0, 1, 0), (0, 2, 0), (3, 1, 0), (3, 2, 0)], false).unwrap(),
            QueryGraph::new(vec![0, 0, 0], &[(0, 1, 1), (1, 2, 2)], true).unwrap(),
            QueryGraph::new(vec![5; 5], &[(0, 1, 0), (0, 2, 0), (0, 3, 0), (0, 4, 0)], false).unwrap(),
        ];
        for q in cases {
            let prio: Vec<usize> = (0..q.num_vertices()).rev().collect();
            let r = restrictions(&q, &prio);
            assert_eq!(count_with(&q, &[]), q.automorphism_count());
            assert_eq!(count_with(&q, &r), 1, "{q:?} {r:?}");
        }
    }
}
