//! |Aut(Q)| by a stabiliser chain, and the search for one automorphism
//! with prescribed images, against every permutation of small queries and
//! against closed forms (stars, cliques, cycles) up to 32 vertices.

use csm_planner::{automorphism_count, automorphisms, exists_automorphism, QueryGraph};
use proptest::prelude::*;

/// Every permutation of `0..n` that keeps `q`'s vertex labels, edges and
/// edge labels (the brute-force oracle).
fn brute_force(q: &QueryGraph) -> Vec<Vec<usize>> {
    let n = q.num_vertices();
    let mut out = Vec::new();
    let mut perm: Vec<usize> = (0..n).collect();
    fn go(k: usize, perm: &mut Vec<usize>, q: &QueryGraph, out: &mut Vec<Vec<usize>>) {
        let n = perm.len();
        if k == n {
            let keeps = (0..n).all(|a| {
                q.label(a) == q.label(perm[a]) && (0..n).all(|b| q.edge_label(a, b) == q.edge_label(perm[a], perm[b]))
            });
            if keeps {
                out.push(perm.clone());
            }
            return;
        }
        for i in k..n {
            perm.swap(k, i);
            go(k + 1, perm, q, out);
            perm.swap(k, i);
        }
    }
    go(0, &mut perm, q, &mut out);
    out
}

/// A connected query: a random spanning tree plus extra edges, labels from
/// `labels` and, with `edge_labels`, edge labels below it.
fn query() -> impl Strategy<Value = QueryGraph> {
    (3usize..=8, 1u32..=3, 0u32..=2, any::<u64>()).prop_map(|(n, labels, edge_labels, seed)| {
        let mut x = seed | 1;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        // few labels and dense shapes give large groups
        let vl: Vec<u32> = (0..n).map(|_| next(u64::from(labels)) as u32).collect();
        let mut edges: Vec<(usize, usize, u32)> = Vec::new();
        let el = |next: &mut dyn FnMut(u64) -> u64| {
            if edge_labels == 0 {
                0
            } else {
                next(u64::from(edge_labels) + 1) as u32
            }
        };
        for v in 1..n {
            let u = next(v as u64) as usize;
            edges.push((u, v, el(&mut next)));
        }
        for a in 0..n {
            for b in a + 1..n {
                if next(3) == 0 && !edges.iter().any(|&(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a)) {
                    edges.push((a, b, el(&mut next)));
                }
            }
        }
        QueryGraph::new(vl, &edges, edge_labels > 0).expect("a connected query")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_count_equals_the_permutations_that_keep_the_query(q in query()) {
        prop_assert_eq!(automorphism_count(&q), brute_force(&q).len() as u128, "{:?}", q);
    }

    /// The listed group is those permutations, in lexicographic order, or
    /// `None` past its limit.
    #[test]
    fn the_listed_group_is_the_permutations_that_keep_the_query(q in query(), limit in 1usize..50) {
        let mut want = brute_force(&q);
        want.sort_unstable();
        let want = (want.len() <= limit).then_some(want);
        prop_assert_eq!(automorphisms(&q, limit), want, "{:?}", q);
    }

    /// One or two prescribed images: an automorphism exists exactly when a
    /// permutation that keeps the query has them.
    #[test]
    fn prescribed_images_exist_as_the_permutations_say(q in query(), picks in proptest::collection::vec((0usize..8, 0usize..8), 1..=2)) {
        let n = q.num_vertices();
        let pres: Vec<(usize, usize)> = picks.iter().map(|&(a, b)| (a % n, b % n)).collect();
        let want = brute_force(&q).iter().any(|p| pres.iter().all(|&(a, b)| p[a] == b));
        prop_assert_eq!(exists_automorphism(&q, &pres), want, "{:?} {:?}", q, pres);
    }
}

fn factorial(n: u128) -> u128 {
    (1..=n).product()
}

#[test]
fn closed_forms_up_to_thirty_two_vertices() {
    for n in [3usize, 8, 16, 32] {
        let star: Vec<_> = (1..n).map(|v| (0, v, 0)).collect();
        let star = QueryGraph::new(vec![0; n], &star, false).unwrap();
        assert_eq!(automorphism_count(&star), factorial(n as u128 - 1), "star of {n}");
        let cycle: Vec<_> = (0..n).map(|v| (v, (v + 1) % n, 0)).collect();
        let cycle = QueryGraph::new(vec![0; n], &cycle, false).unwrap();
        assert_eq!(automorphism_count(&cycle), 2 * n as u128, "cycle of {n}");
    }
    for n in [4usize, 12] {
        let clique: Vec<_> = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b, 0))).collect();
        let clique = QueryGraph::new(vec![0; n], &clique, false).unwrap();
        assert_eq!(automorphism_count(&clique), factorial(n as u128), "clique of {n}");
    }
    // a cubic query of 32 vertices with scrambled ids: listing its group in
    // id order did not end (each image was checked against lower ids only)
    let cubic = scrambled_cubic();
    assert_eq!(
        automorphisms(&cubic, 1000).map(|a| a.len() as u128),
        Some(automorphism_count(&cubic))
    );
    // two labels of leaves: 20 of one, 11 of the other
    let star: Vec<_> = (1..32).map(|v| (0, v, 0)).collect();
    let labels: Vec<u32> = (0..32).map(|v| u32::from(v > 20)).collect();
    let star = QueryGraph::new(labels, &star, false).unwrap();
    assert_eq!(automorphism_count(&star), factorial(20) * factorial(11));
}

/// A connected 3-regular query on 32 vertices (a 32-cycle with chords
/// `i – i + 16` and ids scrambled by multiplying by 13 mod 32).
fn scrambled_cubic() -> QueryGraph {
    let id = |v: usize| v * 13 % 32;
    let mut edges: Vec<_> = (0..32).map(|v| (id(v), id((v + 1) % 32), 0)).collect();
    edges.extend((0..16).map(|v| (id(v), id(v + 16), 0)));
    QueryGraph::new(vec![0; 32], &edges, false).unwrap()
}
