//! Cache policies: which vertices' neighbour lists to pack (DCSR, GCSM
//! Sec. V-B) and ship to the GPU for one batch, within a byte budget.
//!
//! | policy | GCSM name | rule |
//! |---|---|---|
//! | [`SampledPolicy`] | GCSM | highest estimated access frequency (Sec. IV) until the budget is full |
//! | [`DegreePolicy`] | Naive | highest degree until the budget is full |
//! | [`KHopPolicy`] | VSGM | every list within `k` hops of the batch's endpoints; over budget is an error ([`SelectError::OverBudget`]) carrying the nearest-first truncation |
//! | [`NoCache`] | ZP (zero-copy) | nothing |
//!
//! A list's cost is its size in a DCSR pack ([`list_bytes`]): 4 bytes of
//! `rowidx`, 8 of `rowptr`, 4 per stored entry (deleted entries still
//! marked, appended ones included), twice that with edge labels; the pack
//! adds 4 bytes for `rowptr`'s final entry. Budget-filling policies go down
//! their ranking and skip lists that no longer fit, so smaller lists further
//! down can still use the remaining bytes.
//!
//! # Plugging in a policy
//!
//! Implement [`CachePolicy`]: a name and `select`, which gets the staged
//! graph, the batch, the delta plans and the byte budget in a
//! [`SelectionContext`]. [`CachePolicy::select_report`] (budget check,
//! statistics) has a default built on `select`. Pass the policy to
//! [`crate::run_batch_study`] like the built-in ones.
//!
//! ```
//! use csm_graph::VertexId;
//! use csm_sampler::cache::{take_within_budget, CachePolicy, SelectionContext};
//!
//! /// Caches the batch's endpoints, lowest id first.
//! struct Endpoints;
//!
//! impl CachePolicy for Endpoints {
//!     fn name(&self) -> String {
//!         "endpoints".into()
//!     }
//!     fn select(&self, ctx: &SelectionContext<'_>) -> Vec<VertexId> {
//!         let mut v: Vec<VertexId> =
//!             ctx.delta.inserted.iter().chain(&ctx.delta.deleted).flat_map(|e| [e.u, e.v]).collect();
//!         v.sort_unstable();
//!         v.dedup();
//!         take_within_budget(ctx.graph, v, ctx.budget_bytes).0
//!     }
//! }
//!
//! # use csm_graph::{DynamicGraph, Edge, GraphData, LocatedUpdate, Strictness, Update};
//! # let g = GraphData { labels: vec![0; 4], edges: vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)], edge_labelled: false };
//! # let mut dg = DynamicGraph::from_data(&g).unwrap();
//! # let up = [LocatedUpdate { line: 1, update: Update::AddEdge(Edge::new(2, 3, 0)) }];
//! # let delta = dg.stage(&up, "<doc>", Strictness::Strict).unwrap().clone();
//! let ctx = SelectionContext { graph: &dg, delta: &delta, plans: &[], budget_bytes: 1 << 20, seed: 0 };
//! assert_eq!(Endpoints.select(&ctx), vec![2, 3]);
//! assert!(Endpoints.select_report(&ctx).is_ok());
//! ```

use std::collections::VecDeque;

use csm_graph::view::MARK;
use csm_graph::{BatchDelta, DynamicGraph, GraphView, Version, VertexId};
use csm_planner::DeltaPlan;
use serde::Serialize;

use crate::budget::{estimate_with_confidence, paper_walks, Refinement, WalkRule};
use crate::dcsr::DcsrPack;
use crate::tree::ExecutionTree;
use crate::walk::{Estimate, WalkOptions};

/// Everything a policy may look at for one batch.
#[derive(Clone, Copy)]
pub struct SelectionContext<'a> {
    /// The graph with the batch staged (old, common and new views).
    pub graph: &'a DynamicGraph,
    /// The staged batch's net effect.
    pub delta: &'a BatchDelta,
    /// The delta plans that will run (one per query edge and sign).
    pub plans: &'a [DeltaPlan],
    /// Bytes the DCSR pack may take.
    pub budget_bytes: usize,
    /// A per-batch seed for randomised policies.
    pub seed: u64,
}

