//! The generic plan executor: a depth-first nested loop over any
//! [`GraphView`], with a [`Visitor`] hook at every execution-tree node
//! (GCSM Fig. 4a) and reusable per-depth buffers (no allocation per node).
//!
//! Counting does not enumerate what it can count: at the last level the
//! number of matches is the candidate-set size minus the earlier same-label
//! bindings that fall inside it (injectivity conflicts).

use std::mem::MaybeUninit;

use csm_graph::{GraphView, VertexId};

use crate::intersect::{intersect_into, intersect_len, Operand};
use crate::plan::{Level, Plan};
use crate::query::MAX_QUERY_VERTICES;

/// Observes (and may prune) the execution tree.
///
/// `enter` is called when a node with `depth` bound vertices is about to read
/// the lists of `plan.levels[depth].reads` to compute its children; returning
/// `false` skips the node (its subtree counts 0). `leave` pairs with every
/// `enter` that returned `true`. Leaves (complete matches) read nothing and
/// are not visited.
pub trait Visitor {
    #[inline(always)]
    fn enter(&mut self, _depth: usize, _emb: &[VertexId], _level: &Level) -> bool {
        true
    }
    #[inline(always)]
    fn leave(&mut self, _depth: usize) {}
}

/// The visitor that does nothing (compiled away).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoVisitor;
impl Visitor for NoVisitor {}

/// Reusable state for running plans; one per thread.
#[derive(Clone, Debug)]
pub struct Executor {
    bufs: Vec<Vec<VertexId>>,
    tmp: Vec<VertexId>,
    emb: [VertexId; MAX_QUERY_VERTICES],
}

impl Default for Executor {
    fn default() -> Self {
        Executor {
            bufs: vec![Vec::new(); MAX_QUERY_VERTICES],
            tmp: Vec::new(),
            emb: [0; MAX_QUERY_VERTICES],
        }
    }
}

/// Builds the operands of `level` on the stack (at most 31 reads).
macro_rules! with_operands {
    ($g:expr, $level:expr, $emb:expr, |$ops:ident| $body:expr) => {{
        let mut storage: [MaybeUninit<Operand<'_>>; MAX_QUERY_VERTICES] =
            [const { MaybeUninit::uninit() }; MAX_QUERY_VERTICES];
        let n = $level.reads.len();
        for (k, r) in $level.reads.iter().enumerate() {
            storage[k].write(Operand {
                list: $g.nbrs($emb[r.pos as usize], r.version),
                elabel: r.elabel,
            });
        }
        // SAFETY: the first `n` entries were just written; Operand is Copy (no drop).
        let $ops: &mut [Operand<'_>] =
            unsafe { std::slice::from_raw_parts_mut(storage.as_mut_ptr() as *mut Operand<'_>, n) };
        $body
    }};
}

impl Executor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts the completions of `prefix` (bound to `plan.order[..prefix.len()]`).
    /// The caller guarantees the prefix itself is a valid partial match.
    pub fn count<G: GraphView + ?Sized, V: Visitor>(
        &mut self,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        vis: &mut V,
    ) -> u64 {
        self.emb[..prefix.len()].copy_from_slice(prefix);
        self.rec::<G, V, false>(g, plan, prefix.len(), vis, &mut |_| {})
    }

    /// Calls `f` with every completion of `prefix`, in `plan.order` positions.
    pub fn enumerate<G: GraphView + ?Sized>(
        &mut self,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        f: &mut dyn FnMut(&[VertexId]),
    ) -> u64 {
        self.emb[..prefix.len()].copy_from_slice(prefix);
        self.rec::<G, NoVisitor, true>(g, plan, prefix.len(), &mut NoVisitor, f)
    }

    /// The filtered candidates of `plan.order[depth]` given `prefix`
    /// (`prefix.len() == depth`), for callers that split work themselves.
    pub fn candidates<G: GraphView + ?Sized>(
        &mut self,
        g: &G,
        plan: &Plan,
        prefix: &[VertexId],
        out: &mut Vec<VertexId>,
    ) {
        let d = prefix.len();
        self.emb[..d].copy_from_slice(prefix);
        self.fill(g, plan, d, out);
    }

    fn fill<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, d: usize, out: &mut Vec<VertexId>) {
        let level = &plan.levels[d];
        let emb = self.emb;
        with_operands!(g, level, emb, |ops| intersect_into(ops, out));
        let labels = g.labels();
        let keep = |c: &VertexId| {
            (!plan.check_labels || labels[*c as usize] == level.label)
                && level.conflicts.iter().all(|&p| emb[p as usize] != *c)
        };
        if plan.check_labels || !level.conflicts.is_empty() {
            out.retain(keep);
        }
    }

    fn rec<G: GraphView + ?Sized, V: Visitor, const ENUM: bool>(
        &mut self,
        g: &G,
        plan: &Plan,
        d: usize,
        vis: &mut V,
        f: &mut dyn FnMut(&[VertexId]),
    ) -> u64 {
        let depth = plan.depth();
        if d == depth {
            if ENUM {
                f(&self.emb[..d]);
            }
            return 1;
        }
        let level = &plan.levels[d];
        if !vis.enter(d, &self.emb[..d], level) {
            return 0;
        }
        let total = if d + 1 == depth && !ENUM {
            self.count_last(g, plan, level)
        } else {
            let mut buf = std::mem::take(&mut self.bufs[d]);
            self.fill(g, plan, d, &mut buf);
            let mut total = 0;
            for &c in &buf {
                self.emb[d] = c;
                total += self.rec::<G, V, ENUM>(g, plan, d + 1, vis, f);
            }
            self.bufs[d] = buf;
            total
        };
        vis.leave(d);
        total
    }

    /// |candidates| at the last level without enumerating them.
    fn count_last<G: GraphView + ?Sized>(&mut self, g: &G, plan: &Plan, level: &Level) -> u64 {
        let emb = self.emb;
        let labels = g.labels();
        let tmp = &mut self.tmp;
        with_operands!(g, level, emb, |ops| {
            let mut n = if plan.check_labels {
                intersect_into(ops, tmp);
                tmp.iter().filter(|&&c| labels[c as usize] == level.label).count() as u64
            } else {
                intersect_len(ops, tmp)
            };
            for &p in &level.conflicts {
                let x = emb[p as usize];
                if ops.iter().all(|o| o.contains(x)) {
                    n -= 1;
                }
            }
            n
        })
    }
}
