//! Level-wise enumeration along one search sequence: SUBGENUM (paper 003
//! Algorithm 1, COMPUTE / MATERIALIZE), with the DUPREMOVE filter of
//! Algorithm 3 for the inter-partition search, under the memory scheme of
//! Sec. 5 ("Memory management").
//!
//! Partial instances are *data sequences*: (f(π(1)), …, f(π(l))), stored
//! flat. Breadth-first expansion is chunked: every level gets a buffer of
//! `cap` vertex slots (θ / |V(P)|, θ the intermediate-result reserve); when
//! the buffer for level l + 1 fills, it is expanded to completion and
//! cleared before level l continues, so at most |V(P)| buffers are alive per
//! worker. The last level is counted, not materialised (or handed to a sink
//! when instances are wanted).
//!
//! COMPUTE (Alg. 1 lines 6–9): the candidates of u = π(l) are the
//! neighbours of the backward neighbour with the shortest list, kept when
//! they lie in every other backward neighbour's list (binary search, as the
//! paper's GPU code does), carry u's label and the query edges' labels, and
//! are not yet in the partial instance.

use csm_graph::{CsrGraph, GraphView, VertexId};
use rayon::prelude::*;

use super::plan::SearchSeq;

/// Receives complete instances as data sequences in search order.
pub type Sink<'a> = &'a (dyn Fn(&[VertexId]) + Sync);

/// One enumeration: a graph, a search sequence and the filters.
pub struct Enumerator<'a> {
    pub g: &'a CsrGraph,
    pub seq: &'a SearchSeq,
    /// DUPREMOVE: the partition of each data vertex; `(f(π(1)), f(π(2)))`
    /// is the prime data edge.
    pub dup: Option<&'a [u32]>,
    /// Vertex slots per level buffer.
    pub cap: usize,
    pub sink: Option<Sink<'a>>,
}

/// Counts of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Complete instances.
    pub instances: u64,
    /// Partial instances materialised (levels 2 … |V(P)|−1, excluding seeds).
    pub partials: u64,
}

impl std::ops::Add for Found {
    type Output = Found;
    fn add(self, o: Found) -> Found {
        Found {
            instances: self.instances + o.instances,
            partials: self.partials + o.partials,
        }
    }
}

struct Scratch {
    bufs: Vec<Vec<VertexId>>,
    cands: Vec<Vec<VertexId>>,
    partials: u64,
}

#[inline]
fn order_pair(a: VertexId, b: VertexId) -> (VertexId, VertexId) {
    (a.min(b), a.max(b))
}

impl Enumerator<'_> {
    /// COMPUTE + DUPREMOVE for position `l` given the partial instance `f`
    /// (`f.len() == l`).
    fn compute(&self, l: usize, f: &[VertexId], out: &mut Vec<VertexId>) {
        let g = self.g;
        let labels = g.labels();
        let want = self.seq.labels[l];
        let back = &self.seq.back[l];
        debug_assert!(!back.is_empty(), "every prefix of a search sequence is connected");
        let &(pivot, pivot_el) = back
            .iter()
            .min_by_key(|&&(p, _)| g.degree(f[p]))
            .expect("backward neighbour");
        let nb = g.neighbors(f[pivot]);
        let el = g.edge_labels(f[pivot]);
        let e1 = (f.len() >= 2).then(|| order_pair(f[0], f[1]));
        'cand: for (i, &v) in nb.iter().enumerate() {
            if labels[v as usize] != want {
                continue;
            }
            if let Some(x) = pivot_el {
                if el.get(i).copied().unwrap_or(0) != x {
                    continue;
                }
            }
            for &(p, x) in back {
                if p == pivot {
                    continue;
                }
                let w = f[p];
                match g.neighbors(w).binary_search(&v) {
                    Ok(j) => {
                        if let Some(x) = x {
                            if g.edge_labels(w).get(j).copied().unwrap_or(0) != x {
                                continue 'cand;
                            }
                        }
                    }
                    Err(_) => continue 'cand,
                }
            }
            if f.contains(&v) {
                continue;
            }
            if let (Some(parts), Some(e1)) = (self.dup, e1) {
                // DUPREMOVE (Alg. 3 lines 23–27): no cross edge of the
                // instance may be smaller than the prime data edge
                for &(p, _) in back {
                    let w = f[p];
                    if parts[v as usize] != parts[w as usize] && order_pair(v, w) < e1 {
                        continue 'cand;
                    }
                }
            }
            out.push(v);
        }
    }

    /// Expands `partials` (each of `l` vertices) to complete instances.
    fn expand(&self, l: usize, partials: &[VertexId], s: &mut Scratch) -> u64 {
        let n = self.seq.len();
        if l == n {
            if let Some(sink) = self.sink {
                partials.chunks_exact(n).for_each(sink);
            }
            return (partials.len() / n) as u64;
        }
        let mut total = 0;
        let mut out = std::mem::take(&mut s.bufs[l + 1]);
        let mut cands = std::mem::take(&mut s.cands[l]);
        out.clear();
        let mut full = Vec::new();
        for f in partials.chunks_exact(l) {
            cands.clear();
            self.compute(l, f, &mut cands);
            if l + 1 == n {
                // last level: count (MATERIALIZE only for a sink)
                total += cands.len() as u64;
                if let Some(sink) = self.sink {
                    for &v in &cands {
                        full.clear();
                        full.extend_from_slice(f);
                        full.push(v);
                        sink(&full);
                    }
                }
                continue;
            }
            for &v in &cands {
                if out.len() + l + 1 > self.cap {
                    s.partials += (out.len() / (l + 1)) as u64;
                    total += self.expand(l + 1, &out, s);
                    out.clear();
                }
                out.extend_from_slice(f);
                out.push(v);
            }
        }
        if !out.is_empty() {
            s.partials += (out.len() / (l + 1)) as u64;
            total += self.expand(l + 1, &out, s);
            out.clear();
        }
        s.bufs[l + 1] = out;
        s.cands[l] = cands;
        total
    }

    /// Expands the seed instances (`level` vertices each, flat) in parallel
    /// chunks: at most one level buffer each, and small enough to give
    /// every worker many chunks (seed work is very skewed on power-law graphs).
    pub fn run(&self, level: usize, seeds: &[VertexId]) -> Found {
        let n = self.seq.len();
        let count = seeds.len() / level;
        let fine = count.div_ceil(64 * rayon::current_num_threads()).max(1);
        let per_chunk = (self.cap / level).clamp(1, fine) * level;
        let new_scratch = || Scratch {
            bufs: vec![Vec::new(); n + 1],
            cands: vec![Vec::new(); n + 1],
            partials: 0,
        };
        seeds
            .par_chunks(per_chunk)
            .map_init(new_scratch, |s, chunk| {
                s.partials = 0;
                let instances = self.expand(level, chunk, s);
                Found {
                    instances,
                    partials: s.partials,
                }
            })
            .reduce(Found::default, |a, b| a + b)
    }
}
