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

use crate::plan::{DeltaPlan, Sign};
use crate::query::{QVertex, QueryGraph};

/// Skip symmetry when the automorphism group is larger than this.
const MAX_AUTOMORPHISMS: usize = 50_000;

/// One representative seed: run plan `plan` with the changed edge bound
/// forward (p→order[0], q→order[1]) or backward, and multiply by `weight`.
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
/// there are more than `limit`.
pub fn automorphisms(q: &QueryGraph, limit: usize) -> Option<Vec<Vec<QVertex>>> {
    let n = q.num_vertices();
    let mut out = Vec::new();
    let mut map = vec![usize::MAX; n];
    fn rec(q: &QueryGraph, k: usize, map: &mut [usize], used: u32, out: &mut Vec<Vec<QVertex>>, limit: usize) -> bool {
        let n = q.num_vertices();
        if k == n {
            out.push(map.to_vec());
            return out.len() <= limit;
        }
        for t in 0..n {
            if used >> t & 1 == 1 || q.label(t) != q.label(k) || q.degree(t) != q.degree(k) {
                continue;
            }
            let ok = (0..k)
                .all(|p| q.has_edge(p, k) == q.has_edge(map[p], t) && q.edge_label(p, k) == q.edge_label(map[p], t));
            if ok {
                map[k] = t;
                if !rec(q, k + 1, map, used | 1 << t, out, limit) {
                    return false;
                }
            }
        }
        true
    }
    rec(q, 0, &mut map, 0, &mut out, limit).then_some(out)
}

/// Representative seeds for single-edge batches of one sign, or `None` when
/// the automorphism group is too large to enumerate.
pub fn single_edge_rules(q: &QueryGraph, plans: &[DeltaPlan], sign: Sign) -> Option<Vec<SeedRule>> {
    let auts = automorphisms(q, MAX_AUTOMORPHISMS)?;
    let oriented: Vec<(QVertex, QVertex)> = q.edges().iter().flat_map(|&(a, b, _)| [(a, b), (b, a)]).collect();
    let mut seen = vec![false; oriented.len()];
    let mut rules = Vec::new();
    for (k, &(a, b)) in oriented.iter().enumerate() {
        if seen[k] {
            continue;
        }
        let mut size = 0;
        let mut reversible = false;
        for s in &auts {
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
