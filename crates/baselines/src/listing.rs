//! Listing the embeddings themselves, not only their numbers: [`ListingEngine`]
//! hands every embedding that appears in a batch (|M(G') \ M(G)|) or vanishes
//! (|M(G) \ M(G')|) to a sink, and [`list_static`] every embedding of a
//! graph. `csm stream --list` and `csm match --list` write them to a file.
//!
//! The plans are the cpu engine's delta plans (GCSM Eq. 1 split by sign,
//! [`csm_planner::plan`]) and static plan, run by the same executor in its
//! listing mode ([`Executor::enumerate`]): no symmetry breaking (each
//! automorphic image is its own embedding) and none of the counting
//! shortcuts (products of independent tails, label-disjoint splits, the
//! suffix memo), which count embeddings without visiting them.
//!
//! Threads: [`ListingEngine::new`] lists on the calling thread into one
//! sink, in plan order. [`ListingEngine::parallel`] spreads a batch's seeds
//! over the caller's rayon pool, each piece of work handing its embeddings
//! to a sink of its own (made by a [`SinkFactory`], dropped before the
//! batch returns, so a batch's embeddings are all handed over before the
//! next batch starts, in no fixed order within the batch).

use std::sync::Arc;
use std::time::Instant;

use crate::cpu::starts_search;
use csm_engine::{
    process_phases_with, relabel_phases, Batch, BatchResult, ContinuousMatcher, EngineError, StaticMatcher,
};
use csm_graph::{CsrGraph, DynamicGraph, GraphData, GraphView, Version, VertexId};
use csm_planner::{
    count, delta_plans_on, for_each_seed, static_plan_on, DeltaCounts, DeltaPlan, Executor, GraphStats, OrderStrategy,
    Plan, QueryGraph, Quota, Sign,
};

/// One embedding handed to a sink: `embedding[u]` is the data vertex that
/// query vertex `u` maps to.
#[derive(Clone, Copy, Debug)]
pub struct Listed<'a> {
    /// The batch it appeared or vanished in (0 for the first
    /// [`ContinuousMatcher::process`] call; one update at a time, each
    /// update is a batch), or 0 for a static listing.
    pub batch: usize,
    /// [`Sign::Positive`]: in M(G') \ M(G); [`Sign::Negative`]: in
    /// M(G) \ M(G'). A static listing gives `Positive`.
    pub sign: Sign,
    pub embedding: &'a [VertexId],
}

