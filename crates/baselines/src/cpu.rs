//! The `cpu` engine: the planner's executor run in parallel with rayon, over
//! batch edges for continuous matching (GCSM's CPU baseline, Sec. VI-A) and
//! over start vertices for static matching. Heavy seeds are split one level
//! down so that a single update still spreads over all threads.

use std::sync::Arc;
use std::time::Instant;

use csm_engine::{Batch, BatchResult, ContinuousMatcher, EngineError, StaticMatcher};
use csm_graph::{CsrGraph, DynamicGraph, GraphData, GraphView, Version, VertexId};
use csm_planner::{
    delta_plans, for_each_seed, seed_fits, single_edge_rules, static_plan, DeltaCounts, DeltaPlan, Executor, NoVisitor,
    OrderStrategy, Plan, QueryGraph, SeedRule, Sign,
};
use rayon::prelude::*;

use csm_planner::query::MAX_QUERY_VERTICES;

/// A node with at least this many children is split across threads.
const SPLIT_MIN: usize = 48;

/// Configuration shared by the static and continuous modes.
#[derive(Clone)]
pub struct CpuEngine {
    order: Arc<dyn OrderStrategy>,
    pool: Arc<rayon::ThreadPool>,
    state: Option<(DynamicGraph, Vec<DeltaPlan>, Symmetry)>,
    symmetry: bool,
    threads: usize,
    /// Executor for the single-thread path (buffers reused across batches).
    exec: Executor,
}

impl CpuEngine {
    /// `threads = 0` uses every core.
    pub fn new(threads: usize, order: Arc<dyn OrderStrategy>) -> Result<CpuEngine, EngineError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| EngineError::Other(format!("cannot start thread pool: {e}")))?;
        let threads = pool.current_num_threads();
        Ok(CpuEngine {
            order,
            pool: Arc::new(pool),
            state: None,
            symmetry: true,
            threads,
            exec: Executor::new(),
        })
    }

    /// Turns the single-edge symmetry shortcut off (for comparisons).
    pub fn without_symmetry(mut self) -> Self {
        self.symmetry = false;
        self
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The registered graph (after `init`).
    pub fn graph(&self) -> Option<&DynamicGraph> {
        self.state.as_ref().map(|s| &s.0)
    }
}

/// Counts completions of `prefix`, splitting the next level across threads
/// when it is large and at least two levels remain below it.
fn count_split<G: GraphView + ?Sized>(g: &G, plan: &Plan, prefix: &[VertexId], ex: &mut Executor) -> u64 {
    let d = prefix.len();
    if d + 2 >= plan.depth() || rayon::current_num_threads() == 1 {
        return ex.count(g, plan, prefix, &mut NoVisitor);
    }
    let mut cands = Vec::new();
    ex.candidates(g, plan, prefix, &mut cands);
    // Counts the children in `chunk`, recursing (and so splitting again)
    // only when `split` is set.
    let children = |ex: &mut Executor, chunk: &[VertexId], split: bool| {
        let mut p = [0; MAX_QUERY_VERTICES];
        p[..d].copy_from_slice(prefix);
        chunk
            .iter()
            .map(|&c| {
                p[d] = c;
                if split {
                    count_split(g, plan, &p[..=d], ex)
                } else {
                    ex.count(g, plan, &p[..=d], &mut NoVisitor)
                }
            })
            .sum::<u64>()
    };
    if cands.len() < SPLIT_MIN {
        return children(ex, &cands, false);
    }
    cands
        .par_chunks(8)
        .map_init(Executor::new, |ex, chunk| children(ex, chunk, true))
        .sum()
}

/// Representative seeds of a query for single-edge batches (see
/// [`csm_planner::symmetry`]), one list per sign.
#[derive(Clone, Debug, Default)]
pub struct Symmetry {
    positive: Option<Vec<SeedRule>>,
    negative: Option<Vec<SeedRule>>,
}

impl Symmetry {
    pub fn of(q: &QueryGraph, plans: &[DeltaPlan]) -> Symmetry {
        Symmetry {
            positive: single_edge_rules(q, plans, Sign::Positive),
            negative: single_edge_rules(q, plans, Sign::Negative),
        }
    }
}

