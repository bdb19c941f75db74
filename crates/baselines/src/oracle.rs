//! Oracles for tests and `csm verify`: deliberately simple and independent of
//! the planner's code paths.
//!
//! * [`BruteForce`]: backtracking over injective maps with direct adjacency
//!   checks against a hash set of edges; also returns the embeddings
//!   themselves, so tests can take set differences M(G') \ M(G).
//! * [`Vf2`]: petgraph's VF2. petgraph matches *node-induced* subgraphs, so
//!   the non-induced count is assembled as Σ over all supergraphs Q' of Q on
//!   the same vertex set (every way to add query edges, with every data edge
//!   label) of induced(Q'): each non-induced embedding f is an induced
//!   embedding of exactly one Q', the pull-back of G[f(V)].

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use csm_engine::{EngineError, StaticMatcher};
use csm_graph::{CsrGraph, GraphData, GraphView, Label, VertexId, ABSENT};
use csm_planner::QueryGraph;
use petgraph::graph::UnGraph;

/// Every embedding of `q` in `g`, as `f(0), …, f(n-1)`, in a sorted set.
pub fn embeddings(g: &GraphData, q: &QueryGraph) -> BTreeSet<Vec<VertexId>> {
    let mut edges: HashMap<(VertexId, VertexId), Label> = HashMap::new();
    let mut adj: Vec<Vec<VertexId>> = vec![Vec::new(); g.labels.len()];
    for e in &g.edges {
        let l = if g.edge_labelled { e.label } else { 0 };
        edges.insert(e.key(), l);
        adj[e.u as usize].push(e.v);
        adj[e.v as usize].push(e.u);
    }
    // bind query vertices in BFS order so each has a bound neighbour
    let n = q.num_vertices();
    let mut order = vec![0usize];
    while order.len() < n {
        let next = (0..n)
            .find(|&u| !order.contains(&u) && order.iter().any(|&w| q.has_edge(w, u)))
            .expect("connected");
        order.push(next);
    }
    let mut out = BTreeSet::new();
    let mut f = vec![u32::MAX; n];
    #[allow(clippy::too_many_arguments)]
    fn rec(
        k: usize,
        order: &[usize],
        q: &QueryGraph,
        g: &GraphData,
        adj: &[Vec<VertexId>],
        edges: &HashMap<(VertexId, VertexId), Label>,
        f: &mut Vec<VertexId>,
        out: &mut BTreeSet<Vec<VertexId>>,
    ) {
        if k == order.len() {
            out.insert(f.clone());
            return;
        }
        let u = order[k];
        let cands: Vec<VertexId> = if k == 0 {
            (0..g.labels.len() as VertexId).collect()
        } else {
            let w = *order[..k].iter().find(|&&w| q.has_edge(w, u)).expect("bound neighbour");
            adj[f[w] as usize].clone()
        };
        'next: for x in cands {
            if g.labels[x as usize] == ABSENT || g.labels[x as usize] != q.label(u) || f.contains(&x) {
                continue;
            }
            for &w in &order[..k] {
                if let Some(l) = q.edge_label(w, u) {
                    let key = (x.min(f[w]), x.max(f[w]));
                    match edges.get(&key) {
                        Some(&dl) if !q.edge_labelled() || dl == l => {}
                        _ => continue 'next,
                    }
                }
            }
            f[u] = x;
            rec(k + 1, order, q, g, adj, edges, f, out);
            f[u] = u32::MAX;
        }
    }
    rec(0, &order, q, g, &adj, &edges, &mut f, &mut out);
    out
}

/// Brute-force static matcher (tiny graphs only).
#[derive(Clone, Copy, Debug, Default)]
pub struct BruteForce;

impl StaticMatcher for BruteForce {
    fn name(&self) -> &str {
        "oracle"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        if g.num_vertices() > 5_000 {
            return Err(EngineError::Unsupported {
                engine: "oracle".into(),
                reason: format!(
                    "brute force is for tiny graphs ({} vertices given, at most 5000)",
                    g.num_vertices()
                ),
            });
        }
        Ok(embeddings(&g.to_data(), q).len() as u64)
    }
}

/// petgraph VF2 static matcher (non-induced counts via supergraph sums).
/// Declines inputs of too many supergraphs or vertices, never for time:
/// an oracle whose answer depends on the machine's load would make tests
/// flaky ([`Vf2Within`] adds a time budget for interactive use).
#[derive(Clone, Copy, Debug, Default)]
pub struct Vf2;

/// [`Vf2`] that also declines when its predicted time exceeds a budget in
/// seconds: the registry's `vf2` ([`VF2_TIME_BUDGET_S`]), which
/// `csm verify --engines all` recounts with after every batch.
#[derive(Clone, Copy, Debug)]
pub struct Vf2Within(pub f64);

