//! RapidFlow (Sun, Sun, He, Luo, VLDB 2022, "RapidFlow: An Efficient
//! Approach to Continuous Subgraph Matching"), natively continuous. No copy
//! of the paper is in the project; its ideas are the specification:
//!
//! | module | idea |
//! |---|---|
//! | [`index`] | global index: the query-relevant data edges (one view per label triple, shared adjacency) and a candidate set per query vertex (NLF filter), both maintained under inserts and deletes |
//! | [`reduce`] | query reduction: an update matched to query edge (a, b) becomes batch matching of Q − {a, b} on local candidate sets (the affected region) |
//! | [`order`] | a matching order chosen for the reduced query from its candidate sizes, not necessarily starting next to the updated edge |
//! | [`dual`] | dual matching: directed query edges in one orbit of Aut(Q) share one search, multiplied by the orbit size |
//! | [`search`] | backtracking enumeration with the batch edge rule |
//!
//! **Per batch.** The updates are validated and netted by a
//! [`csm_graph::DynamicGraph`] (the only code shared with the rest of csm);
//! edge labels are folded to 0 when the query ignores them, and an edge that
//! is only relabelled then drops out of the delta. Then:
//!
//! 1. *negatives*, on G (index not yet updated): for every deleted edge and
//!    every orbit representative (a, b) whose labels fit, reduce, order and
//!    count the matches through it under the edge rule of [`search`];
//! 2. the index is updated (vertices, edges, candidate sets);
//! 3. *positives*, on G', the same for the inserted edges.
//!
//! The (edge, orbit) tasks run in parallel on a rayon pool. `seconds`
//! reports 1 + 3, `update_seconds` validation and step 2.
//!
//! **Static mode** ([`StaticMatcher`]): the index of G and the same search
//! with the global candidate sets and the order rule of [`order`], in
//! parallel over the first vertex's candidates.
//!
//! `dual = false` searches every directed query edge separately (to measure
//! what dual matching saves).

pub mod dual;
pub mod index;
pub mod order;
pub mod reduce;
pub mod search;

use std::sync::Arc;
use std::time::Instant;

use csm_engine::{process_phases, relabel_phases, Batch, BatchResult, ContinuousMatcher, EngineError, StaticMatcher};
use csm_graph::{CsrGraph, DynamicGraph, GraphData, GraphView, Label, VertexId};
use csm_planner::QueryGraph;
use rayon::prelude::*;

use dual::EdgeOrbit;
use index::DataIndex;
use reduce::IndexingOrder;
use search::{Cands, EdgeFilter, Search};

/// The RapidFlow engine (continuous; also static).
pub struct RapidFlow {
    /// Share searches among automorphic query edges.
    pub dual: bool,
    pool: Arc<rayon::ThreadPool>,
    state: Option<State>,
}

struct State {
    graph: DynamicGraph,
    q: QueryGraph,
    idx: DataIndex,
    orbits: Vec<EdgeOrbit>,
    /// Indexing order of the reduced query, per orbit representative.
    iorders: Vec<IndexingOrder>,
}

/// Counters of one phase (also reported in [`BatchResult::extra`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseStats {
    /// (edge, orbit) tasks whose labels fit.
    pub tasks: u64,
    /// Tasks cut by the candidate index or an empty local candidate set.
    pub pruned: u64,
}

impl RapidFlow {
    /// `threads = 0` uses every core; dual matching on.
    pub fn new(threads: usize) -> Result<RapidFlow, EngineError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| EngineError::Other(format!("cannot start thread pool: {e}")))?;
        Ok(RapidFlow {
            dual: true,
            pool: Arc::new(pool),
            state: None,
        })
    }

    pub fn with_dual(mut self, on: bool) -> Self {
        self.dual = on;
        self
    }

    /// Bytes held by the index (after `init`).
    pub fn index_bytes(&self) -> usize {
        self.state.as_ref().map_or(0, |s| s.idx.memory_bytes())
    }

    /// Number of searched orbits per data edge (after `init`).
    pub fn orbits(&self) -> usize {
        self.state.as_ref().map_or(0, |s| s.orbits.len())
    }
}

/// Counts the matches through each batch edge (one phase).
fn count_phase(
    idx: &DataIndex,
    q: &QueryGraph,
    orbits: &[EdgeOrbit],
    iorders: &[IndexingOrder],
    edges: &[(VertexId, VertexId, Label)],
) -> (u64, PhaseStats) {
    let filter = EdgeFilter::new(edges);
    let tasks: Vec<(usize, usize)> = (0..edges.len())
        .flat_map(|i| (0..orbits.len()).map(move |o| (i, o)))
        .filter(|&(i, o)| {
            let (x, y, l) = edges[i];
            let (a, b) = orbits[o].rep;
            idx.labels[x as usize] == q.label(a)
                && idx.labels[y as usize] == q.label(b)
                && q.edge_label(a, b) == Some(l)
        })
        .collect();
    let (count, pruned) = tasks
        .par_iter()
        .map(|&(i, o)| {
            let (x, y, _) = edges[i];
            let (a, b) = orbits[o].rep;
            if !idx.is_candidate(a, x) || !idx.is_candidate(b, y) {
                return (0, 1);
            }
            let Some(lc) = reduce::local_candidates(idx, q, &iorders[o], x, y) else {
                return (0, 1);
            };
            let sizes: Vec<usize> = lc.iter().map(Vec::len).collect();
            let fixed = 1u32 << a | 1 << b;
            let ord = order::order(q, fixed, &sizes);
            let cands = lc.iter().map(|l| Cands::List(l)).collect();
            let s = Search::new(idx, q, fixed, &ord, cands, Some((&filter, i as u32)));
            let mut f = vec![0 as VertexId; q.num_vertices()];
            f[a] = x;
            f[b] = y;
            let mut used = vec![x, y];
            (s.count(0, &mut f, &mut used) * orbits[o].members.len() as u64, 0)
        })
        .reduce(|| (0, 0), |p, r| (p.0 + r.0, p.1 + r.1));
    (
        count,
        PhaseStats {
            tasks: tasks.len() as u64,
            pruned,
        },
    )
}

