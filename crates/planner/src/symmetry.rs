//! Query symmetry for single-edge batches (RapidFlow's "dual matching" idea).
//!
//! When a batch changes exactly one data edge {p, q}, every new (or
//! vanished) embedding maps exactly one query edge onto it, and which
//! version the other relations are read in makes no difference (they can
//! not use the changed edge: an embedding is injective on edges). Fixing the
//! data orientation p→q, the embeddings are partitioned by the oriented
//! query edge o = (a→b) bound to p→q, and an automorphism σ of Q maps those
//! of o one-to-one onto those of σ(o). So the count is
//! Σ over orbits O of oriented query edges under Aut(Q): |O| × count(rep(O)).
//! For a triangle that is one seed instead of six, for a 4-clique one
//! instead of twelve.

use crate::plan::{DeltaPlan, Plan, Sign};
use crate::query::{QVertex, QueryGraph, MAX_QUERY_VERTICES};

/// Skip symmetry when the automorphism group is larger than this.
pub const MAX_AUTOMORPHISMS: usize = 50_000;

/// One representative seed: run plan `plan` with the changed edge bound
/// forward (`p → order[0]`, `q → order[1]`) or backward, and multiply by `weight`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRule {
    pub plan: usize,
    pub forward: bool,
    pub weight: u64,
    /// The orbit holds both orientations of the edge, so either data
    /// orientation gives the same count (callers may pick the cheaper one).
    pub reversible: bool,
}

/// All label- and edge-label-preserving automorphisms of `q`, or `None` when
/// there are more than `limit`; in lexicographic order of their images
/// (`σ(0)`, then `σ(1)`, …).
pub fn automorphisms(q: &QueryGraph, limit: usize) -> Option<Vec<Vec<QVertex>>> {
    let n = q.num_vertices();
    let mut out = Vec::new();
    let all = search(q, &[], &mut |map| {
        out.push(map[..n].to_vec());
        out.len() <= limit
    });
    all.then(|| {
        out.sort_unstable();
        out
    })
}

/// Whether a label- and edge-label-preserving automorphism σ of `q` with
/// σ(a) = b for every `(a, b)` in `pres` exists (orbits under a stabiliser
/// without enumerating the group: `t` is in the orbit of `v` under the
/// stabiliser of `fixed` iff one exists with `fixed` and `(v, t)`).
pub fn exists_automorphism(q: &QueryGraph, pres: &[(QVertex, QVertex)]) -> bool {
    let mut any = false;
    search(q, pres, &mut |_| {
        any = true;
        false
    });
    any
}

/// Calls `found` with every label- and edge-label-preserving automorphism
/// of `q` that maps `a` to `b` for each `(a, b)` in `pres` (as a map of
/// `q`'s vertices), until it returns false; returns false when stopped.
///
/// The search extends the mapped vertices by the unmapped one with the
/// most mapped neighbours (ties: the higher degree), so that the query
/// edges to mapped vertices constrain each choice. In vertex-id order a
/// 32-vertex cubic query with scrambled ids did not finish in a minute
/// (each vertex's image was checked only against lower ids, often none of
/// its neighbours), and a star of 12 same-label leaves took 12! steps to
/// count.
fn search(q: &QueryGraph, pres: &[(QVertex, QVertex)], found: &mut dyn FnMut(&[usize]) -> bool) -> bool {
    let n = q.num_vertices();
    let mut map = [usize::MAX; MAX_QUERY_VERTICES];
    let mut used = 0u32;
    for &(a, b) in pres {
        if map[a] != usize::MAX {
            if map[a] != b {
                return true;
            }
            continue;
        }
        if used >> b & 1 == 1 {
            return true;
        }
        map[a] = b;
        used |= 1 << b;
    }
    // `k ↦ t` keeps labels, degrees and every edge (and non-edge) to mapped vertices
    let fits = |map: &[usize], k: QVertex, t: QVertex| {
        q.label(k) == q.label(t)
            && q.degree(k) == q.degree(t)
            && (0..n).all(|p| map[p] == usize::MAX || p == k || q.edge_label(p, k) == q.edge_label(map[p], t))
    };
    if !(0..n).all(|a| map[a] == usize::MAX || fits(&map, a, map[a])) {
        return true;
    }
    let mut order = Vec::with_capacity(n);
    let mut placed = pres.iter().fold(0u32, |m, &(a, _)| m | 1 << a);
    while (placed.count_ones() as usize) < n {
        let next = (0..n)
            .filter(|&k| placed >> k & 1 == 0)
            .max_by_key(|&k| ((q.adj_mask(k) & placed).count_ones(), q.degree(k), std::cmp::Reverse(k)))
            .expect("an unplaced vertex");
        order.push(next);
        placed |= 1 << next;
    }
    struct Search<'a> {
        n: usize,
        fits: &'a dyn Fn(&[usize], QVertex, QVertex) -> bool,
        found: &'a mut dyn FnMut(&[usize]) -> bool,
    }
    fn rec(s: &mut Search<'_>, order: &[QVertex], map: &mut [usize], used: &mut u32) -> bool {
        let Some((&k, rest)) = order.split_first() else {
            return (s.found)(map);
        };
        for t in 0..s.n {
            if *used >> t & 1 == 0 && (s.fits)(map, k, t) {
                map[k] = t;
                *used |= 1 << t;
                let go_on = rec(s, rest, map, used);
                *used &= !(1 << t);
                map[k] = usize::MAX;
                if !go_on {
                    return false;
                }
            }
        }
        true
    }
    let mut s = Search { n, fits: &fits, found };
    rec(&mut s, &order, &mut map, &mut used)
}

