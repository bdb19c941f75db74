//! STwig decomposition (paper 004 Sec. 3.2, after Sun et al., VLDB 2012).
//!
//! An STwig is a two-level tree: a root query vertex and a set of leaves
//! (neighbours of the root). A decomposition covers every query edge exactly
//! once and is *ordered*: the root of every twig after the first is a vertex
//! that an earlier twig already binds (in practice a leaf of an earlier
//! twig), so that its candidates can be restricted to earlier results.
//!
//! The roots of such a decomposition form a *connected vertex cover* of the
//! query: every edge needs an endpoint among the roots, and the order
//! condition makes each later root adjacent to an earlier one. Conversely
//! every connected vertex cover, visited in a connected order, gives a valid
//! decomposition (edge (a, b) goes to whichever of a, b is visited first, so
//! no twig is empty in a minimum cover). Minimising the number of twigs is
//! therefore minimum connected vertex cover, which is NP-hard in general but
//! trivial for query sizes:
//!
//! * up to [`EXACT_MAX`] query vertices we enumerate vertex subsets by size
//!   and keep the minimum connected covers (the minimum number of twigs);
//! * above that a max-degree greedy in the spirit of Sun et al.: the first
//!   root has the highest degree (ties: the highest `deg(v) / freq(label(v))`,
//!   Sun et al.'s selectivity score), every later root is the bound vertex
//!   with the most uncovered edges (ties: the rarer label, then the smaller
//!   id). Like the greedy for vertex cover it is not always minimal.
//!
//! Among the minimum covers, and among the connected visiting orders of one
//! cover, we pick the one with the smallest estimated total result size
//! Σ_i |R_i| under an independence model (root candidates = label
//! frequency; each leaf multiplies by `avg_degree · freq(label) / |V|`).
//! The first twig is matched without any pruning, so this mostly picks a
//! selective first twig. Orders are built greedily from each possible first
//! root (later roots: most uncovered edges first), not exhaustively.

use csm_graph::Label;
use csm_planner::QueryGraph;

/// Queries up to this many vertices get an exact minimum decomposition.
pub const EXACT_MAX: usize = 16;

/// One STwig: `root` and its `leaves` (ascending query ids).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Twig {
    pub root: usize,
    pub leaves: Vec<usize>,
}

impl Twig {
    /// Query vertices in record order: the root, then the leaves.
    pub fn columns(&self) -> Vec<usize> {
        let mut c = vec![self.root];
        c.extend_from_slice(&self.leaves);
        c
    }
}

/// Data statistics the decomposition's tie-breaking uses.
pub struct DecomposeStats<'a> {
    /// Number of data vertices with a given label.
    pub label_freq: &'a dyn Fn(Label) -> usize,
    /// Number of data vertices (present ones).
    pub num_vertices: usize,
    /// Average data degree.
    pub avg_degree: f64,
}

impl DecomposeStats<'_> {
    fn freq(&self, l: Label) -> f64 {
        (self.label_freq)(l) as f64
    }

    /// Estimated number of matches of a twig when its root may take any
    /// vertex of its label.
    fn twig_estimate(&self, q: &QueryGraph, t: &Twig) -> f64 {
        let n = self.num_vertices.max(1) as f64;
        let mut est = self.freq(q.label(t.root));
        for &l in &t.leaves {
            est *= self.avg_degree * self.freq(q.label(l)) / n;
        }
        est
    }
}

/// Decomposes `q` into an ordered list of STwigs (see the module docs).
pub fn decompose(q: &QueryGraph, stats: &DecomposeStats<'_>) -> Vec<Twig> {
    let n = q.num_vertices();
    if n <= EXACT_MAX {
        let mut best: Option<(f64, Vec<Twig>)> = None;
        for size in 1..=n {
            for cover in subsets_of_size(n, size) {
                if !is_connected_cover(q, cover) {
                    continue;
                }
                for first in bits(cover) {
                    let twigs = order_cover(q, cover, first, stats);
                    let cost: f64 = twigs.iter().map(|t| stats.twig_estimate(q, t)).sum();
                    if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                        best = Some((cost, twigs));
                    }
                }
            }
            if let Some((_, twigs)) = best {
                return twigs;
            }
        }
        unreachable!("the whole vertex set is a connected cover");
    }
    greedy(q, stats)
}

/// Iterates the set bits of `mask`, ascending.
fn bits(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |&i| mask >> i & 1 == 1)
}

/// Every `size`-subset of `0..n` as a bit mask (Gosper's hack).
fn subsets_of_size(n: usize, size: usize) -> impl Iterator<Item = u32> {
    let limit: u64 = 1u64 << n;
    let mut cur: u64 = (1u64 << size) - 1;
    std::iter::from_fn(move || {
        if cur >= limit {
            return None;
        }
        let out = cur as u32;
        let c = cur & cur.wrapping_neg();
        let r = cur + c;
        cur = (((r ^ cur) >> 2) / c) | r;
        Some(out)
    })
}

