//! The phase kernels (GENEVA Alg. 1, 3, 7) and the breadth-first driver.
//!
//! Every phase is one *kernel*: a rayon parallel map over the current
//! partial embeddings (flat rows of `width` VIDs in the plan's column
//! order), each row handled as one GPU warp would handle it:
//!
//! * extension (Alg. 3): read the source VIDs from the row, find their rows
//!   in the phase's edge label partition through the interval index, cut the
//!   target label's range out of each neighbour list (binary search, rows
//!   sorted by (label, VID)), narrow it to the VID bounds the symmetry
//!   restrictions give (binary search again), drop VIDs already in the row,
//!   and run the pattern's generation algorithm ([`super::patterns`]);
//! * elimination (Alg. 7): keep the row iff every edge of the phase is in the
//!   partition (a binary search per edge). Rows are buffered per worker and
//!   appended at the end (the flush Alg. 7 forgets).
//!
//! Between phases all partial embeddings are materialised (breadth-first).
//! The last phase only counts. Memory is bounded the way a GPU with a fixed
//! result buffer would bound it, and the bound holds for the whole run:
//!
//! * `budget_words` is split evenly among the phases that materialise, so
//!   that the blocks alive at once (one per phase, nested) fit it together;
//! * a first parallel pass computes an upper bound of every row's output
//!   (per group, the falling factorial of its candidate range size; 1 for an
//!   elimination), the input is cut into blocks whose bounds fit the phase's
//!   share, and each block runs through the remaining phases before the next
//!   one starts;
//! * a single row whose bound exceeds the share is expanded on its own and
//!   its output is passed on in pieces of the share as it is generated (a
//!   GPU kernel flushing a full result buffer).
//!
//! So the VIDs held at once stay within about twice `budget_words` (a
//! block's per-worker buffers are concatenated before the next phase), plus
//! the per-row bounds (two words a row of the input block).

use std::sync::atomic::{AtomicU64, Ordering};

use csm_graph::{Label, VertexId};
use csm_planner::QueryGraph;
use rayon::prelude::*;

use super::order::{Phase, Plan};
use super::patterns::{Gen, Pattern};
use super::pcsr::{label_range, IntervalPcsr, Partition};

/// Rows per rayon work item.
const GRAIN: usize = 32;

/// One compiled extension phase.
struct ExtKernel<'a> {
    part: Option<&'a Partition>,
    pattern: Pattern,
    /// Source column and label per group.
    src_pos: Vec<usize>,
    glabel: Vec<Label>,
    /// Per target (phase order): group, restriction columns, same-label mask.
    group: Vec<usize>,
    lo_from: Vec<Vec<usize>>,
    hi_from: Vec<Vec<usize>>,
    same_label: Vec<u32>,
    pairs: Vec<(usize, usize)>,
    /// Targets in the first group (NEXT's n).
    n_first: usize,
}

struct ElimKernel<'a> {
    part: Option<&'a Partition>,
    edges: Vec<(usize, usize)>,
}

