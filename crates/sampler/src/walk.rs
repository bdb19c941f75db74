//! Access-frequency estimation by random walks on the execution tree
//! (GCSM Sec. IV).
//!
//! * [`single_walk`] (Sec. IV-A): pick a root uniformly among the `R` roots;
//!   at each node read its lists, then pick a uniform child among its `|V|`
//!   children and continue with probability `|V|/D`. Every node at paper
//!   level `i` is reached with probability `1/(R·D^(i-1))`, so adding
//!   `R·D^(i-1)` per list read at level `i` (Eq. 3) is unbiased.
//! * [`merged_walk`] (Sec. IV-B): `M` walks in one execution. The number `B`
//!   of walks through a node is drawn when the executor enters it; subtrees
//!   with `B = 0` are skipped; each read adds `B·R·D^(i-1)`; the sums are
//!   divided by `M` at the end. Nothing is materialised: space is one
//!   accumulator, dense or sparse by size ([`Freq::for_size`]).
//!
//! How `B` is split among children ([`Splitting`]):
//! * [`Splitting::Multinomial`] (default): the `B` walks at a node each go to
//!   a given child with probability `1/D` and stop otherwise, so the children's
//!   counts are multinomial. They are drawn child by child as conditional
//!   binomials (`Binomial(remaining, 1/(D - j))` for the `j`-th child, and
//!   likewise `Binomial(remaining, 1/(R - j))` over the roots), which makes the
//!   merged execution *exactly* equivalent in distribution to `M` independent
//!   [`single_walk`]s and lets a node stop drawing once its walks are used up.
//!   Since a node has at most `U` children, `U` the length of the shortest
//!   list it reads, only the walks that draw a position below `U` can go on:
//!   their number is drawn first, and when it is 0 the node's intersection is
//!   skipped altogether (see [`MergedWalk`]); [`single_walk`] does the same.
//! * [`Splitting::Independent`]: the paper's literal description: each root
//!   gets `Binomial(M, 1/R)` and each child `Binomial(B_parent, 1/D)`
//!   independently. Same marginals, hence also unbiased, but the number of
//!   walks is not conserved (siblings are uncorrelated instead of negatively
//!   correlated).
//!
//! The merged walk is a [`Visitor`] driving the planner's [`Executor`], so no
//! matching logic is duplicated. A node whose children are leaves returns
//! `false` after recording its reads: leaves read nothing, so the executor's
//! last-level count is skipped.
//!
//! Randomness: a `ChaCha8Rng` seeded with `seed`; stream 0 distributes the
//! walks over the roots, stream `i + 1` drives root `i`'s subtree. The
//! sequential and the rayon-parallel versions therefore draw the same numbers
//! and agree up to floating-point summation order.

use csm_graph::{GraphView, VertexId};
use csm_planner::query::MAX_QUERY_VERTICES;
use csm_planner::{Executor, Level, Visitor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution};
use rayon::prelude::*;

use crate::freq::{AccessSink, Freq};
use crate::par::{per_thread, with_own};
use crate::tree::{ExecutionTree, Root};

/// How the merged walk splits a node's walks among its children (see the
/// module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Splitting {
    #[default]
    Multinomial,
    Independent,
}

impl std::str::FromStr for Splitting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "multinomial" => Ok(Splitting::Multinomial),
            "independent" | "binomial" => Ok(Splitting::Independent),
            _ => Err(format!("unknown splitting `{s}` (expected multinomial or independent)")),
        }
    }
}

/// Estimated access frequencies: the sums of Eq. (3) over `walks` walks.
/// [`Estimate::get`] divides by `walks`; two estimates of the same tree
/// with different seeds [`Estimate::merge`] into one over all their walks.
#[derive(Clone, Debug)]
pub struct Estimate {
    /// Σ over walks of Eq. (3) (not yet divided by `walks`).
    pub sums: Freq,
    pub walks: u64,
    /// Tree nodes the walks visited (each distinct node once for the merged
    /// walk, each visit for single walks).
    pub nodes: u64,
}

impl Estimate {
    pub fn empty(sums: Freq) -> Estimate {
        Estimate {
            sums,
            walks: 0,
            nodes: 0,
        }
    }

    /// `C̃_v`, the mean of Eq. (3) over the walks (0 without walks).
    pub fn get(&self, v: VertexId) -> f64 {
        if self.walks == 0 {
            0.0
        } else {
            self.sums.get(v) / self.walks as f64
        }
    }

    /// Sampled vertices, highest estimate first (ties by id).
    pub fn ranked(&self) -> Vec<(VertexId, f64)> {
        let m = self.walks.max(1) as f64;
        self.sums.ranked().into_iter().map(|(v, s)| (v, s / m)).collect()
    }

