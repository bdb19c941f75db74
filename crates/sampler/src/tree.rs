//! [`ExecutionTree`]: the execution tree of GCSM Fig. 4a for one staged
//! batch, described by its roots; the nodes below them are produced on demand
//! by the planner's [`Executor`](csm_planner::Executor).
//!
//! A root is a seed: one delta plan with one orientation `(x, y)` of one
//! batch edge bound to its seed query edge (executor depth 2, paper level 1).
//! A node at executor depth `d` (`d` bound vertices) reads the lists of
//! `emb[r.pos]` for every `r` in `plan.levels[d].reads`; those reads are the
//! accesses that `C_v` counts. Leaves (complete matches, depth = plan depth)
//! read nothing. The number of roots `R` plays `|ΔE|` in GCSM Eq. (3)-(5):
//! a walk picks a root with probability `1/R`.
//!
//! The tree keeps its own copy of the plans with the executor's last-level
//! hoisting ([`csm_planner::Level::hoist`]) turned off: that shortcut
//! computes the leaves' candidate set once at a node higher up, but the
//! counter and the walks stop at the nodes above the leaves and never count
//! them, so it would only add work (about 15-20% of the walk's time on a
//! labelled house query). Candidates, and hence the walks' draws, are the same.

use csm_graph::{BatchDelta, GraphView, VertexId};
use csm_planner::{for_each_seed, DeltaPlan};

/// One root node: plan index and the bound seed edge `(x, y)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    pub plan: u32,
    pub x: VertexId,
    pub y: VertexId,
}

/// The roots of a batch's execution tree, with the quantities the
/// estimators need (`R`, `D`, the query size).
#[derive(Clone, Debug)]
pub struct ExecutionTree<'a, G: GraphView + ?Sized> {
    pub graph: &'a G,
    /// The delta plans, hoisting off (see the module docs).
    pub plans: Vec<DeltaPlan>,
    /// Every seed of every plan, in plan order then [`for_each_seed`] order.
    pub roots: Vec<Root>,
    /// `D`: [`GraphView::max_degree`] of the staged graph (at least 1). Every
    /// node has at most `D` children, so `1/D` is a valid step probability.
    pub max_degree: usize,
}

impl<'a, G: GraphView + ?Sized> ExecutionTree<'a, G> {
    /// The tree of `plans` over the batch `delta` staged in `graph`.
    pub fn new(graph: &'a G, plans: &[DeltaPlan], delta: &BatchDelta) -> Self {
        let mut plans = plans.to_vec();
        for p in &mut plans {
            for l in &mut p.plan.levels {
                l.hoist = None;
            }
        }
        let mut roots = Vec::new();
        for (i, p) in plans.iter().enumerate() {
            for_each_seed(graph, p, delta, |x, y| roots.push(Root { plan: i as u32, x, y }));
        }
        ExecutionTree {
            graph,
            plans,
            roots,
            max_degree: graph.max_degree().max(1),
        }
    }

    /// `R`, the number of root nodes.
    pub fn num_roots(&self) -> usize {
        self.roots.len()
    }

    /// `n`, the query size (the plans' depth; 0 without plans).
    pub fn query_size(&self) -> usize {
        self.plans.iter().map(|p| p.plan.depth()).max().unwrap_or(0)
    }

    /// `R · D^(level-1)`: the inverse probability that a single walk visits
    /// a given node at paper level `level` (executor depth `level + 1`).
    pub fn level_weight(&self, level: usize) -> f64 {
        self.roots.len() as f64 * (self.max_degree as f64).powi(level as i32 - 1)
    }

    /// An upper bound on the list reads of one root-to-leaf path: the sum of
    /// the read counts of the deepest plan's reading levels.
    pub fn reads_per_path(&self) -> usize {
        self.plans
            .iter()
            .map(|p| p.plan.levels.iter().skip(2).map(|l| l.reads.len()).sum::<usize>())
            .max()
            .unwrap_or(0)
    }
}