impl<'a> SelectionContext<'a> {
    /// The batch's execution tree.
    pub fn tree(&self) -> ExecutionTree<'a, DynamicGraph> {
        ExecutionTree::new(self.graph, self.plans, self.delta)
    }
}

/// Bytes `v`'s list takes in a DCSR pack (see the module docs).
pub fn list_bytes(g: &DynamicGraph, v: VertexId) -> usize {
    let (old, app) = g.raw_list(v);
    DcsrPack::row_bytes(old.len() + app.len(), g.edge_labelled())
}

/// Goes down `ranked` taking every vertex whose list still fits in
/// `budget_bytes` (pack overhead included), skipping those that do not and
/// repeated ones. Returns the vertices taken and the pack size.
pub fn take_within_budget(
    g: &DynamicGraph,
    ranked: impl IntoIterator<Item = VertexId>,
    budget_bytes: usize,
) -> (Vec<VertexId>, usize) {
    let mut used = DcsrPack::EMPTY_BYTES;
    let mut out = Vec::new();
    if budget_bytes < used {
        return (out, 0);
    }
    let mut seen = crate::freq::IdMap::<()>::default();
    for v in ranked {
        if (v as usize) >= g.num_vertices() {
            continue;
        }
        let b = list_bytes(g, v);
        if used + b <= budget_bytes && seen.insert(v, ()).is_none() {
            used += b;
            out.push(v);
            if budget_bytes - used < DcsrPack::row_bytes(0, false) {
                break;
            }
        }
    }
    (out, used)
}

/// A policy's choice for one batch.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Selection {
    pub vertices: Vec<VertexId>,
    /// DCSR pack size of `vertices`.
    pub bytes: usize,
    /// Walks drawn (sampled policy).
    pub walks: Option<u64>,
    /// Sampled vertices (non-zero estimate; sampled policy).
    pub sampled: Option<usize>,
    /// The Eq. (5) refinement, when that rule ran.
    pub refinement: Option<Refinement>,
}

impl Selection {
    /// A selection of `vertices` with its size computed.
    pub fn of(g: &DynamicGraph, vertices: Vec<VertexId>) -> Selection {
        let bytes = pack_bytes(g, &vertices);
        Selection {
            vertices,
            bytes,
            ..Selection::default()
        }
    }
}

/// DCSR pack size of `vertices` (each counted once).
pub fn pack_bytes(g: &DynamicGraph, vertices: &[VertexId]) -> usize {
    let mut v = vertices.to_vec();
    v.sort_unstable();
    v.dedup();
    DcsrPack::EMPTY_BYTES + v.iter().map(|&x| list_bytes(g, x)).sum::<usize>()
}

/// Why a policy could not give a selection within the budget.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SelectError {
    #[error("{policy}: the lists to cache take {needed_bytes} bytes, over the budget of {budget_bytes} bytes (truncated to {} vertices)", partial.vertices.len())]
    OverBudget {
        policy: String,
        needed_bytes: usize,
        budget_bytes: usize,
        partial: Box<Selection>,
    },
}

/// A cache-selection rule (see the module docs for how to write one).
pub trait CachePolicy: Send + Sync {
    /// Short name for reports (`sampled`, `degree`, `khop`, `none`, ...).
    fn name(&self) -> String;

    /// The vertices whose lists to cache for this batch. Should fit in
    /// `ctx.budget_bytes` ([`take_within_budget`] helps).
    fn select(&self, ctx: &SelectionContext<'_>) -> Vec<VertexId>;

    /// The selection with its size and policy statistics. The default runs
    /// [`CachePolicy::select`] and reports [`SelectError::OverBudget`] (with
    /// the nearest-first truncation as `partial`) when it exceeds the budget.
    fn select_report(&self, ctx: &SelectionContext<'_>) -> Result<Selection, SelectError> {
        let vertices = self.select(ctx);
        let sel = Selection::of(ctx.graph, vertices);
        if sel.bytes > ctx.budget_bytes {
            let (v, _) = take_within_budget(ctx.graph, sel.vertices.iter().copied(), ctx.budget_bytes);
            return Err(SelectError::OverBudget {
                policy: self.name(),
                needed_bytes: sel.bytes,
                budget_bytes: ctx.budget_bytes,
                partial: Box::new(Selection::of(ctx.graph, v)),
            });
        }
        Ok(sel)
    }
}

/// GCSM: cache the highest estimated access frequencies (Sec. IV), until
/// the budget is full. Only sampled vertices (estimate > 0) are cached.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampledPolicy {
    pub rule: WalkRule,
    pub walk: WalkOptions,
    /// Mixed with [`SelectionContext::seed`] for each batch.
    pub seed: u64,
}