/// Whether `cover` touches every edge and induces a connected subgraph.
fn is_connected_cover(q: &QueryGraph, cover: u32) -> bool {
    if !q
        .edges()
        .iter()
        .all(|&(a, b, _)| cover >> a & 1 == 1 || cover >> b & 1 == 1)
    {
        return false;
    }
    let start = cover.trailing_zeros() as usize;
    let mut seen = 1u32 << start;
    let mut frontier = seen;
    while frontier != 0 {
        let mut next = 0;
        for u in bits(frontier) {
            next |= q.adj_mask(u) & cover;
        }
        frontier = next & !seen;
        seen |= next;
    }
    seen == cover
}

/// Turns a connected cover into ordered twigs, starting at `first`; later
/// roots are the bound cover vertices with the most uncovered edges.
fn order_cover(q: &QueryGraph, cover: u32, first: usize, stats: &DecomposeStats<'_>) -> Vec<Twig> {
    let n = q.num_vertices();
    // uncovered[u] = neighbours of u whose edge to u is not yet in a twig
    let mut uncovered: Vec<u32> = (0..n).map(|u| q.adj_mask(u)).collect();
    let mut bound = 0u32;
    let mut left = cover;
    let mut twigs = Vec::new();
    let mut next = Some(first);
    while let Some(r) = next {
        left &= !(1 << r);
        let leaves = uncovered[r];
        for l in bits(leaves) {
            uncovered[l] &= !(1 << r);
        }
        uncovered[r] = 0;
        if leaves != 0 {
            twigs.push(Twig {
                root: r,
                leaves: bits(leaves).collect(),
            });
        }
        bound |= (1 << r) | leaves;
        next = bits(left & bound).max_by(|&a, &b| {
            let key = |u: usize| (uncovered[u].count_ones(), -stats.freq(q.label(u)), std::cmp::Reverse(u));
            let (ka, kb) = (key(a), key(b));
            ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(ka.2.cmp(&kb.2))
        });
    }
    debug_assert!(uncovered.iter().all(|&m| m == 0), "cover misses an edge");
    twigs
}

/// Sun et al.'s greedy for large queries.
fn greedy(q: &QueryGraph, stats: &DecomposeStats<'_>) -> Vec<Twig> {
    let n = q.num_vertices();
    let score = |u: usize| q.degree(u) as f64 / stats.freq(q.label(u)).max(1.0);
    let first = (0..n)
        .max_by(|&a, &b| {
            q.degree(a)
                .cmp(&q.degree(b))
                .then(score(a).total_cmp(&score(b)))
                .then(b.cmp(&a))
        })
        .expect("non-empty query");
    let mut uncovered: Vec<u32> = (0..n).map(|u| q.adj_mask(u)).collect();
    let mut bound = 0u32;
    let mut twigs = Vec::new();
    let mut next = Some(first);
    while let Some(r) = next {
        let leaves = uncovered[r];
        for l in bits(leaves) {
            uncovered[l] &= !(1 << r);
        }
        uncovered[r] = 0;
        twigs.push(Twig {
            root: r,
            leaves: bits(leaves).collect(),
        });
        bound |= (1 << r) | leaves;
        next = bits(bound).filter(|&u| uncovered[u] != 0).max_by(|&a, &b| {
            let (da, db) = (uncovered[a].count_ones(), uncovered[b].count_ones());
            da.cmp(&db)
                .then(stats.freq(q.label(b)).total_cmp(&stats.freq(q.label(a))))
                .then(b.cmp(&a))
        });
    }
    twigs
}

/// Checks the decomposition invariants: every query edge in exactly one
/// twig (as root–leaf), every later root bound by an earlier twig.
pub fn validate(q: &QueryGraph, twigs: &[Twig]) -> Result<(), String> {
    let n = q.num_vertices();
    let mut covered = vec![0u32; n];
    let mut bound = 0u32;
    for (i, t) in twigs.iter().enumerate() {
        if i > 0 && bound >> t.root & 1 == 0 {
            return Err(format!("twig {i}'s root {} is not bound by an earlier twig", t.root));
        }
        if t.leaves.is_empty() {
            return Err(format!("twig {i} has no leaves"));
        }
        for &l in &t.leaves {
            if !q.has_edge(t.root, l) {
                return Err(format!("twig {i}: ({}, {l}) is not a query edge", t.root));
            }
            if covered[t.root] >> l & 1 == 1 {
                return Err(format!("edge ({}, {l}) covered twice", t.root));
            }
            covered[t.root] |= 1 << l;
            covered[l] |= 1 << t.root;
            bound |= 1 << l;
        }
        bound |= 1 << t.root;
    }
    for (u, &c) in covered.iter().enumerate() {
        if c != q.adj_mask(u) {
            return Err(format!("edges at {u} not covered exactly"));
        }
    }
    Ok(())
}

/// Size of a minimum connected vertex cover by brute force (for tests and
/// for reporting how far the greedy is from optimal).
pub fn min_twigs(q: &QueryGraph) -> usize {
    let n = q.num_vertices();
    (1..=n)
        .find(|&s| subsets_of_size(n, s).any(|c| is_connected_cover(q, c)))
        .unwrap_or(n)
}

/// The greedy decomposition regardless of size (exposed for comparison).
pub fn decompose_greedy(q: &QueryGraph, stats: &DecomposeStats<'_>) -> Vec<Twig> {
    greedy(q, stats)
}