/// The seeds of a staged batch as (plan, x, y, weight).
fn seeds<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    sym: Option<&Symmetry>,
    delta: &csm_graph::BatchDelta,
) -> Vec<(u32, VertexId, VertexId, u64)> {
    let mut out = Vec::new();
    let single = match (delta.inserted.as_slice(), delta.deleted.as_slice()) {
        ([e], []) => sym.and_then(|s| s.positive.as_ref()).map(|r| (e, r)),
        ([], [e]) => sym.and_then(|s| s.negative.as_ref()).map(|r| (e, r)),
        _ => None,
    };
    if let Some((e, rules)) = single {
        for r in rules {
            let p = &plans[r.plan];
            let (mut x, mut y) = if r.forward { (e.u, e.v) } else { (e.v, e.u) };
            // Either orientation counts the same: bind the lower-degree
            // endpoint second, so that the loops below it iterate short lists.
            if r.reversible && g.nbrs(y, Version::New).len() > g.nbrs(x, Version::New).len() {
                std::mem::swap(&mut x, &mut y);
            }
            if seed_fits(g, p, e, x, y) {
                out.push((r.plan as u32, x, y, r.weight));
            }
        }
        return out;
    }
    for (i, p) in plans.iter().enumerate() {
        for_each_seed(g, p, delta, |x, y| out.push((i as u32, x, y, 1)));
    }
    out
}

/// Exact positive/negative counts of a staged batch, in parallel.
/// `sym` enables the single-edge symmetry shortcut.
pub fn count_delta_parallel<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    sym: Option<&Symmetry>,
    delta: &csm_graph::BatchDelta,
) -> DeltaCounts {
    let seeds = seeds(g, plans, sym, delta);
    if rayon::current_num_threads() == 1 || seeds.len() == 1 {
        return count_seeds_sequential(g, plans, &seeds, &mut Executor::new());
    }
    seeds
        .par_iter()
        .map_init(Executor::new, |ex, &(i, x, y, w)| {
            let p = &plans[i as usize];
            let mut c = DeltaCounts::default();
            c.add(p.sign, w * count_split(g, &p.plan, &[x, y], ex));
            c
        })
        .reduce(DeltaCounts::default, DeltaCounts::merge)
}

/// [`count_delta_parallel`] on the calling thread with a reused executor.
pub fn count_delta_sequential<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    sym: Option<&Symmetry>,
    delta: &csm_graph::BatchDelta,
    ex: &mut Executor,
) -> DeltaCounts {
    count_seeds_sequential(g, plans, &seeds(g, plans, sym, delta), ex)
}

fn count_seeds_sequential<G: GraphView + ?Sized>(
    g: &G,
    plans: &[DeltaPlan],
    seeds: &[(u32, VertexId, VertexId, u64)],
    ex: &mut Executor,
) -> DeltaCounts {
    let mut out = DeltaCounts::default();
    for &(i, x, y, w) in seeds {
        let p = &plans[i as usize];
        out.add(p.sign, w * ex.count(g, &p.plan, &[x, y], &mut NoVisitor));
    }
    out
}

/// Full matching of `plan` over `g`, in parallel over start vertices.
pub fn count_static_parallel<G: GraphView + ?Sized>(g: &G, plan: &Plan) -> u64 {
    let first = &plan.levels[0];
    let labels = g.labels();
    (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(64)
        .filter(|&v| labels[v as usize] == first.label)
        .map_init(Executor::new, |ex, v| count_split(g, plan, &[v], ex))
        .sum()
}

impl StaticMatcher for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        let stats = csm_planner::GraphStats::of(g);
        let plan = static_plan(q, self.order.as_ref(), &stats, Version::New);
        Ok(self.pool.install(|| count_static_parallel(g, &plan)))
    }
}