impl SampledPolicy {
    /// Frequency estimation for this batch under `self.rule`.
    pub fn estimate(&self, ctx: &SelectionContext<'_>) -> (Estimate, Option<Refinement>) {
        let tree = ctx.tree();
        let seed = self.seed ^ ctx.seed.wrapping_mul(0xD1B5_4A32_D192_ED03);
        match self.rule {
            WalkRule::Fixed(m) => (self.walk.run(&tree, m, seed), None),
            WalkRule::Paper => {
                let edges = ctx.delta.inserted.len() + ctx.delta.deleted.len();
                let m = paper_walks(edges, tree.max_degree, tree.query_size());
                (self.walk.run(&tree, m, seed), None)
            }
            WalkRule::Confidence(conf) => {
                let boundary = |est: &Estimate| confidence_boundary(ctx, est, conf.focus);
                let (e, r) = estimate_with_confidence(&tree, &conf, self.walk, seed, boundary);
                (e, Some(r))
            }
        }
    }

    /// The vertices to cache given an estimate.
    pub fn select_from(&self, est: &Estimate, ctx: &SelectionContext<'_>) -> (Vec<VertexId>, usize) {
        take_within_budget(ctx.graph, est.ranked().into_iter().map(|x| x.0), ctx.budget_bytes)
    }
}

/// `C_y` for the Eq. (5) refinement: the smallest estimate among the vertices
/// the budget would cache that rank in the top `focus` of the sampled ones.
pub fn confidence_boundary(ctx: &SelectionContext<'_>, est: &Estimate, focus: f64) -> Option<f64> {
    let ranked = est.ranked();
    let k = ((focus * ranked.len() as f64).ceil() as usize).clamp(1, ranked.len().max(1));
    let top = ranked.get(..k.min(ranked.len()))?;
    let (chosen, _) = take_within_budget(ctx.graph, top.iter().map(|x| x.0), ctx.budget_bytes);
    let last = *chosen.last()?;
    Some(est.get(last))
}

impl CachePolicy for SampledPolicy {
    fn name(&self) -> String {
        "sampled".into()
    }
    fn select(&self, ctx: &SelectionContext<'_>) -> Vec<VertexId> {
        self.select_from(&self.estimate(ctx).0, ctx).0
    }
    fn select_report(&self, ctx: &SelectionContext<'_>) -> Result<Selection, SelectError> {
        let (est, refinement) = self.estimate(ctx);
        let (vertices, bytes) = self.select_from(&est, ctx);
        Ok(Selection {
            vertices,
            bytes,
            walks: Some(est.walks),
            sampled: Some(est.sampled_vertices()),
            refinement,
        })
    }
}

/// GCSM's "Naive": the highest-degree vertices (degree in G_k+1), until the
/// budget is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DegreePolicy;

impl CachePolicy for DegreePolicy {
    fn name(&self) -> String {
        "degree".into()
    }
    fn select(&self, ctx: &SelectionContext<'_>) -> Vec<VertexId> {
        let g = ctx.graph;
        let mut by_deg: Vec<(u32, VertexId)> = (0..g.num_vertices() as VertexId)
            .map(|v| (g.nbrs(v, Version::New).len() as u32, v))
            .filter(|x| x.0 > 0)
            .collect();
        by_deg.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        take_within_budget(g, by_deg.into_iter().map(|x| x.1), ctx.budget_bytes).0
    }
}

/// VSGM: every list within `k` hops (in G_k ∪ G_k+1) of an endpoint of a
/// batch edge, nearest first. `k = None` uses [`khop_radius`] of the plans,
/// the smallest `k` that covers every list the matching can read.
///
/// [`CachePolicy::select`] returns the nearest-first truncation when the set
/// does not fit; [`CachePolicy::select_report`] returns
/// [`SelectError::OverBudget`] then, with that truncation as `partial`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KHopPolicy {
    pub k: Option<usize>,
}