impl StaticMatcher for RapidFlow {
    fn name(&self) -> &str {
        "rapidflow"
    }

    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        self.pool.install(|| {
            let edges = (0..g.num_vertices() as VertexId).flat_map(|u| {
                let el = g.edge_labels(u);
                g.neighbors(u)
                    .iter()
                    .enumerate()
                    .filter(move |&(_, &v)| u < v)
                    .map(move |(i, &v)| (u, v, if el.is_empty() { 0 } else { el[i] }))
            });
            let idx = DataIndex::new(g.labels(), edges, q);
            let sizes: Vec<usize> = (0..q.num_vertices()).map(|u| idx.candidate_count(u)).collect();
            let ord = order::order(q, 0, &sizes);
            let s = Search::new(&idx, q, 0, &ord, vec![Cands::Index; q.num_vertices()], None);
            let first = s.first_candidates();
            let u0 = ord[0];
            Ok(first
                .par_iter()
                .with_min_len(16)
                .map(|&v| {
                    let mut f = vec![0 as VertexId; q.num_vertices()];
                    f[u0] = v;
                    let mut used = vec![v];
                    s.count(1, &mut f, &mut used)
                })
                .sum())
        })
    }
}

impl ContinuousMatcher for RapidFlow {
    fn name(&self) -> &str {
        "rapidflow"
    }

    fn init(&mut self, g: &GraphData, q: &QueryGraph) -> Result<(), EngineError> {
        let csr = CsrGraph::from_data(g)?;
        let graph = DynamicGraph::from_csr(&csr);
        let idx = DataIndex::new(
            &g.labels,
            g.edges
                .iter()
                .map(|e| (e.u, e.v, if g.edge_labelled { e.label } else { 0 })),
            q,
        );
        let orbits = dual::edge_orbits(q, self.dual);
        let iorders = orbits.iter().map(|o| IndexingOrder::new(q, o.rep.0, o.rep.1)).collect();
        self.state = Some(State {
            graph,
            q: q.clone(),
            idx,
            orbits,
            iorders,
        });
        Ok(())
    }

    fn process(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        if let Some(phases) = self
            .state
            .as_ref()
            .map(|st| relabel_phases(&st.graph, batch))
            .transpose()?
            .flatten()
        {
            return process_phases(self, batch, phases);
        }
        let st = self
            .state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised("rapidflow".into()))?;
        let t0 = Instant::now();
        let delta = st.graph.stage(batch.updates, batch.source, batch.strictness)?.clone();
        st.graph.commit();
        let fold = |e: &csm_graph::Edge| (e.u.min(e.v), e.u.max(e.v), st.idx.fold(e.label));
        let mut deleted: Vec<(VertexId, VertexId, Label)> = delta.deleted.iter().map(fold).collect();
        let mut inserted: Vec<(VertexId, VertexId, Label)> = delta.inserted.iter().map(fold).collect();
        // a relabel the query cannot see is no change at all
        let del_keys: std::collections::HashSet<(VertexId, VertexId, Label)> = deleted.iter().copied().collect();
        let ins_keys: std::collections::HashSet<(VertexId, VertexId, Label)> = inserted.iter().copied().collect();
        deleted.retain(|k| !ins_keys.contains(k));
        inserted.retain(|k| !del_keys.contains(k));
        let mut update_seconds = t0.elapsed().as_secs_f64();

        let (q, orbits, iorders) = (&st.q, &st.orbits, &st.iorders);
        let idx = &mut st.idx;
        let t1 = Instant::now();
        let (negative, neg_stats) = self.pool.install(|| count_phase(idx, q, orbits, iorders, &deleted));
        let mut seconds = t1.elapsed().as_secs_f64();

        let t2 = Instant::now();
        idx.apply(&delta.added_vertices, &deleted, &inserted, &delta.removed_vertices);
        update_seconds += t2.elapsed().as_secs_f64();

        let t3 = Instant::now();
        let (positive, pos_stats) = self.pool.install(|| count_phase(idx, q, orbits, iorders, &inserted));
        seconds += t3.elapsed().as_secs_f64();

        let mut extra = serde_json::Map::new();
        extra.insert("tasks".into(), (neg_stats.tasks + pos_stats.tasks).into());
        extra.insert("pruned_tasks".into(), (neg_stats.pruned + pos_stats.pruned).into());
        extra.insert("orbits".into(), (orbits.len() as u64).into());
        Ok(BatchResult {
            positive,
            negative,
            seconds,
            update_seconds,
            skipped: delta.skipped,
            extra,
        })
    }
}