    /// Number of vertices with a non-zero estimate.
    pub fn sampled_vertices(&self) -> usize {
        self.sums.nonzero_count()
    }

    /// The estimates as a [`Freq`] (sums divided by `walks`).
    pub fn to_freq(&self) -> Freq {
        let mut f = self.sums.clone();
        f.scale(1.0 / self.walks.max(1) as f64);
        f
    }

    /// Pools the walks of `other` (an independent run on the same tree).
    pub fn merge(&mut self, other: Estimate) {
        self.sums.merge(other.sums);
        self.walks += other.walks;
        self.nodes += other.nodes;
    }
}

/// `Binomial(n, p)`, with the trivial cases short-cut.
#[inline]
pub(crate) fn binomial<R: Rng + ?Sized>(rng: &mut R, n: u64, p: f64) -> u64 {
    if n == 0 || p <= 0.0 {
        0
    } else if p >= 1.0 {
        n
    } else if n == 1 {
        u64::from(rng.random::<f64>() < p)
    } else {
        Binomial::new(n, p).expect("0 < p < 1").sample(rng)
    }
}

fn root_rng(seed: u64, root: usize) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(root as u64 + 1);
    r
}

/// One walk of GCSM Sec. IV-A; every list read goes to `sink` with its
/// Eq. (3) weight. Returns the number of nodes visited (0 without roots).
pub fn single_walk<G, R, S>(
    tree: &ExecutionTree<'_, G>,
    ex: &mut Executor,
    rng: &mut R,
    sink: &mut S,
    scratch: &mut Vec<VertexId>,
) -> usize
where
    G: GraphView + ?Sized,
    R: Rng + ?Sized,
    S: AccessSink,
{
    let r = tree.roots.len();
    if r == 0 {
        return 0;
    }
    let root = tree.roots[rng.random_range(0..r)];
    let plan = &tree.plans[root.plan as usize].plan;
    let depth = plan.depth();
    let dmax = tree.max_degree;
    let mut emb = [0 as VertexId; MAX_QUERY_VERTICES];
    emb[0] = root.x;
    emb[1] = root.y;
    let mut d = 2;
    let mut w = r as f64;
    let mut nodes = 0;
    while d < depth {
        nodes += 1;
        for rd in &plan.levels[d].reads {
            sink.access(emb[rd.pos as usize], d - 1, w);
        }
        if d + 1 >= depth {
            break; // the children are leaves: they read nothing
        }
        // uniform child, then continue with probability |V|/D: one draw of
        // u in [0, D), continuing to child u when u < |V|. |V| is at most the
        // shortest list read, so a larger u stops without intersecting.
        let u = rng.random_range(0..dmax);
        if u >= read_bound(tree.graph, &plan.levels[d], &emb[..d]) {
            break;
        }
        ex.candidates(tree.graph, plan, &emb[..d], scratch);
        debug_assert!(scratch.len() <= dmax, "{} children > D = {dmax}", scratch.len());
        if u >= scratch.len() {
            break;
        }
        emb[d] = scratch[u];
        d += 1;
        w *= dmax as f64;
    }
    nodes
}

/// `walks` independent [`single_walk`]s (the reference the merged walk must
/// match in distribution), averaged.
pub fn independent_walks<G: GraphView + ?Sized>(tree: &ExecutionTree<'_, G>, walks: u64, seed: u64) -> Estimate {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut ex = Executor::new();
    let mut scratch = Vec::new();
    let mut est = Estimate::empty(accumulator(tree, walks));
    for _ in 0..walks {
        est.nodes += single_walk(tree, &mut ex, &mut rng, &mut est.sums, &mut scratch) as u64;
    }
    est.walks = walks;
    est
}

/// A [`Freq`] sized for `walks` walks over `tree`.
fn accumulator<G: GraphView + ?Sized>(tree: &ExecutionTree<'_, G>, walks: u64) -> Freq {
    let touched = walks.saturating_mul(tree.reads_per_path().max(1) as u64);
    Freq::for_size(tree.graph.num_vertices(), touched.min(usize::MAX as u64) as usize)
}

/// The length of the shortest list `level` reads: an upper bound on the
/// number of children of a node at that level.
#[inline]
fn read_bound<G: GraphView + ?Sized>(g: &G, level: &Level, emb: &[VertexId]) -> usize {
    level
        .reads
        .iter()
        .map(|r| g.nbrs(emb[r.pos as usize], r.version).len())
        .min()
        .unwrap_or(usize::MAX)
}

#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    /// Walks through the node.
    b: u64,
    /// Multinomial: walks not yet given to a child, among those that drew a
    /// position below `span`.
    remaining: u64,
    /// Children seen so far.
    seen: u64,
    /// Multinomial: positions `[0, span)` the remaining walks are uniform on.
    span: f64,
}