/// Where a listing goes.
pub type Sink = Box<dyn FnMut(Listed<'_>) + Send>;

/// Makes a [`Sink`] for one piece of a batch's parallel listing
/// ([`ListingEngine::parallel`]); a sink that buffers should flush when
/// dropped.
pub type SinkFactory = Arc<dyn Fn() -> Sink + Send + Sync>;

/// Batches with fewer seeds than this are listed on the calling thread even
/// by a parallel engine (into one sink from its factory): a rayon hand-off
/// per batch costs more than a few light seeds (one update at a time).
pub const PARALLEL_MIN_SEEDS: usize = 8;

/// Where a [`ListingEngine`] hands its embeddings.
enum Sinks {
    /// One sink, on the calling thread.
    One(Sink),
    /// A sink per piece of work on the caller's rayon pool.
    PerTask(SinkFactory),
}

/// A continuous matcher that lists what it counts ([module docs](self)).
pub struct ListingEngine {
    order: Arc<dyn OrderStrategy>,
    sinks: Sinks,
    /// Fewest seeds a batch is listed in parallel with ([`PARALLEL_MIN_SEEDS`]).
    parallel_min_seeds: usize,
    state: Option<Registered>,
    exec: Executor,
    /// Batches processed so far ([`Listed::batch`]).
    batches: usize,
}

/// The registered query and the graph it is matched on.
struct Registered {
    g: DynamicGraph,
    q: QueryGraph,
    plans: Vec<DeltaPlan>,
}

impl ListingEngine {
    /// An engine whose plans follow `order` and whose embeddings go to
    /// `sink`, in plan order, on the calling thread.
    pub fn new(order: Arc<dyn OrderStrategy>, sink: Sink) -> ListingEngine {
        Self::with_sinks(order, Sinks::One(sink))
    }

    /// An engine that lists a batch's seeds on the caller's rayon pool
    /// (the pool `process` is called on), each piece of work into a sink
    /// of its own from `make` ([module docs](self)).
    pub fn parallel(order: Arc<dyn OrderStrategy>, make: SinkFactory) -> ListingEngine {
        Self::with_sinks(order, Sinks::PerTask(make))
    }

    /// Lists batches of at least `n` seeds in parallel (default
    /// [`PARALLEL_MIN_SEEDS`]); `1` sends every batch with a seed to the
    /// pool (tests).
    pub fn parallel_min_seeds(mut self, n: usize) -> ListingEngine {
        self.parallel_min_seeds = n;
        self
    }

    fn with_sinks(order: Arc<dyn OrderStrategy>, sinks: Sinks) -> ListingEngine {
        ListingEngine {
            order,
            sinks,
            parallel_min_seeds: PARALLEL_MIN_SEEDS,
            state: None,
            exec: Executor::new(),
            batches: 0,
        }
    }

    /// One valid part of a batch (the whole batch, or one of a
    /// relabelling batch's phases): staged, listed, committed.
    fn run(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let st = self
            .state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised("list".into()))?;
        let t0 = Instant::now();
        st.g.stage(batch.updates, batch.source, batch.strictness)?;
        let staged = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let delta = st.g.pending_delta().expect("just staged").clone();
        // every seed of the batch: (plan, x, y)
        let mut seeds = Vec::new();
        for (i, p) in st.plans.iter().enumerate() {
            for_each_seed(&st.g, p, &delta, |x, y| seeds.push((i, x, y)));
        }
        let batch_no = self.batches;
        let k = st.q.num_vertices();
        let (g, plans) = (&st.g, &st.plans[..]);
        // lists one seed into `sink`; its embeddings counted by sign
        let list_seed = |exec: &mut Executor,
                         at: &mut [VertexId],
                         sink: &mut dyn FnMut(Listed<'_>),
                         i: usize,
                         x: VertexId,
                         y: VertexId| {
            let p = &plans[i];
            let listed = exec.enumerate(g, &p.plan, &[x, y], &mut |emb| {
                by_query_vertex(&p.plan, emb, at);
                sink(Listed {
                    batch: batch_no,
                    sign: p.sign,
                    embedding: at,
                });
            });
            let mut c = DeltaCounts::default();
            c.add(p.sign, listed);
            c
        };
        // every seed on the calling thread, into `sink`
        let exec = &mut self.exec;
        let mut at = vec![0; k];
        let mut here = |sink: &mut dyn FnMut(Listed<'_>)| {
            seeds.iter().fold(DeltaCounts::default(), |c, &(i, x, y)| {
                c.merge(list_seed(exec, &mut at, sink, i, x, y))
            })
        };
        let counts = match &mut self.sinks {
            Sinks::One(sink) => here(sink),
            Sinks::PerTask(make) if seeds.len() < self.parallel_min_seeds || rayon::current_num_threads() < 2 => {
                here(&mut make())
            }
            Sinks::PerTask(make) => {
                use rayon::prelude::*;
                let make = &**make;
                seeds
                    .par_iter()
                    .map_init(
                        || (Executor::new(), vec![0; k], make()),
                        |(exec, at, sink), &(i, x, y)| list_seed(exec, at, sink, i, x, y),
                    )
                    .reduce(DeltaCounts::default, DeltaCounts::merge)
            }
        };
        let seconds = t1.elapsed().as_secs_f64();
        let t2 = Instant::now();
        st.g.commit();
        Ok(BatchResult {
            positive: counts.positive,
            negative: counts.negative,
            seconds,
            update_seconds: staged + t2.elapsed().as_secs_f64(),
            skipped: delta.skipped,
            ..BatchResult::default()
        })
    }
}

/// `emb` (bindings in `plan.order` positions, as the executor lists
/// them) by query vertex into `at`.
fn by_query_vertex(plan: &Plan, emb: &[VertexId], at: &mut [VertexId]) {
    for (d, &v) in emb.iter().enumerate() {
        at[plan.order[d]] = v;
    }
}

/// The cpu engine's static plan for `q` on `g` under `order`, checking
/// labels.
fn static_listing_plan(g: &CsrGraph, q: &QueryGraph, order: &dyn OrderStrategy) -> Plan {
    checking_labels(static_plan_on(q, order, &GraphStats::of(g), Version::New, g))
}

/// `plan` with label checks on every level: plans made on a graph whose
/// vertices all carry the query's label skip them, which a vertex of
/// another label added later would slip through.
fn checking_labels(mut plan: Plan) -> Plan {
    plan.check_labels = true;
    plan
}

impl ContinuousMatcher for ListingEngine {
    fn name(&self) -> &str {
        "list"
    }

    fn init(&mut self, g: &GraphData, q: &QueryGraph) -> Result<(), EngineError> {
        let dg = DynamicGraph::from_data(g)?;
        let stats = GraphStats::of(&dg);
        let plans = delta_plans_on(q, self.order.as_ref(), &stats, &dg)
            .into_iter()
            .map(|p| DeltaPlan {
                plan: checking_labels(p.plan),
                ..p
            })
            .collect();
        self.state = Some(Registered {
            g: dg,
            q: q.clone(),
            plans,
        });
        self.batches = 0;
        Ok(())
    }

    fn process(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let st = self
            .state
            .as_ref()
            .ok_or_else(|| EngineError::NotInitialised("list".into()))?;
        let result = match relabel_phases(&st.g, batch)? {
            // a vertex re-added under another label: the removal phase,
            // then the addition phase, listed under this one batch
            Some(phases) => process_phases_with(batch, phases, |part| self.run(part))?,
            None => self.run(batch)?,
        };
        self.batches += 1;
        Ok(result)
    }
}

/// A static matcher that counts by listing ([`list_static`], the
/// embeddings dropped): the registry's `list`, for cross-checks.
pub struct ListingCount {
    order: Arc<dyn OrderStrategy>,
}

impl ListingCount {
    pub fn new(order: Arc<dyn OrderStrategy>) -> ListingCount {
        ListingCount { order }
    }
}

impl StaticMatcher for ListingCount {
    fn name(&self) -> &str {
        "list"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        Ok(list_static(g, q, self.order.as_ref(), None, &mut |_| {}))
    }
    fn count_at_most(&self, g: &CsrGraph, q: &QueryGraph, limit: u64) -> Result<u64, EngineError> {
        Ok(list_static(g, q, self.order.as_ref(), Some(limit), &mut |_| {}))
    }
}

/// [`list_static`] on the caller's rayon pool, without a limit: the start
/// vertices are spread over the threads, and each piece of work hands its
/// embeddings to a sink of its own, made by `make` (several per thread
/// over a run; a sink that buffers should flush when dropped). The
/// embeddings come in no fixed order. Returns how many there were.
pub fn list_static_par<S: FnMut(Listed<'_>)>(
    g: &CsrGraph,
    q: &QueryGraph,
    order: &dyn OrderStrategy,
    make: impl Fn() -> S + Sync + Send,
) -> u64 {
    use rayon::prelude::*;
    let plan = static_listing_plan(g, q, order);
    let k = q.num_vertices();
    (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(16)
        .filter(|&v| starts_search(g, &plan, v))
        .map_init(
            || (Executor::new(), vec![0; k], make()),
            |(exec, at, sink), v| {
                exec.enumerate(g, &plan, &[v], &mut |emb| {
                    by_query_vertex(&plan, emb, at);
                    sink(Listed {
                        batch: 0,
                        sign: Sign::Positive,
                        embedding: at,
                    });
                })
            },
        )
        .reduce(|| 0, count::add)
}

/// Hands every embedding of `q` in `g` to `sink` (in the cpu engine's
/// static plan under `order`), or the first `limit` of them, and returns
/// how many it handed (with a limit, `min(count, limit)`: the `-num` cap
/// of the SubgraphMatching study's tools).
pub fn list_static(
    g: &CsrGraph,
    q: &QueryGraph,
    order: &dyn OrderStrategy,
    limit: Option<u64>,
    sink: &mut dyn FnMut(Listed<'_>),
) -> u64 {
    let plan = static_listing_plan(g, q, order);
    let mut at = vec![0; q.num_vertices()];
    let mut exec = Executor::new();
    // the quota stops the search soon after the limit; the sink stops at it
    let quota = limit.map(|l| Arc::new(Quota::new(l)));
    exec.set_quota(quota.clone());
    let limit = limit.unwrap_or(u64::MAX);
    let mut handed = 0;
    for v in 0..g.num_vertices() as VertexId {
        if handed >= limit {
            break;
        }
        if !starts_search(g, &plan, v) {
            continue;
        }
        exec.enumerate(g, &plan, &[v], &mut |emb| {
            if handed >= limit {
                return;
            }
            by_query_vertex(&plan, emb, &mut at);
            sink(Listed {
                batch: 0,
                sign: Sign::Positive,
                embedding: &at,
            });
            handed += 1;
        });
    }
    exec.set_quota(None);
    handed
}
