//! Running delta plans over a staged batch (GCSM Eq. 1, split by sign as
//! described in [`crate::plan`]): seeds, and a sequential reference driver.

use csm_graph::{BatchDelta, Edge, GraphView, VertexId};

use crate::count;
use crate::exec::{Executor, Visitor};
use crate::plan::{DeltaPlan, Sign};

/// Exact counts of one batch ([`crate::count`]: each saturates).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeltaCounts {
    /// |M(G') \ M(G)|
    pub positive: u64,
    /// |M(G) \ M(G')|
    pub negative: u64,
}

impl DeltaCounts {
    pub fn add(&mut self, sign: Sign, n: u64) {
        match sign {
            Sign::Positive => self.positive = count::add(self.positive, n),
            Sign::Negative => self.negative = count::add(self.negative, n),
        }
    }
    pub fn merge(self, o: DeltaCounts) -> DeltaCounts {
        DeltaCounts {
            positive: count::add(self.positive, o.positive),
            negative: count::add(self.negative, o.negative),
        }
    }
    pub fn net(&self) -> i128 {
        self.positive as i128 - self.negative as i128
    }
}

/// Whether the batch edge `e`, oriented `x → order[0]`, `y → order[1]`, can
/// seed `plan`: matching vertex labels and (for edge-labelled queries) edge label.
pub fn seed_fits<G: GraphView + ?Sized>(g: &G, plan: &DeltaPlan, e: &Edge, x: VertexId, y: VertexId) -> bool {
    let labels = g.labels();
    plan.seed_elabel.is_none_or(|l| l == e.label)
        && labels[x as usize] == plan.plan.levels[0].label
        && labels[y as usize] == plan.plan.levels[1].label
}

/// Calls `f(x, y)` for every batch edge `(x, y)` (both orientations) that can
/// be bound to `plan`'s seed edge: inserted edges for positive plans, deleted
/// edges for negative ones, with matching vertex and edge labels.
pub fn for_each_seed<G: GraphView + ?Sized>(
    g: &G,
    plan: &DeltaPlan,
    delta: &BatchDelta,
    mut f: impl FnMut(VertexId, VertexId),
) {
    let edges = match plan.sign {
        Sign::Positive => &delta.inserted,
        Sign::Negative => &delta.deleted,
    };
    for e in edges {
        for (x, y) in [(e.u, e.v), (e.v, e.u)] {
            if seed_fits(g, plan, e, x, y) {
                f(x, y);
            }
        }
    }
}

/// Single-threaded reference: runs every delta plan from every seed.
/// `g` must hold the batch staged (old, common and new views available).
pub fn count_batch<G: GraphView + ?Sized, V: Visitor>(
    g: &G,
    plans: &[DeltaPlan],
    delta: &BatchDelta,
    ex: &mut Executor,
    vis: &mut V,
) -> DeltaCounts {
    let mut out = DeltaCounts::default();
    for p in plans {
        for_each_seed(g, p, delta, |x, y| {
            out.add(p.sign, ex.count(g, &p.plan, &[x, y], vis));
        });
    }
    out
}