impl KHopPolicy {
    /// The full k-hop set in BFS order (no budget applied).
    pub fn khop_set(&self, ctx: &SelectionContext<'_>) -> Vec<VertexId> {
        let k = self.k.unwrap_or_else(|| khop_radius(ctx.plans));
        let g = ctx.graph;
        let mut seen = vec![false; g.num_vertices()];
        let mut order = Vec::new();
        let mut queue = VecDeque::new();
        let mut starts: Vec<VertexId> = ctx
            .delta
            .inserted
            .iter()
            .chain(&ctx.delta.deleted)
            .flat_map(|e| [e.u, e.v])
            .collect();
        starts.sort_unstable();
        for v in starts {
            if !seen[v as usize] {
                seen[v as usize] = true;
                order.push(v);
                queue.push_back((v, 0usize));
            }
        }
        while let Some((v, d)) = queue.pop_front() {
            if d == k {
                continue;
            }
            let (old, app) = g.raw_list(v);
            for &w in old.iter().chain(app) {
                let w = w & !MARK;
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    order.push(w);
                    queue.push_back((w, d + 1));
                }
            }
        }
        order
    }
}

impl CachePolicy for KHopPolicy {
    fn name(&self) -> String {
        match self.k {
            Some(k) => format!("khop(k={k})"),
            None => "khop".into(),
        }
    }
    fn select(&self, ctx: &SelectionContext<'_>) -> Vec<VertexId> {
        take_within_budget(ctx.graph, self.khop_set(ctx), ctx.budget_bytes).0
    }
    fn select_report(&self, ctx: &SelectionContext<'_>) -> Result<Selection, SelectError> {
        let all = self.khop_set(ctx);
        let needed = pack_bytes(ctx.graph, &all);
        if needed <= ctx.budget_bytes {
            return Ok(Selection {
                vertices: all,
                bytes: needed,
                ..Selection::default()
            });
        }
        let (v, bytes) = take_within_budget(ctx.graph, all, ctx.budget_bytes);
        Err(SelectError::OverBudget {
            policy: self.name(),
            needed_bytes: needed,
            budget_bytes: ctx.budget_bytes,
            partial: Box::new(Selection {
                vertices: v,
                bytes,
                ..Selection::default()
            }),
        })
    }
}

/// The largest query distance, over the plans, from the seed edge to a query
/// vertex whose list some level reads: the k for which [`KHopPolicy`] caches
/// every list the matching can read (a vertex bound at query distance `j`
/// from the seed edge is at most `j` hops from a batch endpoint in
/// G_k ∪ G_k+1).
pub fn khop_radius(plans: &[DeltaPlan]) -> usize {
    let mut k = 0;
    for p in plans {
        let levels = &p.plan.levels;
        let n = levels.len();
        let mut adj = vec![Vec::new(); n];
        if n >= 2 {
            adj[0].push(1);
            adj[1].push(0);
        }
        let mut read = vec![false; n];
        for (d, l) in levels.iter().enumerate() {
            for r in &l.reads {
                adj[d].push(r.pos as usize);
                adj[r.pos as usize].push(d);
                read[r.pos as usize] = true;
            }
        }
        let mut dist = vec![usize::MAX; n];
        let mut q = VecDeque::new();
        for (s, d) in dist.iter_mut().enumerate().take(2) {
            *d = 0;
            q.push_back(s);
        }
        while let Some(u) = q.pop_front() {
            for &w in &adj[u] {
                if dist[w] == usize::MAX {
                    dist[w] = dist[u] + 1;
                    q.push_back(w);
                }
            }
        }
        for (u, &r) in read.iter().enumerate() {
            if r && dist[u] != usize::MAX {
                k = k.max(dist[u]);
            }
        }
    }
    k
}

/// Zero-copy only: caches nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoCache;

impl CachePolicy for NoCache {
    fn name(&self) -> String {
        "none".into()
    }
    fn select(&self, _ctx: &SelectionContext<'_>) -> Vec<VertexId> {
        Vec::new()
    }
}
