//! Backtracking enumeration over the index, with the batch's edge rule.
//!
//! **Edge rule (exact positive / negative in mixed batches).** The batch's
//! inserted edges are ranked 0, 1, … (their position in the net delta). A
//! match of G' is new iff it uses an inserted edge; it is counted only in the
//! search started from its *smallest-ranked* inserted edge e_r: every other
//! query edge must map to an edge of G' that is either not inserted or
//! inserted with rank > r. Deletions mirror this on G with the deleted edges.
//! So each match of M(G') \ M(G) (resp. M(G) \ M(G')) is counted exactly once,
//! and a match using an inserted and a deleted edge, which is in neither
//! graph, is never searched (the insertion phase runs on G', the deletion
//! phase on G). The rule depends only on data edges, so it is invariant
//! under query automorphisms, which dual matching ([`super::dual`]) needs.

use std::collections::HashMap;

use csm_graph::{Label, VertexId};
use csm_planner::QueryGraph;

use super::index::{Bits, DataIndex};

/// Ranks of the batch edges of one phase.
#[derive(Debug, Default)]
pub struct EdgeFilter {
    ranks: HashMap<(VertexId, VertexId), u32>,
    touched: Bits,
}

impl EdgeFilter {
    pub fn new(edges: &[(VertexId, VertexId, Label)]) -> EdgeFilter {
        let mut f = EdgeFilter::default();
        for (r, &(x, y, _)) in edges.iter().enumerate() {
            f.ranks.insert((x.min(y), x.max(y)), r as u32);
            f.touched.set(x, true);
            f.touched.set(y, true);
        }
        f
    }

    /// Whether edge (p, v) may be used by a search started from rank `r`.
    #[inline]
    pub fn allowed(&self, p: VertexId, v: VertexId, r: u32) -> bool {
        if !self.touched.contains(p) || !self.touched.contains(v) {
            return true;
        }
        match self.ranks.get(&(p.min(v), p.max(v))) {
            None => true,
            Some(&k) => k > r,
        }
    }
}

/// Where the candidates of a query vertex come from.
#[derive(Clone, Copy, Debug)]
pub enum Cands<'a> {
    /// A sorted local candidate list (continuous mode).
    List(&'a [VertexId]),
    /// The global candidate index `C(u)` (static mode).
    Index,
}

/// One level of the search: the query vertex, its label and its backward
/// neighbours with edge labels.
#[derive(Clone, Debug)]
struct Level {
    u: usize,
    label: Label,
    back: Vec<(usize, Label)>,
}

/// A prepared search: `order` over the vertices not fixed beforehand.
pub struct Search<'a> {
    idx: &'a DataIndex,
    levels: Vec<Level>,
    cands: Vec<Cands<'a>>,
    filter: Option<(&'a EdgeFilter, u32)>,
}

impl<'a> Search<'a> {
    /// `fixed`: query vertices bound before the search (bit mask).
    pub fn new(
        idx: &'a DataIndex,
        q: &QueryGraph,
        fixed: u32,
        order: &[usize],
        cands: Vec<Cands<'a>>,
        filter: Option<(&'a EdgeFilter, u32)>,
    ) -> Search<'a> {
        let mut done = fixed;
        let mut levels = Vec::with_capacity(order.len());
        for &u in order {
            let back = (0..q.num_vertices())
                .filter(|&w| done >> w & 1 == 1)
                .filter_map(|w| q.edge_label(w, u).map(|l| (w, l)))
                .collect();
            levels.push(Level {
                u,
                label: q.label(u),
                back,
            });
            done |= 1 << u;
        }
        Search {
            idx,
            levels,
            cands,
            filter,
        }
    }

    #[inline]
    fn allowed(&self, p: VertexId, v: VertexId) -> bool {
        match self.filter {
            None => true,
            Some((f, r)) => f.allowed(p, v, r),
        }
    }

    #[inline]
    fn is_cand(&self, u: usize, v: VertexId) -> bool {
        match self.cands[u] {
            Cands::List(l) => l.binary_search(&v).is_ok(),
            Cands::Index => self.idx.is_candidate(u, v),
        }
    }

    /// Candidates of the first level (which has no backward neighbour).
    pub fn first_candidates(&self) -> Vec<VertexId> {
        let u = self.levels[0].u;
        match self.cands[u] {
            Cands::List(l) => l.to_vec(),
            Cands::Index => self.idx.candidates(u).iter().collect(),
        }
    }

    /// Number of completions of the binding `f` (the fixed vertices and the
    /// first `k` levels bound; `used` lists their images).
    pub fn count(&self, k: usize, f: &mut [VertexId], used: &mut Vec<VertexId>) -> u64 {
        if k == self.levels.len() {
            return 1;
        }
        let lv = &self.levels[k];
        let mut total = 0;
        if lv.back.is_empty() {
            let mut visit = |v: VertexId, f: &mut [VertexId], used: &mut Vec<VertexId>| {
                if !used.contains(&v) {
                    f[lv.u] = v;
                    used.push(v);
                    total += self.count(k + 1, f, used);
                    used.pop();
                }
            };
            match self.cands[lv.u] {
                Cands::List(l) => l.iter().for_each(|&v| visit(v, f, used)),
                Cands::Index => self.idx.candidates(lv.u).iter().for_each(|v| visit(v, f, used)),
            }
            return total;
        }
        // pivot: the backward neighbour with the shortest neighbour range
        let (pw, pel) = *lv
            .back
            .iter()
            .min_by_key(|&&(w, el)| self.idx.nbrs(f[w], el, lv.label).len())
            .expect("non-empty");
        let pv = f[pw];
        for &(_, _, v) in self.idx.nbrs(pv, pel, lv.label) {
            if used.contains(&v) || !self.is_cand(lv.u, v) || !self.allowed(pv, v) {
                continue;
            }
            let ok = lv
                .back
                .iter()
                .all(|&(w, el)| w == pw || (self.idx.has_edge(v, f[w], el) && self.allowed(f[w], v)));
            if !ok {
                continue;
            }
            if k + 1 == self.levels.len() {
                total += 1;
                continue;
            }
            f[lv.u] = v;
            used.push(v);
            total += self.count(k + 1, f, used);
            used.pop();
        }
        total
    }
}