impl Vf2 {
    fn induced(q: &UnGraph<Label, Label>, g: &UnGraph<Label, Label>) -> u64 {
        let mut nm = |a: &Label, b: &Label| a == b;
        let mut em = |a: &Label, b: &Label| a == b;
        let count = match petgraph::algo::subgraph_isomorphisms_iter(&q, &g, &mut nm, &mut em) {
            Some(it) => it.count() as u64,
            None => 0,
        };
        count
    }
}

/// Supergraphs whose mean time [`Vf2Within`] predicts from.
const PROBES: f64 = 8.0;

/// The registry's `vf2` ([`Vf2Within`]) declines (`Unsupported`) when the
/// mean time of its first 8 supergraphs (`PROBES`) times the number of
/// supergraphs exceeds this (or the first alone predicts ten times it):
/// `csm verify --engines all` recounts with it after every batch.
pub const VF2_TIME_BUDGET_S: f64 = 5.0;

impl StaticMatcher for Vf2 {
    fn name(&self) -> &str {
        "vf2"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        Vf2::count_within(g, q, None)
    }
}

impl StaticMatcher for Vf2Within {
    fn name(&self) -> &str {
        "vf2"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        Vf2::count_within(g, q, Some(self.0))
    }
}

impl Vf2 {
    /// The count, declined past `budget` seconds (predicted) when given.
    fn count_within(g: &CsrGraph, q: &QueryGraph, budget: Option<f64>) -> Result<u64, EngineError> {
        let n = q.num_vertices();
        let mut data = g.to_data();
        if !q.edge_labelled() {
            data.edge_labelled = false; // unlabelled queries ignore edge labels
        }
        let mut elabels: Vec<Label> = data
            .edges
            .iter()
            .map(|e| if data.edge_labelled { e.label } else { 0 })
            .collect();
        elabels.sort_unstable();
        elabels.dedup();
        if elabels.is_empty() {
            elabels.push(0);
        }
        let non_edges: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| !q.has_edge(a, b))
            .collect();
        let combos = (elabels.len() as f64 + 1.0).powi(non_edges.len() as i32);
        if combos > 20_000.0 || g.num_vertices() > 5_000 {
            return Err(EngineError::Unsupported {
                engine: "vf2".into(),
                reason: format!(
                    "{combos} supergraphs or {} vertices is too many for the VF2 oracle",
                    g.num_vertices()
                ),
            });
        }
        let mut pg: UnGraph<Label, Label> = UnGraph::default();
        for &l in &data.labels {
            pg.add_node(l);
        }
        for e in &data.edges {
            pg.add_edge(e.u.into(), e.v.into(), if data.edge_labelled { e.label } else { 0 });
        }
        let mut total = 0;
        // choice[k] = 0: pair k stays a non-edge, else edge with elabels[choice-1]
        let mut choice = vec![0usize; non_edges.len()];
        let started = Instant::now();
        let mut done = 0usize;
        loop {
            let mut qg: UnGraph<Label, Label> = UnGraph::default();
            for &l in q.labels() {
                qg.add_node(l);
            }
            for &(a, b, l) in q.edges() {
                qg.add_edge((a as u32).into(), (b as u32).into(), l);
            }
            for (k, &(a, b)) in non_edges.iter().enumerate() {
                if choice[k] > 0 {
                    qg.add_edge((a as u32).into(), (b as u32).into(), elabels[choice[k] - 1]);
                }
            }
            total += Self::induced(&qg, &pg);
            done += 1;
            // the first supergraph (Q itself) is the sparsest and slowest:
            // refuse when all of them would take longer than the budget, at
            // once when the first predicts ten budgets, else by the mean of
            // the first few (one timing can catch a descheduled thread)
            if done == 1 || done as f64 == PROBES.min(combos) {
                let predicted = started.elapsed().as_secs_f64() / done as f64 * combos;
                let over = |b: f64| predicted > if done == 1 { 10.0 * b } else { b };
                if let Some(budget) = budget.filter(|&b| over(b)) {
                    return Err(EngineError::Unsupported {
                        engine: "vf2".into(),
                        reason: format!(
                            "VF2 would take about {predicted:.0} s for {combos} supergraphs (budget {budget} s)"
                        ),
                    });
                }
            }
            // next combination (odometer)
            let mut k = 0;
            while k < choice.len() {
                choice[k] += 1;
                if choice[k] <= elabels.len() {
                    break;
                }
                choice[k] = 0;
                k += 1;
            }
            if k == choice.len() {
                break;
            }
        }
        Ok(total)
    }
}
