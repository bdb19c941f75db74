//! `pbe`: partition-based enumeration (Guo, Li, Sha, He, Xiao & Tan,
//! *GPU-Accelerated Subgraph Enumeration on Partitioned Graphs*, SIGMOD
//! 2020; paper 003), run on the CPU with rayon in place of the GPU.
//!
//! The data graph is split into n = ⌈|G| / (g − θ)⌉ parts (|G| = edges,
//! g = the memory budget in edges, θ = the reserve for intermediate
//! results), each small enough to be "loaded" on its own. Then
//! * [`intra`]: every part, as an induced subgraph, is searched alone
//!   (Sec. 3.1, Algorithm 1 along one cost-chosen search sequence);
//! * [`inter`]: instances with at least one cross edge are found by the
//!   two-stage search (Sec. 3.2: pruning stage over cross edges,
//!   enumeration stage on the whole graph) with shared execution over the
//!   equivalence edge classes of Aut(P) (Sec. 4) and DUPREMOVE (Sec. 5).
//!
//! Partitions are induced and disjoint, so every instance is either inside
//! one part (found once by `intra`) or has a cross edge (found once by
//! `inter`): total = intra + inter for *any* partition, good or bad; the
//! partitioner ([`partition`]) only moves work between the two.
//!
//! Semantics: the paper is unlabelled; here vertex and edge labels only
//! filter candidates. No symmetry restriction is applied, so the count is
//! of embeddings (automorphic images separately), as csm requires.
//! Memory (Sec. 5): each level of a search keeps a buffer of
//! 2θ / |V(P)| vertex slots (one edge = two CSR entries); every rayon worker
//! has its own set of buffers.

pub mod inter;
pub mod intra;
pub mod partition;
pub mod plan;
pub mod search;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use csm_engine::{EngineError, StaticMatcher};
use csm_graph::{CsrGraph, GraphView, VertexId, ABSENT};
use csm_planner::QueryGraph;

use plan::{search_order, CostStats, SearchSeq};

/// Instances as rows `f(0), …, f(n−1)`.
pub type Instances = Vec<Vec<VertexId>>;

/// The engine (see the module docs).
#[derive(Clone)]
pub struct Pbe {
    budget_edges: usize,
    reserve_edges: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
}

/// What one run did.
#[derive(Clone, Debug, Default)]
pub struct PbeReport {
    /// Embeddings: `intra + inter`.
    pub count: u64,
    pub intra: u64,
    pub inter: u64,
    pub num_parts: usize,
    /// Edges inside each part.
    pub part_edges: Vec<usize>,
    pub cross_edges: usize,
    /// Equivalence edge classes (inter searches actually run) of |E(P)| edges.
    pub edge_classes: usize,
    /// Seeds of the pruning stages.
    pub inter_seeds: usize,
    /// Partial instances materialised by the inter enumeration stages.
    pub inter_partials: u64,
    pub partition_seconds: f64,
    pub intra_seconds: f64,
    pub inter_seconds: f64,
}

impl Default for Pbe {
    fn default() -> Self {
        Pbe::new(Pbe::DEFAULT_BUDGET_EDGES)
    }
}

impl Pbe {
    /// Budget of [`Pbe::default`] (the engine registry's `pbe`): 2^18 edges.
    pub const DEFAULT_BUDGET_EDGES: usize = 1 << 18;

    /// A memory budget g of `budget_edges` edges, θ = g / 4 of it reserved
    /// for intermediate results.
    pub fn new(budget_edges: usize) -> Pbe {
        Pbe {
            budget_edges,
            reserve_edges: budget_edges / 4,
            pool: None,
        }
    }

    /// Sets the reserve θ (in edges); must stay below the budget.
    pub fn with_reserve(mut self, reserve_edges: usize) -> Pbe {
        self.reserve_edges = reserve_edges;
        self
    }

