//! The seeds of a batch for every delta plan at once: the batch edges are
//! grouped by their endpoints' labels in one pass, and each plan takes the
//! two groups its seed edge's labels name.
//!
//! A delta plan's seeds are the batch edges of its sign whose endpoints
//! carry the labels of the plan's first two levels, in either orientation
//! ([`csm_planner::for_each_seed`]). Testing every edge against every plan
//! costs plans × edges label checks, about as long as the task split:
//! on this project's 2-core VM (`examples/host_prep.rs`, scale 23, warm),
//! 0.12-0.29 ms for an 8,192-update batch (the 7-wheel's 24 plans the
//! most), against 0.07-0.09 ms grouped. Grouping costs one label lookup
//! per endpoint and a counting sort; each plan then reads only the edges
//! it seeds from. The seeds and their order are
//! [`csm_planner::for_each_seed`]'s, plan after plan.

use csm_graph::{Edge, Label};
use csm_planner::{DeltaPlan, Sign};
use rayon::prelude::*;

use crate::plan::Seed;

/// From this many edges of a sign, their endpoint labels are read on
/// rayon's pool.
const PAR_EDGES: usize = 2048;

/// Seed labels up to this value are indexed through a table.
const TABLE_MAX: usize = 4096;

/// The distinct labels of the plans' first two levels, sorted: the only
/// endpoint labels a seed can have.
fn seed_labels(plans: &[DeltaPlan]) -> Vec<Label> {
    let mut l: Vec<Label> = plans
        .iter()
        .flat_map(|p| p.plan.levels.iter().take(2).map(|level| level.label))
        .collect();
    l.sort_unstable();
    l.dedup();
    l
}

/// The batch edges of one sign grouped by `(index of u's label, index of
/// v's label)` among the seed labels; edges in a group keep their batch
/// order.
struct Groups {
    /// Number of seed labels.
    k: usize,
    /// `start[g]..start[g + 1]` indexes `edges` for group `g = a * k + b`.
    start: Vec<u32>,
    /// Indices into the batch's edge list.
    edges: Vec<u32>,
}

impl Groups {
    fn new(batch: &[Edge], labels: &[Label], seed_labels: &[Label]) -> Groups {
        let k = seed_labels.len();
        // label -> index + 1 (0: not a seed label), as a table for small labels
        let small = seed_labels.last().map_or(0, |&l| l as usize + 1);
        let table: Vec<u32> = if small <= TABLE_MAX {
            let mut t = vec![0u32; small];
            for (i, &l) in seed_labels.iter().enumerate() {
                t[l as usize] = i as u32 + 1;
            }
            t
        } else {
            Vec::new()
        };
        let index = |v: u32| -> u32 {
            let l = labels[v as usize];
            if small <= TABLE_MAX {
                table.get(l as usize).copied().unwrap_or(0)
            } else {
                seed_labels.binary_search(&l).map_or(0, |i| i as u32 + 1)
            }
        };
        // group + 1 of each edge (0: no seed label on an endpoint)
        let key = |e: &Edge| match (index(e.u), index(e.v)) {
            (0, _) | (_, 0) => 0,
            (a, b) => (a - 1) * k as u32 + b,
        };
        // The label reads are random reads of a large array (128 MB on the
        // bench's graph): about 30 ns each on the H200's host, cold, so
        // 0.5 ms for 8,192 updates on one thread.
        let keys: Vec<u32> = if batch.len() >= PAR_EDGES {
            batch.par_iter().map(key).collect()
        } else {
            batch.iter().map(key).collect()
        };
        let mut start = vec![0u32; k * k + 2];
        for &g in &keys {
            start[g as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        // counting sort (group 0, the edges no plan seeds from, included)
        let mut next = start.clone();
        let mut edges = vec![0u32; batch.len()];
        for (j, &g) in keys.iter().enumerate() {
            edges[next[g as usize] as usize] = j as u32;
            next[g as usize] += 1;
        }
        Groups {
            k,
            start: start[1..].to_vec(),
            edges,
        }
    }

    /// Batch edges whose endpoint labels have the seed-label indices `(a, b)`.
    fn of(&self, a: usize, b: usize) -> &[u32] {
        let g = a * self.k + b;
        &self.edges[self.start[g] as usize..self.start[g + 1] as usize]
    }
}

/// The seeds of `plans` (weight 1) over a batch's `inserted` and `deleted`
/// edges, `labels` the graph's vertex labels: the seeds
/// [`csm_planner::for_each_seed`] gives, in its order, plan after plan.
pub(crate) fn collect(plans: &[DeltaPlan], labels: &[Label], inserted: &[Edge], deleted: &[Edge]) -> Vec<Seed> {
    let sl = seed_labels(plans);
    let index = |l: Label| sl.binary_search(&l).expect("a seed label");
    let wants = |s: Sign| plans.iter().any(|p| p.sign == s);
    let group = |s: Sign, batch: &[Edge]| wants(s).then(|| Groups::new(batch, labels, &sl));
    let (ins, del) = if inserted.len() + deleted.len() >= PAR_EDGES {
        rayon::join(|| group(Sign::Positive, inserted), || group(Sign::Negative, deleted))
    } else {
        (group(Sign::Positive, inserted), group(Sign::Negative, deleted))
    };
    let mut out = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        let (groups, batch) = match p.sign {
            Sign::Positive => (ins.as_ref(), inserted),
            Sign::Negative => (del.as_ref(), deleted),
        };
        let Some(groups) = groups else { continue };
        let (a, b) = (index(p.plan.levels[0].label), index(p.plan.levels[1].label));
        let fits = |j: u32| p.seed_elabel.map_or(true, |l| l == batch[j as usize].label);
        let plan = i as u32;
        let forward = |j: u32| {
            let e = &batch[j as usize];
            Seed::new(plan, e.u, e.v, 1)
        };
        let reverse = |j: u32| {
            let e = &batch[j as usize];
            Seed::new(plan, e.v, e.u, 1)
        };
        // (u, v) seeds forward from group (a, b), backward from (b, a);
        // an edge is in one group, so the two merge by batch position
        let (f, r) = (groups.of(a, b), groups.of(b, a));
        if a == b {
            for &j in f.iter().filter(|&&j| fits(j)) {
                out.push(forward(j));
                out.push(reverse(j));
            }
            continue;
        }
        let (mut x, mut y) = (0, 0);
        while x < f.len() || y < r.len() {
            if y == r.len() || (x < f.len() && f[x] < r[y]) {
                if fits(f[x]) {
                    out.push(forward(f[x]));
                }
                x += 1;
            } else {
                if fits(r[y]) {
                    out.push(reverse(r[y]));
                }
                y += 1;
            }
        }
    }
    out
}