enum Kernel<'a> {
    Ext(ExtKernel<'a>),
    Elim(ElimKernel<'a>),
}

/// Per-worker scratch (the GPU kernel's shared-memory buffers).
#[derive(Default)]
struct Scratch {
    cands: [Vec<VertexId>; 2],
    lo: Vec<VertexId>,
    hi: Vec<VertexId>,
    flags: Vec<u8>,
}

impl Kernel<'_> {
    fn new_targets(&self) -> usize {
        match self {
            Kernel::Ext(e) => e.group.len(),
            Kernel::Elim(_) => 0,
        }
    }

    /// Upper bound of the rows `apply` emits for `emb`.
    fn bound(&self, labels: &[Label], emb: &[VertexId]) -> u64 {
        let k = match self {
            Kernel::Elim(_) => return 1,
            Kernel::Ext(k) => k,
        };
        let Some(part) = k.part else { return 0 };
        let mut total: u64 = 1;
        for (g, (&sp, &l)) in k.src_pos.iter().zip(&k.glabel).enumerate() {
            let range = label_range(part.neighbours(emb[sp]), labels, l);
            let (mut glo, mut ghi) = (VertexId::MAX, 0);
            let mut size = 0usize;
            for t in (0..k.group.len()).filter(|&t| k.group[t] == g) {
                glo = glo.min(k.lo_from[t].iter().map(|&p| emb[p] + 1).max().unwrap_or(0));
                ghi = ghi.max(k.hi_from[t].iter().map(|&p| emb[p]).min().unwrap_or(VertexId::MAX));
                size += 1;
            }
            let s = range.partition_point(|&x| x < glo);
            let c = range[s..].partition_point(|&x| x < ghi) as u64;
            for i in 0..size as u64 {
                total = total.saturating_mul(c.saturating_sub(i));
            }
        }
        total
    }

    /// Handles one partial embedding; `emit` receives the new columns.
    #[inline]
    fn apply(&self, labels: &[Label], emb: &[VertexId], sc: &mut Scratch, emit: &mut impl FnMut(&[VertexId])) {
        match self {
            Kernel::Elim(k) => {
                let Some(part) = k.part else { return };
                if k.edges.iter().all(|&(a, b)| part.has_edge(labels, emb[a], emb[b])) {
                    emit(&[]);
                }
            }
            Kernel::Ext(k) => {
                let Some(part) = k.part else { return };
                let nt = k.group.len();
                sc.lo.clear();
                sc.hi.clear();
                for t in 0..nt {
                    sc.lo.push(k.lo_from[t].iter().map(|&p| emb[p] + 1).max().unwrap_or(0));
                    sc.hi
                        .push(k.hi_from[t].iter().map(|&p| emb[p]).min().unwrap_or(VertexId::MAX));
                }
                for (g, (&sp, &l)) in k.src_pos.iter().zip(&k.glabel).enumerate() {
                    let c = &mut sc.cands[g];
                    c.clear();
                    let range = label_range(part.neighbours(emb[sp]), labels, l);
                    let (mut glo, mut ghi) = (VertexId::MAX, 0);
                    for t in (0..nt).filter(|&t| k.group[t] == g) {
                        glo = glo.min(sc.lo[t]);
                        ghi = ghi.max(sc.hi[t]);
                    }
                    let s = range.partition_point(|&x| x < glo);
                    let e = s + range[s..].partition_point(|&x| x < ghi);
                    c.extend(range[s..e].iter().copied().filter(|x| !emb.contains(x)));
                }
                let gen = Gen {
                    cands: [&sc.cands[0], &sc.cands[if k.src_pos.len() > 1 { 1 } else { 0 }]],
                    group: &k.group,
                    lo: &sc.lo,
                    hi: &sc.hi,
                    same_label: &k.same_label,
                    pairs: &k.pairs,
                };
                match k.pattern {
                    Pattern::P0 => gen.single(emit),
                    Pattern::P1 => gen.opt_dou_ext(0, 1, &mut [0, 0], 0, &mut sc.flags, emit),
                    Pattern::P2 | Pattern::P3 | Pattern::P4 => gen.dou_ext(&mut sc.flags, emit),
                    Pattern::P5 | Pattern::P6 | Pattern::P7 => gen.n_ext(k.n_first, nt, &mut sc.flags, emit),
                }
            }
        }
    }
}

/// Counters of one run.
#[derive(Debug, Default)]
pub struct RunStats {
    /// Partial embeddings materialised (rows written between phases).
    pub rows_written: AtomicU64,
    /// VIDs written between phases (the global-memory traffic PV saves).
    pub words_written: AtomicU64,
    /// Largest block materialised at once, in VIDs.
    pub peak_words: AtomicU64,
}

/// Runs `plan` and returns the number of partial embeddings that survive the
/// last phase (unique subgraphs when `restrictions` break all symmetry).
pub fn execute(
    pcsr: &IntervalPcsr,
    q: &QueryGraph,
    plan: &Plan,
    restrictions: &[(usize, usize)],
    budget_words: usize,
    stats: &RunStats,
) -> u64 {
    let kernels = compile(pcsr, q, plan, restrictions);
    let Some(Phase::Ext(first)) = plan.phases.first() else {
        unreachable!("plans open with an extension phase")
    };
    let source = first.groups[0].source;
    let sources: &[VertexId] = match pcsr.partition(first.elabel) {
        Some(p) => p.rows_with_label(&pcsr.labels, q.label(source)),
        None => &[],
    };
    // every kernel but the last (which counts) materialises a block
    let share = (budget_words / kernels.len().saturating_sub(1).max(1)).max(64);
    run(&kernels, &pcsr.labels, 0, sources, 1, share, stats)
}

fn compile<'a>(
    pcsr: &'a IntervalPcsr,
    q: &QueryGraph,
    plan: &Plan,
    restrictions: &[(usize, usize)],
) -> Vec<Kernel<'a>> {
    let n = q.num_vertices();
    let mut pos = vec![usize::MAX; n];
    for (i, &u) in plan.order.iter().enumerate() {
        pos[u] = i;
    }
    let mut width = 1;
    let mut out = Vec::new();
    for ph in &plan.phases {
        match ph {
            Phase::Elim(e) => out.push(Kernel::Elim(ElimKernel {
                part: pcsr.partition(e.elabel),
                edges: e.edges.iter().map(|&(a, b)| (pos[a], pos[b])).collect(),
            })),
            Phase::Ext(e) => {
                let targets: Vec<usize> = e.targets().collect();
                let mut group = Vec::new();
                for (g, grp) in e.groups.iter().enumerate() {
                    group.extend(std::iter::repeat_n(g, grp.targets.len()));
                }
                let idx = |u: usize| targets.iter().position(|&t| t == u);
                let mut lo_from = vec![Vec::new(); targets.len()];
                let mut hi_from = vec![Vec::new(); targets.len()];
                let mut pairs = Vec::new();
                for &(a, b) in restrictions {
                    match (idx(a), idx(b)) {
                        (Some(i), Some(j)) => pairs.push((i, j)),
                        (None, Some(j)) if pos[a] < width => lo_from[j].push(pos[a]),
                        (Some(i), None) if pos[b] < width => hi_from[i].push(pos[b]),
                        _ => {}
                    }
                }
                let same_label = targets
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| {
                        (0..targets.len())
                            .filter(|&j| j != i && q.label(targets[j]) == q.label(t))
                            .fold(0u32, |m, j| m | 1 << j)
                    })
                    .collect();
                for (i, &t) in targets.iter().enumerate() {
                    debug_assert_eq!(pos[t], width + i, "targets are appended in phase order");
                }
                out.push(Kernel::Ext(ExtKernel {
                    part: pcsr.partition(e.elabel),
                    pattern: e.pattern,
                    src_pos: e.groups.iter().map(|g| pos[g.source]).collect(),
                    glabel: e.groups.iter().map(|g| g.label).collect(),
                    n_first: e.groups[0].targets.len(),
                    group,
                    lo_from,
                    hi_from,
                    same_label,
                    pairs,
                }));
                width += targets.len();
            }
        }
    }
    out
}