/// The merged execution of Sec. IV-B as an executor [`Visitor`] (see the
/// module docs). Drive it with [`MergedWalk::run_root`].
///
/// Multinomial splitting draws, at each node with `B` walks, how many of them
/// pick a position below `U`, the length of the shortest list the node reads
/// (`Binomial(B, U/D)`): `|V| ≤ U`, so the others stop whatever the
/// intersection holds. When none does, the node's reads are recorded and the
/// intersection is skipped; otherwise those walks are uniform on `[0, U)` and
/// are split among the children with `Binomial(remaining, 1/(U - j))`. This is
/// the same distribution as the per-child `1/D` steps, at a fraction of the
/// intersections.
pub struct MergedWalk<'r, G: GraphView + ?Sized, R: Rng + ?Sized, S: AccessSink> {
    graph: &'r G,
    pub rng: &'r mut R,
    pub sink: &'r mut S,
    splitting: Splitting,
    d: f64,
    depth: usize,
    /// `weights[depth] = R · D^(depth-2)`.
    weights: [f64; MAX_QUERY_VERTICES + 1],
    frames: [Frame; MAX_QUERY_VERTICES + 1],
    root_b: u64,
    /// Distinct nodes with `B > 0` entered so far.
    pub nodes: u64,
}

impl<'r, G: GraphView + ?Sized, R: Rng + ?Sized, S: AccessSink> MergedWalk<'r, G, R, S> {
    pub fn new(tree: &ExecutionTree<'r, G>, splitting: Splitting, rng: &'r mut R, sink: &'r mut S) -> Self {
        let mut weights = [0.0; MAX_QUERY_VERTICES + 1];
        for (d, w) in weights.iter_mut().enumerate().skip(2) {
            *w = tree.level_weight(d - 1);
        }
        MergedWalk {
            graph: tree.graph,
            rng,
            sink,
            splitting,
            d: tree.max_degree as f64,
            depth: 0,
            weights,
            frames: [Frame::default(); MAX_QUERY_VERTICES + 1],
            root_b: 0,
            nodes: 0,
        }
    }

    /// Runs the `b` walks that start at `root`.
    pub fn run_root(&mut self, tree: &ExecutionTree<'_, G>, ex: &mut Executor, root: Root, b: u64) {
        let plan = &tree.plans[root.plan as usize].plan;
        self.depth = plan.depth();
        self.root_b = b;
        ex.count(tree.graph, plan, &[root.x, root.y], self);
    }
}

impl<G: GraphView + ?Sized, R: Rng + ?Sized, S: AccessSink> Visitor for MergedWalk<'_, G, R, S> {
    #[inline]
    fn enter(&mut self, depth: usize, emb: &[VertexId], level: &Level) -> bool {
        let b = if depth == 2 {
            self.root_b
        } else {
            let f = &mut self.frames[depth - 1];
            match self.splitting {
                Splitting::Multinomial => {
                    if f.remaining == 0 {
                        return false;
                    }
                    let p = 1.0 / (f.span - f.seen as f64);
                    f.seen += 1;
                    let b = binomial(self.rng, f.remaining, p);
                    f.remaining -= b;
                    b
                }
                Splitting::Independent => binomial(self.rng, f.b, 1.0 / self.d),
            }
        };
        if b == 0 {
            return false;
        }
        self.nodes += 1;
        let w = b as f64 * self.weights[depth];
        for r in &level.reads {
            self.sink.access(emb[r.pos as usize], depth - 1, w);
        }
        if depth + 1 >= self.depth {
            return false; // the children are leaves: they read nothing
        }
        let frame = match self.splitting {
            Splitting::Multinomial => {
                let u = (read_bound(self.graph, level, emb) as f64).min(self.d);
                let k = binomial(self.rng, b, u / self.d);
                if k == 0 {
                    return false; // no walk can reach a child: skip the intersection
                }
                Frame {
                    b,
                    remaining: k,
                    seen: 0,
                    span: u,
                }
            }
            Splitting::Independent => Frame {
                b,
                remaining: b,
                seen: 0,
                span: self.d,
            },
        };
        self.frames[depth] = frame;
        true
    }
}

