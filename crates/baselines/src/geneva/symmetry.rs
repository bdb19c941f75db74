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

use csm_planner::QueryGraph;

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

/// Whether a label- and edge-label-preserving automorphism σ of `q` with
/// σ(a) = b for every `(a, b)` in `pres` exists.
pub fn exists_automorphism(q: &QueryGraph, pres: &[(usize, usize)]) -> bool {
    let n = q.num_vertices();
    let mut map = vec![usize::MAX; n];
    let mut used = 0u32;
    for &(a, b) in pres {
        if map[a] != usize::MAX && map[a] != b {
            return false;
        }
        if map[a] == usize::MAX && used >> b & 1 == 1 {
            return false;
        }
        map[a] = b;
        used |= 1 << b;
    }
    // prescribed pairs must be consistent among themselves
    for a in 0..n {
        if map[a] == usize::MAX {
            continue;
        }
        if q.label(a) != q.label(map[a]) || q.degree(a) != q.degree(map[a]) {
            return false;
        }
        for c in 0..a {
            if map[c] != usize::MAX && !edge_ok(q, c, a, map[c], map[a]) {
                return false;
            }
        }
    }
    fn edge_ok(q: &QueryGraph, p: usize, k: usize, mp: usize, t: usize) -> bool {
        q.has_edge(p, k) == q.has_edge(mp, t) && (!q.has_edge(p, k) || q.edge_label(p, k) == q.edge_label(mp, t))
    }
    fn rec(q: &QueryGraph, k: usize, map: &mut [usize], used: &mut u32, pres: u32) -> bool {
        let n = q.num_vertices();
        if k == n {
            return true;
        }
        if pres >> k & 1 == 1 {
            return rec(q, k + 1, map, used, pres);
        }
        for t in 0..n {
            if *used >> t & 1 == 1 || q.label(t) != q.label(k) || q.degree(t) != q.degree(k) {
                continue;
            }
            if (0..n).all(|p| map[p] == usize::MAX || p == k || edge_ok(q, p, k, map[p], t)) {
                map[k] = t;
                *used |= 1 << t;
                if rec(q, k + 1, map, used, pres) {
                    return true;
                }
                *used &= !(1 << t);
                map[k] = usize::MAX;
            }
        }
        false
    }
    let pres_mask = pres.iter().fold(0u32, |m, &(a, _)| m | 1 << a);
    rec(q, 0, &mut map, &mut used, pres_mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_with(q: &QueryGraph, r: &[(usize, usize)]) -> u64 {
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