/// Runs kernels `k..` over `input` (rows of `width` VIDs); each phase's
/// block holds at most `budget` VIDs.
fn run(
    kernels: &[Kernel],
    labels: &[Label],
    k: usize,
    input: &[VertexId],
    width: usize,
    budget: usize,
    stats: &RunStats,
) -> u64 {
    let rows = input.len() / width;
    if rows == 0 {
        return 0;
    }
    let kernel = &kernels[k];
    if k + 1 == kernels.len() {
        // the last kernel counts
        return input
            .par_chunks(width * GRAIN)
            .map_init(Scratch::default, |sc, chunk| {
                let mut c = 0u64;
                for emb in chunk.chunks_exact(width) {
                    kernel.apply(labels, emb, sc, &mut |_| c += 1);
                }
                c
            })
            .sum();
    }
    let out_width = width + kernel.new_targets();
    // counting pass: per-row output bounds, then blocks that fit the budget
    let bounds: Vec<u64> = input
        .par_chunks(width)
        .with_min_len(GRAIN)
        .map(|emb| kernel.bound(labels, emb))
        .collect();
    let cap = (budget / out_width).max(1) as u64;
    let mut total = 0;
    let mut start = 0;
    while start < rows {
        let mut end = start;
        let mut acc = 0u64;
        while end < rows && (end == start || acc.saturating_add(bounds[end]) <= cap) {
            acc = acc.saturating_add(bounds[end]);
            end += 1;
        }
        if acc > cap {
            // one row over the share: flush its output in pieces
            total += run_row(kernels, labels, k, &input[start * width..end * width], budget, stats);
        } else if acc > 0 {
            let out = materialise(kernel, labels, &input[start * width..end * width], width);
            total += pass_on(kernels, labels, k, &out, out_width, budget, stats);
        }
        start = end;
    }
    total
}

/// Records `out` (a block of kernel `k`'s output) and runs the rest on it.
fn pass_on(
    kernels: &[Kernel],
    labels: &[Label],
    k: usize,
    out: &[VertexId],
    out_width: usize,
    budget: usize,
    stats: &RunStats,
) -> u64 {
    stats
        .rows_written
        .fetch_add((out.len() / out_width) as u64, Ordering::Relaxed);
    stats.words_written.fetch_add(out.len() as u64, Ordering::Relaxed);
    stats.peak_words.fetch_max(out.len() as u64, Ordering::Relaxed);
    run(kernels, labels, k + 1, out, out_width, budget, stats)
}

/// Kernel `k` on one row whose output bound exceeds the budget: the rows it
/// generates are passed on whenever a budget's worth has accumulated.
fn run_row(kernels: &[Kernel], labels: &[Label], k: usize, emb: &[VertexId], budget: usize, stats: &RunStats) -> u64 {
    let kernel = &kernels[k];
    let out_width = emb.len() + kernel.new_targets();
    let full = (budget / out_width).max(1) * out_width;
    let mut buf = Vec::new();
    let mut total = 0;
    kernel.apply(labels, emb, &mut Scratch::default(), &mut |vals| {
        buf.extend_from_slice(emb);
        buf.extend_from_slice(vals);
        if buf.len() >= full {
            total += pass_on(kernels, labels, k, &buf, out_width, budget, stats);
            buf.clear();
        }
    });
    if !buf.is_empty() {
        total += pass_on(kernels, labels, k, &buf, out_width, budget, stats);
    }
    total
}

/// One extension or elimination kernel, writing its output rows.
fn materialise(kernel: &Kernel, labels: &[Label], input: &[VertexId], width: usize) -> Vec<VertexId> {
    let parts: Vec<Vec<VertexId>> = input
        .par_chunks(width * GRAIN)
        .fold(
            || (Scratch::default(), Vec::new()),
            |(mut sc, mut buf), chunk| {
                for emb in chunk.chunks_exact(width) {
                    kernel.apply(labels, emb, &mut sc, &mut |vals| {
                        buf.extend_from_slice(emb);
                        buf.extend_from_slice(vals);
                    });
                }
                (sc, buf)
            },
        )
        .map(|(_, buf)| buf)
        .collect();
    if parts.len() == 1 {
        return parts.into_iter().next().expect("one part");
    }
    parts.concat()
}