/// How many of the `walks` walks start at each root: `(root index, B_1)`
/// for the roots with `B_1 > 0`, in root order.
pub fn root_counts<R: Rng + ?Sized>(
    num_roots: usize,
    walks: u64,
    splitting: Splitting,
    rng: &mut R,
) -> Vec<(usize, u64)> {
    let r = num_roots;
    if r == 0 || walks == 0 {
        return Vec::new();
    }
    match splitting {
        Splitting::Multinomial if walks < r as u64 => {
            // few walks: draw each walk's root directly (same multinomial)
            let mut picks: Vec<usize> = (0..walks).map(|_| rng.random_range(0..r)).collect();
            picks.sort_unstable();
            let mut out: Vec<(usize, u64)> = Vec::new();
            for p in picks {
                match out.last_mut() {
                    Some((q, c)) if *q == p => *c += 1,
                    _ => out.push((p, 1)),
                }
            }
            out
        }
        Splitting::Multinomial => {
            let mut remaining = walks;
            let mut out = Vec::new();
            for j in 0..r {
                if remaining == 0 {
                    break;
                }
                let b = binomial(rng, remaining, 1.0 / (r - j) as f64);
                remaining -= b;
                if b > 0 {
                    out.push((j, b));
                }
            }
            out
        }
        Splitting::Independent => (0..r)
            .filter_map(|j| Some((j, binomial(rng, walks, 1.0 / r as f64))).filter(|x| x.1 > 0))
            .collect(),
    }
}

/// The merged execution of `walks` walks, every read reported to `sink` with
/// weight `B·R·D^(i-1)` (not divided by `walks`). Returns the nodes visited.
pub fn merged_walk_into<G, S>(
    tree: &ExecutionTree<'_, G>,
    walks: u64,
    seed: u64,
    splitting: Splitting,
    sink: &mut S,
) -> u64
where
    G: GraphView + ?Sized,
    S: AccessSink,
{
    let mut rng0 = ChaCha8Rng::seed_from_u64(seed);
    let mut ex = Executor::new();
    let mut nodes = 0;
    for (i, b) in root_counts(tree.roots.len(), walks, splitting, &mut rng0) {
        let mut rng = root_rng(seed, i);
        let mut mw = MergedWalk::new(tree, splitting, &mut rng, sink);
        mw.run_root(tree, &mut ex, tree.roots[i], b);
        nodes += mw.nodes;
    }
    nodes
}

/// [`merged_walk_into`] an accumulator sized by [`Freq::for_size`].
pub fn merged_walk<G: GraphView + ?Sized>(
    tree: &ExecutionTree<'_, G>,
    walks: u64,
    seed: u64,
    splitting: Splitting,
) -> Estimate {
    let mut sums = accumulator(tree, walks);
    let nodes = merged_walk_into(tree, walks, seed, splitting, &mut sums);
    Estimate { sums, walks, nodes }
}

/// [`merged_walk_par`] runs sequentially below this much work...
const PAR_MIN_WORK: u64 = 4096;
/// ...counting at most this many walks per root.
const PAR_ROOT_CAP: u64 = 256;

/// [`merged_walk`] in parallel over roots (rayon), one accumulator per
/// worker thread merged at the end. Same draws as [`merged_walk`]. Small
/// runs (few walks) stay on the calling thread.
pub fn merged_walk_par<G: GraphView + ?Sized>(
    tree: &ExecutionTree<'_, G>,
    walks: u64,
    seed: u64,
    splitting: Splitting,
) -> Estimate {
    let mut rng0 = ChaCha8Rng::seed_from_u64(seed);
    let counts = root_counts(tree.roots.len(), walks, splitting, &mut rng0);
    // Too little work to pay for waking the pool (a root with b walks does
    // at most about min(b, its children) intersections).
    let work: u64 = counts.iter().map(|&(_, b)| b.min(PAR_ROOT_CAP)).sum();
    if rayon::current_num_threads() <= 1 || counts.len() < 2 || work < PAR_MIN_WORK {
        return merged_walk(tree, walks, seed, splitting);
    }
    let parts = per_thread(|| (accumulator(tree, walks), 0u64));
    counts.par_iter().for_each_init(Executor::new, |ex, &(i, b)| {
        with_own(&parts, |(sums, nodes)| {
            let mut rng = root_rng(seed, i);
            let mut mw = MergedWalk::new(tree, splitting, &mut rng, sums);
            mw.run_root(tree, ex, tree.roots[i], b);
            *nodes += mw.nodes;
        })
    });
    let mut est = Estimate::empty(accumulator(tree, walks));
    for m in parts {
        let (s, n) = m.into_inner().unwrap_or_else(|e| e.into_inner());
        est.sums.merge(s);
        est.nodes += n;
    }
    est.walks = walks;
    est
}

/// Which merged-walk implementation to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkOptions {
    pub splitting: Splitting,
    /// Use [`merged_walk_par`] (rayon) instead of [`merged_walk`].
    pub parallel: bool,
}

impl WalkOptions {
    /// Runs the merged walk with these options.
    pub fn run<G: GraphView + ?Sized>(&self, tree: &ExecutionTree<'_, G>, walks: u64, seed: u64) -> Estimate {
        if self.parallel {
            merged_walk_par(tree, walks, seed, self.splitting)
        } else {
            merged_walk(tree, walks, seed, self.splitting)
        }
    }
}