    /// Runs on a private pool of `threads` threads (0 = all cores).
    pub fn with_threads(mut self, threads: usize) -> Result<Pbe, EngineError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| EngineError::Other(format!("cannot start thread pool: {e}")))?;
        self.pool = Some(Arc::new(pool));
        Ok(self)
    }

    /// n = ⌈|G| / (g − θ)⌉ (at least 1).
    pub fn num_parts(&self, num_edges: usize) -> Result<usize, EngineError> {
        if self.reserve_edges >= self.budget_edges {
            return Err(EngineError::Other(format!(
                "pbe: reserve θ = {} edges leaves nothing of the budget g = {} edges",
                self.reserve_edges, self.budget_edges
            )));
        }
        Ok(num_edges.div_ceil(self.budget_edges - self.reserve_edges).max(1))
    }

    /// Partitions `g` into [`Pbe::num_parts`] parts.
    pub fn partition(&self, g: &CsrGraph) -> Result<Vec<u32>, EngineError> {
        let n = self.num_parts(g.num_edges())?;
        Ok(self.install(|| partition::partition(g, n)))
    }

    /// Vertex slots of one level buffer: 2θ / |V(P)|, at least one instance.
    fn level_cap(&self, q: &QueryGraph) -> usize {
        (2 * self.reserve_edges / q.num_vertices()).max(q.num_vertices())
    }

    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Partitions `g`, then matches.
    pub fn run(&self, g: &CsrGraph, q: &QueryGraph) -> Result<PbeReport, EngineError> {
        let t = Instant::now();
        let parts = self.partition(g)?;
        let secs = t.elapsed().as_secs_f64();
        let mut rep = self.run_partitioned(g, q, &parts)?;
        rep.partition_seconds = secs;
        Ok(rep)
    }

    /// Matches under a given partition (`parts[v]` = part of vertex slot
    /// v; any assignment is valid, parts are numbered `0..=max`).
    pub fn run_partitioned(&self, g: &CsrGraph, q: &QueryGraph, parts: &[u32]) -> Result<PbeReport, EngineError> {
        self.install(|| self.search(g, q, parts, None))
    }

    /// Every embedding, split into those inside one part and those across
    /// parts (for tests on small graphs: each is a row `f(0), …, f(n−1)`).
    pub fn embeddings_partitioned(
        &self,
        g: &CsrGraph,
        q: &QueryGraph,
        parts: &[u32],
    ) -> Result<(Instances, Instances), EngineError> {
        let intra = Mutex::new(Vec::new());
        let inter = Mutex::new(Vec::new());
        let report = self.install(|| self.search(g, q, parts, Some((&intra, &inter))))?;
        let (intra, inter) = (intra.into_inner().unwrap(), inter.into_inner().unwrap());
        debug_assert_eq!((intra.len() as u64, inter.len() as u64), (report.intra, report.inter));
        Ok((intra, inter))
    }

    fn search(
        &self,
        g: &CsrGraph,
        q: &QueryGraph,
        parts: &[u32],
        collect: Option<(&Mutex<Instances>, &Mutex<Instances>)>,
    ) -> Result<PbeReport, EngineError> {
        if parts.len() != g.num_vertices() {
            return Err(EngineError::Other(format!(
                "pbe: {} part ids for {} vertex slots",
                parts.len(),
                g.num_vertices()
            )));
        }
        let num_parts = parts.iter().map(|&p| p as usize + 1).max().unwrap_or(1);
        // sparse ids (e.g. u32::MAX): renumber densely; only equality of
        // part ids matters, so the counts do not change
        let dense: Vec<u32>;
        let (parts, num_parts) = if num_parts > parts.len().max(1) {
            let mut ids = parts.to_vec();
            ids.sort_unstable();
            ids.dedup();
            dense = parts
                .iter()
                .map(|p| ids.binary_search(p).expect("present") as u32)
                .collect();
            (&dense[..], ids.len().max(1))
        } else {
            (parts, num_parts)
        };
        let stats = cost_stats(g);
        let cap = self.level_cap(q);
        let mut rep = PbeReport {
            num_parts,
            ..Default::default()
        };

        let t = Instant::now();
        let seq = SearchSeq::new(q, search_order(q, &[], &stats));
        let intra_sink = |f: &[VertexId]| {
            if let Some((c, _)) = collect {
                let mut inst = vec![0; f.len()];
                for (i, &u) in seq.order.iter().enumerate() {
                    inst[u] = f[i];
                }
                c.lock().unwrap().push(inst);
            }
        };
        let sink: Option<search::Sink<'_>> = collect.map(|_| &intra_sink as search::Sink<'_>);
        let ir = intra::intra(g, parts, num_parts, &seq, cap, sink);
        rep.intra = ir.found.instances;
        rep.part_edges = ir.part_edges;
        rep.intra_seconds = t.elapsed().as_secs_f64();

        let t = Instant::now();
        let inter_sink = |f: &[VertexId]| {
            if let Some((_, c)) = collect {
                c.lock().unwrap().push(f.to_vec());
            }
        };
        let sink: Option<search::Sink<'_>> = collect.map(|_| &inter_sink as search::Sink<'_>);
        let xr = inter::inter(g, q, parts, &stats, cap, sink);
        rep.inter = xr.instances;
        rep.cross_edges = xr.cross_edges;
        rep.edge_classes = xr.classes;
        rep.inter_seeds = xr.seeds;
        rep.inter_partials = xr.partials;
        rep.inter_seconds = t.elapsed().as_secs_f64();
        rep.count = rep.intra + rep.inter;
        Ok(rep)
    }
}

fn cost_stats(g: &CsrGraph) -> CostStats {
    let mut label_freq: HashMap<u32, f64> = HashMap::new();
    let mut present = 0usize;
    for &l in g.labels() {
        if l != ABSENT {
            *label_freq.entry(l).or_default() += 1.0;
            present += 1;
        }
    }
    CostStats {
        num_vertices: present as f64,
        avg_degree: 2.0 * g.num_edges() as f64 / present.max(1) as f64,
        label_freq,
    }
}

impl StaticMatcher for Pbe {
    fn name(&self) -> &str {
        "pbe"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        Ok(self.run(g, q)?.count)
    }
}
