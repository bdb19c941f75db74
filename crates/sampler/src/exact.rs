//! The exact access counter: `C_v` = the number of execution-tree nodes that
//! read `v`'s neighbour list, over every delta plan and seed of a staged
//! batch (GCSM Sec. III, Fig. 15a; the ground truth the estimators are
//! judged against).
//!
//! [`AccessCounter`] is a [`Visitor`] for the planner's [`Executor`]; the
//! matching logic is the executor's. A node at depth `plan.depth() - 1` only
//! counts the leaves below it, and leaves read nothing, so the counter records
//! that node's reads and then skips its (last-level) intersection: counting
//! accesses is cheaper than counting matches.

use csm_graph::{GraphView, VertexId};
use csm_planner::{Executor, Level, Visitor};
use rayon::prelude::*;

use crate::freq::{AccessSink, Freq};
use crate::par::{per_thread, with_own};
use crate::tree::{ExecutionTree, Root};

/// Records every list read with weight 1 (see the module docs).
pub struct AccessCounter<'s, S: AccessSink> {
    pub sink: &'s mut S,
    /// Depth of the plan being run (set by [`AccessCounter::run_root`]).
    depth: usize,
    /// Tree nodes entered (root and inner nodes; leaves are not nodes that read).
    pub nodes: u64,
}

impl<'s, S: AccessSink> AccessCounter<'s, S> {
    pub fn new(sink: &'s mut S) -> Self {
        AccessCounter {
            sink,
            depth: 0,
            nodes: 0,
        }
    }

    /// Counts the accesses of the subtree of `root`.
    pub fn run_root<G: GraphView + ?Sized>(&mut self, tree: &ExecutionTree<'_, G>, ex: &mut Executor, root: Root) {
        let plan = &tree.plans[root.plan as usize].plan;
        self.depth = plan.depth();
        ex.count(tree.graph, plan, &[root.x, root.y], self);
    }
}

impl<S: AccessSink> Visitor for AccessCounter<'_, S> {
    #[inline]
    fn enter(&mut self, depth: usize, emb: &[VertexId], level: &Level) -> bool {
        self.nodes += 1;
        for r in &level.reads {
            self.sink.access(emb[r.pos as usize], depth - 1, 1.0);
        }
        // The children of a depth-1 node are leaves: nothing below reads.
        depth + 1 < self.depth
    }
}

/// Exact access counts plus the number of reading tree nodes.
#[derive(Clone, Debug)]
pub struct ExactCounts {
    pub counts: Freq,
    /// Non-leaf tree nodes (each reads the lists of its level).
    pub nodes: u64,
}

/// Exact counts, sequentially, into a dense accumulator.
pub fn exact_access_counts<G: GraphView + ?Sized>(tree: &ExecutionTree<'_, G>) -> ExactCounts {
    let mut counts = Freq::dense(tree.graph.num_vertices());
    let mut ex = Executor::new();
    let mut c = AccessCounter::new(&mut counts);
    for &root in &tree.roots {
        c.run_root(tree, &mut ex, root);
    }
    let nodes = c.nodes;
    ExactCounts { counts, nodes }
}

/// Exact counts in parallel over roots (rayon), with one dense accumulator
/// per worker thread merged at the end. Same result as [`exact_access_counts`].
pub fn exact_access_counts_par<G: GraphView + ?Sized>(tree: &ExecutionTree<'_, G>) -> ExactCounts {
    let n = tree.graph.num_vertices();
    if rayon::current_num_threads() <= 1 || tree.roots.len() < 2 {
        return exact_access_counts(tree);
    }
    let parts = per_thread(|| (Freq::dense(n), 0u64));
    tree.roots.par_iter().for_each_init(Executor::new, |ex, &root| {
        with_own(&parts, |(counts, nodes)| {
            let mut c = AccessCounter::new(counts);
            c.run_root(tree, ex, root);
            *nodes += c.nodes;
        })
    });
    let mut out = ExactCounts {
        counts: Freq::dense(n),
        nodes: 0,
    };
    for m in parts {
        let (c, k) = m.into_inner().unwrap_or_else(|e| e.into_inner());
        out.counts.merge(c);
        out.nodes += k;
    }
    out
}