impl ContinuousMatcher for CpuEngine {
    fn name(&self) -> &str {
        "cpu"
    }
    fn init(&mut self, g: &GraphData, q: &QueryGraph) -> Result<(), EngineError> {
        let dg = DynamicGraph::from_data(g)?;
        let stats = csm_planner::GraphStats::of(&dg);
        let plans = delta_plans(q, self.order.as_ref(), &stats);
        let sym = if self.symmetry {
            Symmetry::of(q, &plans)
        } else {
            Symmetry::default()
        };
        self.state = Some((dg, plans, sym));
        Ok(())
    }
    fn process(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let (g, plans, sym) = self
            .state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised("cpu".into()))?;
        let t0 = Instant::now();
        let skipped = g.stage(batch.updates, batch.source, batch.strictness)?.skipped;
        let staged = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let delta = g.pending_delta().expect("staged");
        let gr: &DynamicGraph = g;
        let sym: &Symmetry = sym;
        // one thread: stay on the caller's thread (no pool hand-off per batch)
        let counts = if self.threads == 1 {
            count_delta_sequential(gr, plans, Some(sym), delta, &mut self.exec)
        } else {
            self.pool.install(|| count_delta_parallel(gr, plans, Some(sym), delta))
        };
        let seconds = t1.elapsed().as_secs_f64();
        let t2 = Instant::now();
        g.commit();
        Ok(BatchResult {
            positive: counts.positive,
            negative: counts.negative,
            seconds,
            update_seconds: staged + t2.elapsed().as_secs_f64(),
            skipped,
            extra: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    //! The split-across-threads path (entered mid-plan with a prefix, so
    //! reused, hoisted and pinned buffers must be rebuilt) against plain
    //! sequential execution, which the oracle tests validate on small graphs.
    use super::*;
    use csm_graph::gen::{graph_from_pairs, make_stream, rmat, standard_query, StreamAmount};
    use csm_graph::Strictness;
    use csm_planner::{CostOrder, GcsmOrder, GraphStats};

    fn graph() -> GraphData {
        let pairs = rmat(10, 4_000, 0.57, 0.19, 0.19, 7);
        let labels = vec![0; 1 << 10];
        graph_from_pairs(1 << 10, &pairs, labels, None)
    }

    #[test]
    fn split_execution_equals_sequential() {
        let g = graph();
        let csr = CsrGraph::from_data(&g).unwrap();
        for name in ["triangle", "4-cycle", "diamond", "4-clique", "house"] {
            let q = QueryGraph::from_data(&standard_query(name).unwrap()).unwrap();
            for order in [Arc::new(GcsmOrder) as Arc<dyn OrderStrategy>, Arc::new(CostOrder)] {
                let stats = GraphStats::of(&csr);
                let plan = static_plan(&q, order.as_ref(), &stats, Version::New);
                let mut ex = Executor::new();
                let seq: u64 = (0..csr.num_vertices() as u32)
                    .map(|v| ex.count(&csr, &plan, &[v], &mut NoVisitor))
                    .sum();
                let par = CpuEngine::new(3, order.clone()).unwrap();
                assert_eq!(StaticMatcher::count(&par, &csr, &q).unwrap(), seq, "{name} static");
                let (g0, stream) = make_stream(&g, StreamAmount::Count(400), 0.5, 3);
                let mut one = CpuEngine::new(1, order.clone()).unwrap().without_symmetry();
                let mut three = CpuEngine::new(3, order.clone()).unwrap();
                one.init(&g0, &q).unwrap();
                three.init(&g0, &q).unwrap();
                for chunk in stream.chunks(97).chain(stream[..0].chunks(1)) {
                    let b = Batch {
                        updates: chunk,
                        source: "s",
                        strictness: Strictness::Strict,
                    };
                    let (a, c) = (one.process(b).unwrap(), three.process(b).unwrap());
                    assert_eq!((a.positive, a.negative), (c.positive, c.negative), "{name} batch");
                }
            }
        }
    }

    #[test]
    fn single_edge_symmetry_equals_plain_seeds() {
        let g = graph();
        let (g0, stream) = make_stream(&g, StreamAmount::Count(150), 0.5, 5);
        for name in ["triangle", "4-cycle", "diamond", "house"] {
            let q = QueryGraph::from_data(&standard_query(name).unwrap()).unwrap();
            let mut sym = CpuEngine::new(1, Arc::new(GcsmOrder)).unwrap();
            let mut plain = CpuEngine::new(1, Arc::new(GcsmOrder)).unwrap().without_symmetry();
            sym.init(&g0, &q).unwrap();
            plain.init(&g0, &q).unwrap();
            for u in &stream {
                let b = Batch {
                    updates: std::slice::from_ref(u),
                    source: "s",
                    strictness: Strictness::Strict,
                };
                let (a, c) = (sym.process(b).unwrap(), plain.process(b).unwrap());
                assert_eq!((a.positive, a.negative), (c.positive, c.negative), "{name}");
            }
        }
    }
}