/// |Aut(Q)|, labels and edge labels kept, by the orbit–stabiliser theorem:
/// the product over a stabiliser chain of each next vertex's orbit under
/// the stabiliser of the vertices before it ([`exists_automorphism`]),
/// without enumerating the group (a star of 31 leaves has 31! ≈ 8·10^33
/// automorphisms, hence 128 bits).
pub fn automorphism_count(q: &QueryGraph) -> u128 {
    let n = q.num_vertices();
    let mut fixed: Vec<(QVertex, QVertex)> = Vec::with_capacity(n);
    let mut total = 1u128;
    for v in 0..n {
        let mut pres = fixed.clone();
        pres.push((v, v));
        let orbit = (0..n)
            .filter(|&t| {
                t == v || {
                    *pres.last_mut().expect("v is prescribed") = (v, t);
                    exists_automorphism(q, &pres)
                }
            })
            .count();
        total *= orbit as u128;
        fixed.push((v, v));
    }
    total
}

/// Representative seeds for single-edge batches of one sign, or `None` when
/// the automorphism group is too large to enumerate.
pub fn single_edge_rules(q: &QueryGraph, plans: &[DeltaPlan], sign: Sign) -> Option<Vec<SeedRule>> {
    rules_under(q, &automorphisms(q, MAX_AUTOMORPHISMS)?, plans, sign)
}

/// [`single_edge_rules`] for the automorphisms `auts` of `q`.
fn rules_under(q: &QueryGraph, auts: &[Vec<QVertex>], plans: &[DeltaPlan], sign: Sign) -> Option<Vec<SeedRule>> {
    let oriented: Vec<(QVertex, QVertex)> = q.edges().iter().flat_map(|&(a, b, _)| [(a, b), (b, a)]).collect();
    let mut seen = vec![false; oriented.len()];
    let mut rules = Vec::new();
    for (k, &(a, b)) in oriented.iter().enumerate() {
        if seen[k] {
            continue;
        }
        let mut size = 0;
        let mut reversible = false;
        for s in auts {
            reversible |= (s[a], s[b]) == (b, a);
            let img = (s[a], s[b]);
            let j = oriented
                .iter()
                .position(|&o| o == img)
                .expect("automorphisms preserve edges");
            if !seen[j] {
                seen[j] = true;
                size += 1;
            }
        }
        let i = q.edge_index(a, b).expect("query edge");
        let plan = plans.iter().position(|p| p.edge_index == i && p.sign == sign)?;
        let forward = plans[plan].plan.order[0] == a;
        rules.push(SeedRule {
            plan,
            forward,
            weight: size,
            reversible,
        });
    }
    Some(rules)
}

