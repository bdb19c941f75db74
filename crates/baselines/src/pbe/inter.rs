//! Inter-partition search with shared execution (paper 003 Sec. 3.2, 4, 5;
//! Algorithms 2 and 3).
//!
//! *Plan (Alg. 2).* One search sequence per pattern edge, grouped into
//! strict-equivalence groups by the equivalence edge classes of Aut(P)
//! (Lemma 3): only the class representative is searched, its sequence
//! starting with the representative edge and ordered by the cost model
//! (GENSEARCHSEQUENCE, see [`super::plan`]).
//!
//! *Pruning stage (Alg. 3 lines 3–5).* Every cross edge (v_i, v_j),
//! ρ(v_i) ≠ ρ(v_j), seeds (π(1), π(2)) in both orientations, when labels
//! (and the edge label) fit.
//!
//! *Enumeration stage (lines 6–12).* COMPUTE on the whole graph (which PBE
//! keeps in host memory and loads on demand, LOADSUBGRAPHTOGPU), then
//! DUPREMOVE: with undirected edges ordered by (min, max), an instance is
//! kept only under the sequence whose prime pattern edge maps to its
//! smallest cross edge, so each inter-partition instance is produced by
//! exactly one pattern edge's search.
//!
//! *Sharing (lines 13–14).* The searches of the other members of a class
//! are not run: an automorphism A with A(rep) = e' maps the instances f of
//! the representative one-to-one onto those of e' (REMAP, f' = f ∘ A⁻¹).
//! So inter = Σ over classes |class| × |results of the representative|.
//! The printed Alg. 3 loops over π_j ≠ π and so drops the representative's
//! own results; we count (and, with a sink, emit) them too (NOTES.md).

use csm_graph::{CsrGraph, GraphView, VertexId};
use csm_planner::QueryGraph;

use super::plan::{edge_classes, search_order, CostStats, SearchSeq};
use super::search::{Enumerator, Found, Sink};

/// Figures of one inter-partition search.
#[derive(Clone, Debug, Default)]
pub struct InterResult {
    /// Inter-partition instances (all classes, shared results multiplied).
    pub instances: u64,
    /// Partial instances materialised in the enumeration stages.
    pub partials: u64,
    /// Cross edges |E^r(G)|.
    pub cross_edges: usize,
    /// Seeds (oriented cross edges fitting the prime edge), summed over classes.
    pub seeds: usize,
    /// Equivalence edge classes = strict-equivalence groups searched.
    pub classes: usize,
}

/// Runs the inter-partition search. With a sink, every inter-partition
/// instance is emitted once as `f(0), …, f(n−1)` (query-vertex order).
pub fn inter(
    g: &CsrGraph,
    q: &QueryGraph,
    parts: &[u32],
    stats: &CostStats,
    cap: usize,
    sink: Option<Sink<'_>>,
) -> InterResult {
    let labels = g.labels();
    let mut cross: Vec<(VertexId, VertexId, u32)> = Vec::new();
    for u in 0..g.num_vertices() as VertexId {
        let el = g.edge_labels(u);
        for (i, &v) in g.neighbors(u).iter().enumerate() {
            if u < v && parts[u as usize] != parts[v as usize] {
                cross.push((u, v, el.get(i).copied().unwrap_or(0)));
            }
        }
    }
    let classes = edge_classes(q);
    let mut out = InterResult {
        cross_edges: cross.len(),
        classes: classes.len(),
        ..Default::default()
    };
    let n = q.num_vertices();
    for class in &classes {
        let (a, b) = class.rep;
        let seq = SearchSeq::new(q, search_order(q, &[a, b], stats));
        let want_el = if q.edge_labelled() { q.edge_label(a, b) } else { None };
        // pruning stage: B_2
        let mut seeds: Vec<VertexId> = Vec::new();
        for &(x, y, l) in &cross {
            if want_el.is_some_and(|w| w != l) {
                continue;
            }
            for (s, t) in [(x, y), (y, x)] {
                if labels[s as usize] == q.label(a) && labels[t as usize] == q.label(b) {
                    seeds.push(s);
                    seeds.push(t);
                }
            }
        }
        out.seeds += seeds.len() / 2;
        // REMAP for every member: f'(A(u)) = f(u)
        let remap = |f: &[VertexId]| {
            if let Some(sink) = sink {
                let mut inst = vec![0; n];
                for (i, &u) in seq.order.iter().enumerate() {
                    inst[u] = f[i];
                }
                let mut image = vec![0; n];
                for (_, aut) in &class.members {
                    for u in 0..n {
                        image[aut[u]] = inst[u];
                    }
                    sink(&image);
                }
            }
        };
        let e = Enumerator {
            g,
            seq: &seq,
            dup: Some(parts),
            cap,
            sink: sink.map(|_| &remap as Sink<'_>),
        };
        let found: Found = e.run(2, &seeds);
        out.instances += found.instances * class.members.len() as u64;
        out.partials += found.partials;
    }
    out
}