/// Symmetry breaking for counting: restricts `plan` so that it counts one
/// embedding per orbit of the automorphisms that fix the first `fixed`
/// plan vertices, and returns it with the factor that restores the full
/// count (restricted count × factor = plain count).
///
/// The restrictions follow the stabiliser chain (Grochow & Kellis, RECOMB
/// 2007; GraphPi, SC 2020): walking the plan order, with G the automorphisms
/// that fix every earlier vertex, the vertex v at position d has the orbit
/// G·v, which holds only later vertices; requiring M(v) < M(w) for every
/// other w of the orbit keeps, of each |G|-element family of embeddings
/// f∘σ (σ ∈ G), the |G_v| whose σ maps v onto the orbit vertex of smallest
/// image, so the count shrinks by |G·v|; then G becomes G_v. The factor is
/// the product of the orbit sizes, |G| over the chain (less when the chain
/// stops early to keep the plan's last-level memo).
///
/// `auts` are label-preserving automorphisms of the plan's query
/// ([`automorphisms`]).
pub fn break_symmetry(plan: &Plan, auts: &[Vec<QVertex>], fixed: usize) -> (Plan, u64) {
    let order = &plan.order;
    let mut pos = vec![0u8; order.len()];
    for (d, &u) in order.iter().enumerate() {
        pos[u] = d as u8;
    }
    let mut group: Vec<&Vec<QVertex>> = auts
        .iter()
        .filter(|s| order[..fixed].iter().all(|&u| s[u] == u))
        .collect();
    let mut pairs = Vec::new();
    let mut factor = 1u64;
    for (d, &v) in order.iter().enumerate().skip(fixed) {
        let mut orbit: Vec<QVertex> = group.iter().map(|s| s[v]).collect();
        orbit.sort_unstable();
        orbit.dedup();
        // A bound on the last level from a binding that changes while the
        // last-level memo keeps its entries would turn the memo off, which
        // costs more than halving the count saves (the diamond's |N(a) ∩
        // N(c)| repeats across every b): stop the chain there (any prefix of
        // the chain is sound, with the factor of the steps taken).
        let memo_lost = plan
            .memo_from
            .zip(plan.memo_level())
            .is_some_and(|(f, m)| d >= f as usize && d + 1 != m && orbit.iter().any(|&w| pos[w] as usize == m));
        // Likewise a bound between two levels of an independent tail
        // ([`Plan::wide_tail`]) would make it dependent again: the tail
        // counts its tuples per node at its start from a few candidate
        // sets, which beats listing half of them (RapidFlow's delete Q_57,
        // whose twins 0 and 1 hang off the same two vertices).
        let tail_lost = plan
            .wide_tail
            .as_ref()
            .is_some_and(|t| d >= t.start as usize && orbit.len() > 1);
        if memo_lost || tail_lost {
            break;
        }
        pairs.extend(orbit.iter().filter(|&&w| w != v).map(|&w| (d as u8, pos[w])));
        factor *= orbit.len() as u64;
        group.retain(|s| s[v] == v);
    }
    (plan.clone().with_bounds(&pairs), factor)
}

/// [`single_edge_rules`] whose plans also break the symmetry that is left
/// once the seed edge is bound ([`break_symmetry`] with two fixed
/// vertices): the rules index the returned plans, and their weights include
/// the restriction factors.
pub fn single_edge_restricted(
    q: &QueryGraph,
    plans: &[DeltaPlan],
    sign: Sign,
) -> Option<(Vec<SeedRule>, Vec<DeltaPlan>)> {
    let auts = automorphisms(q, MAX_AUTOMORPHISMS)?;
    let mut rules = rules_under(q, &auts, plans, sign)?;
    let mut restricted: Vec<(usize, DeltaPlan, u64)> = Vec::new();
    for r in &mut rules {
        let k = match restricted.iter().position(|(i, _, _)| *i == r.plan) {
            Some(k) => k,
            None => {
                let p = &plans[r.plan];
                let (plan, factor) = break_symmetry(&p.plan, &auts, 2);
                let p = DeltaPlan {
                    plan,
                    edge_index: p.edge_index,
                    sign: p.sign,
                    seed_elabel: p.seed_elabel,
                };
                restricted.push((r.plan, p, factor));
                restricted.len() - 1
            }
        };
        r.plan = k;
        r.weight *= restricted[k].2;
    }
    Some((rules, restricted.into_iter().map(|(_, p, _)| p).collect()))
}
