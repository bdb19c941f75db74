//! `stwig`: STwig decomposition + pipelined right-deep hash join
//! (Lin, Zhang, Wen, Wang & Qi, *Efficient Subgraph Matching using GPUs*;
//! paper 004), run on the CPU with rayon in place of GPU threads.
//!
//! Pipeline of [`Stwig::run`]:
//! 1. [`index::LabelIndex`]: label → vertices, the only index (Sec. 3.2).
//! 2. [`decompose`](mod@decompose): ordered STwigs covering every query edge once, with the
//!    fewest twigs (exact minimum connected vertex cover up to 16 query
//!    vertices, Sun et al.'s greedy above; Sec. 3.2).
//! 3. Twig matching (Algorithm 1): twig 1 from the label index alone; twig
//!    i ≥ 2 with root (and already bound leaf) candidates restricted to the
//!    bindings earlier results give them (the pruning example around
//!    Fig. 1). R_2 … R_n are materialised into chained hash tables
//!    ([`hashjoin::HashTable`], Sec. 4.2), built in parallel.
//! 4. The join (Sec. 4.1, 4.3, Algorithm 2): right-deep, R_1 is the probe
//!    relation, each probe record is walked depth-first through H_2 … H_n
//!    with an iterator stack and one partial result. The probe loop runs in
//!    parallel over R_1's root vertices (heavy roots split over their first
//!    leaf's candidates).
//!
//! R_1 is *streamed*: records are produced by Algorithm 1 as the probe loop
//! asks for them (`GetNewRecordsOrQuit`) and never stored, which is the
//! CPU/GPU pipelining of Sec. 4 taken to its end; the bindings twig 1 gives
//! twig 2's root are computed by a projection pass beforehand (a superset
//! of R_1's column values, exact unless same-label leaves compete for the
//! same vertices). So the memory is the label index, the bindings (one bit
//! per data vertex and query vertex) and H_2 … H_n.
//!
//! Semantics gaps closed (NOTES.md): injectivity within one twig (same-label
//! leaves) and across twigs (checked when a hash record binds a vertex for
//! the first time), edge labels on every twig edge. Counts are embeddings:
//! no symmetry restriction is applied, so automorphic images are separate
//! results, as csm requires.
//!
//! **Memory.** R_2 … R_n are the algorithm's working set: on dense graphs
//! and large queries they can outgrow the machine (a GPU would run out of
//! device memory the same way). The records of the tables together may take
//! at most [`Stwig::with_budget_bytes`] (default [`DEFAULT_BUDGET_BYTES`]);
//! a twig whose result would go past it stops early and the run declines
//! with [`EngineError::Unsupported`], naming the twig and the budget
//! (`csm verify` then reports the engine as skipped).
//!
//! Option [`Stwig::with_probe_pruning`]: generate R_1 under the final
//! bindings (a free semi-join with R_2 … R_n) instead of the paper's
//! unrestricted R_1. Off by default, so that R_1 is what the paper joins.

pub mod decompose;
pub mod hashjoin;
pub mod index;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use csm_engine::{EngineError, StaticMatcher};
use csm_graph::{CsrGraph, GraphView, VertexId};
use csm_planner::QueryGraph;
use rayon::prelude::*;

use decompose::{decompose, DecomposeStats, Twig};
use hashjoin::{probe, Cursor, HashTable};
use index::{BitSet, LabelIndex, TwigMatcher};

/// A root of R_1 whose leaf product exceeds this is split across threads.
const SPLIT_PRODUCT: f64 = 4096.0;

/// Default bound on the bytes of the twig results R_2 … R_n together (1 GiB).
pub const DEFAULT_BUDGET_BYTES: usize = 1 << 30;

/// The STwig engine (see the module docs).
#[derive(Clone)]
pub struct Stwig {
    pool: Option<Arc<rayon::ThreadPool>>,
    probe_pruning: bool,
    budget_bytes: usize,
}

impl Default for Stwig {
    fn default() -> Stwig {
        Stwig {
            pool: None,
            probe_pruning: false,
            budget_bytes: DEFAULT_BUDGET_BYTES,
        }
    }
}

/// What one run did.
#[derive(Clone, Debug, Default)]
pub struct StwigReport {
    /// Embeddings found.
    pub count: u64,
    /// The decomposition, in join order.
    pub twigs: Vec<Twig>,
    /// |R_1| (records probed), |R_2|, …, |R_n|. Stops early when a twig has
    /// no match (the count is 0 then).
    pub relation_sizes: Vec<u64>,
    /// Bytes of the hash tables H_2 … H_n.
    pub hash_bytes: usize,
    /// Seconds spent decomposing and matching twigs / building tables.
    pub match_seconds: f64,
    /// Seconds spent in the join.
    pub join_seconds: f64,
}

impl Stwig {
    /// Runs on the global rayon pool.
    pub fn new() -> Stwig {
        Stwig::default()
    }

    /// Runs on a private pool of `threads` threads (0 = all cores).
    pub fn with_threads(mut self, threads: usize) -> Result<Stwig, EngineError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| EngineError::Other(format!("cannot start thread pool: {e}")))?;
        self.pool = Some(Arc::new(pool));
        Ok(self)
    }

    /// Generate R_1 under the bindings of all twigs (see the module docs).
    pub fn with_probe_pruning(mut self, on: bool) -> Stwig {
        self.probe_pruning = on;
        self
    }

    /// Bound on the bytes of the twig results R_2 … R_n together (see the
    /// module docs).
    pub fn with_budget_bytes(mut self, bytes: usize) -> Stwig {
        self.budget_bytes = bytes;
        self
    }

    /// Matches `q` in `g` and reports the figures of the run.
    pub fn run(&self, g: &CsrGraph, q: &QueryGraph) -> Result<StwigReport, EngineError> {
        match &self.pool {
            Some(p) => p.install(|| self.run_inner(g, q)),
            None => self.run_inner(g, q),
        }
    }

    fn run_inner(&self, g: &CsrGraph, q: &QueryGraph) -> Result<StwigReport, EngineError> {
        let t0 = Instant::now();
        let nq = q.num_vertices();
        let nv = g.num_vertices();
        let index = LabelIndex::build(g);
        let present = g.labels().iter().filter(|&&l| l != csm_graph::ABSENT).count();
        let freq = |l| index.freq(l);
        let stats = DecomposeStats {
            label_freq: &freq,
            num_vertices: present,
            avg_degree: 2.0 * g.num_edges() as f64 / present.max(1) as f64,
        };
        let twigs = decompose(q, &stats);
        debug_assert_eq!(decompose::validate(q, &twigs), Ok(()));
        let mut report = StwigReport {
            twigs: twigs.clone(),
            ..Default::default()
        };

        // Twig 1: roots from the label index; its bindings by projection.
        let m0 = TwigMatcher::new(q, &twigs[0]);
        let unbound: Vec<Option<BitSet>> = vec![None; nq];
        let (roots0, proj0) = project_first(g, &m0, index.vertices(q.label(twigs[0].root)), &unbound, nv);
        if roots0.is_empty() {
            report.relation_sizes.push(0);
            report.match_seconds = t0.elapsed().as_secs_f64();
            return Ok(report);
        }
        let mut bindings: Vec<Option<BitSet>> = vec![None; nq];
        for (qv, set) in twigs[0].columns().into_iter().zip(proj0) {
            bindings[qv] = Some(set);
        }

        // Twigs 2..n: restricted matching, projections, hash tables.
        let mut bound: u32 = twigs[0].columns().iter().fold(0, |m, &u| m | 1 << u);
        let mut tables = Vec::with_capacity(twigs.len() - 1);
        let mut sizes = vec![0u64];
        let mut words_left = self.budget_bytes / 4;
        for (i, twig) in twigs.iter().enumerate().skip(1) {
            let m = TwigMatcher::new(q, twig);
            let roots = bindings[twig.root]
                .as_ref()
                .expect("root bound by an earlier twig")
                .to_vec();
            let pool = match_twig(g, &m, &roots, &bindings, words_left).map_err(|e| match e {
                TwigError::Budget => EngineError::Unsupported {
                    engine: "stwig".into(),
                    reason: format!(
                        "the result of twig {} of {} would take the hash tables past the memory budget of {} \
                         (Stwig::with_budget_bytes, `csm --memory-budget`)",
                        i + 1,
                        twigs.len(),
                        bytes_text(self.budget_bytes)
                    ),
                },
                TwigError::Indices(records) => EngineError::Unsupported {
                    engine: "stwig".into(),
                    reason: format!("twig result of {records} records exceeds 32-bit record indices"),
                },
            })?;
            words_left -= pool.len();
            let stride = m.width() + 1;
            let len = pool.len() / stride;
            sizes.push(len as u64);
            if len == 0 {
                report.relation_sizes = sizes;
                report.hash_bytes = tables.iter().map(HashTable::memory_bytes).sum();
                report.match_seconds = t0.elapsed().as_secs_f64();
                return Ok(report);
            }
            let cols = twig.columns();
            for (p, &qv) in cols.iter().enumerate() {
                let mut set = BitSet::new(nv);
                for rec in pool.chunks(stride) {
                    set.insert(rec[p]);
                }
                match &mut bindings[qv] {
                    Some(b) => b.intersect_with(&set),
                    slot => *slot = Some(set),
                }
            }
            let key = cols
                .iter()
                .enumerate()
                .filter(|&(_, &qv)| bound >> qv & 1 == 1)
                .map(|(p, &qv)| (p, qv))
                .collect();
            let new = cols
                .iter()
                .enumerate()
                .filter(|&(_, &qv)| bound >> qv & 1 == 0)
                .map(|(p, &qv)| {
                    let distinct = (0..nq)
                        .filter(|&o| bound >> o & 1 == 1 && q.label(o) == q.label(qv))
                        .collect();
                    (p, qv, distinct)
                })
                .collect();
            tables.push(HashTable::build(m.width(), key, new, pool));
            for &qv in &cols {
                bound |= 1 << qv;
            }
        }
        report.hash_bytes = tables.iter().map(HashTable::memory_bytes).sum();
        report.match_seconds = t0.elapsed().as_secs_f64();

        // The join: R_1 streamed through Algorithm 2, in parallel.
        let t1 = Instant::now();
        let leaf_bindings = if self.probe_pruning { &bindings } else { &unbound };
        let cols0 = twigs[0].columns();
        let ntab = tables.len();
        let (count, probed) = roots0
            .par_iter()
            .with_min_len(16)
            .map_init(
                || (Cursor::new(nq, ntab), Vec::new(), Vec::new()),
                |(cur, sets, rec), &n| {
                    if self.probe_pruning && !bindings[twigs[0].root].as_ref().is_some_and(|b| b.contains(n)) {
                        return (0, 0);
                    }
                    if !m0.leaf_sets(g, n, leaf_bindings, sets) || !m0.feasible(sets) {
                        return (0, 0);
                    }
                    let product: f64 = sets.iter().map(|s| s.len() as f64).product();
                    if product > SPLIT_PRODUCT && rayon::current_num_threads() > 1 && sets[0].len() > 1 {
                        let sets: &Vec<Vec<VertexId>> = sets;
                        let step = sets[0].len().div_ceil(4 * rayon::current_num_threads()).max(1);
                        return sets[0]
                            .par_chunks(step)
                            .map_init(
                                || (Cursor::new(nq, ntab), Vec::new()),
                                |(cur, rec), chunk| {
                                    let (mut c, mut p) = (0u64, 0u64);
                                    m0.for_each_record(n, sets, Some(chunk), rec, &mut |r| {
                                        p += 1;
                                        c += probe(&tables, cur, &cols0, r);
                                    });
                                    (c, p)
                                },
                            )
                            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
                    }
                    let (mut c, mut p) = (0u64, 0u64);
                    m0.for_each_record(n, sets, None, rec, &mut |r| {
                        p += 1;
                        c += probe(&tables, cur, &cols0, r);
                    });
                    (c, p)
                },
            )
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        sizes[0] = probed;
        report.count = count;
        report.relation_sizes = sizes;
        report.join_seconds = t1.elapsed().as_secs_f64();
        Ok(report)
    }
}

/// Roots of twig 1 that have a feasible record, and the projection of its
/// result onto each column (root, leaves), as bit sets.
fn project_first(
    g: &CsrGraph,
    m: &TwigMatcher<'_>,
    cands: &[VertexId],
    bindings: &[Option<BitSet>],
    nv: usize,
) -> (Vec<VertexId>, Vec<BitSet>) {
    let words = nv.div_ceil(64);
    let proj: Vec<Vec<AtomicU64>> = (0..m.width())
        .map(|_| (0..words).map(|_| AtomicU64::new(0)).collect())
        .collect();
    let set = |col: usize, v: VertexId| {
        proj[col][v as usize >> 6].fetch_or(1 << (v & 63), Ordering::Relaxed);
    };
    let roots: Vec<VertexId> = cands
        .par_iter()
        .with_min_len(64)
        .map_init(Vec::new, |sets, &n| {
            if m.leaf_sets(g, n, bindings, sets) && m.feasible(sets) {
                set(0, n);
                for (j, s) in sets.iter().enumerate() {
                    for &x in s {
                        set(j + 1, x);
                    }
                }
                Some(n)
            } else {
                None
            }
        })
        .flatten()
        .collect();
    let proj = proj
        .into_iter()
        .map(|col| {
            let mut b = BitSet::new(nv);
            for (i, w) in col.into_iter().enumerate() {
                b.set_word(i, w.into_inner());
            }
            b
        })
        .collect();
    (roots, proj)
}

/// Words a worker writes between two looks at the shared count.
const PUBLISH_WORDS: usize = 1 << 16;

/// Why a twig result was not built.
enum TwigError {
    /// It would hold more words than were left of the budget.
    Budget,
    /// It has this many records, too many for 32-bit record indices.
    Indices(usize),
}

/// "1 GiB", "300 MiB", "12 KiB", "100 B".
fn bytes_text(b: usize) -> String {
    const UNITS: [(&str, usize); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    UNITS
        .iter()
        .find(|&&(_, u)| b >= u)
        .map_or(format!("{b} B"), |&(name, u)| {
            format!("{} {name}", (b as f64 / u as f64 * 10.0).round() / 10.0)
        })
}

/// R_i for a later twig: records (root, leaves…) plus one link slot each,
/// laid out for [`HashTable::build`]; at most `limit` words. Workers add
/// what they hold to a shared count every [`PUBLISH_WORDS`] words and stop
/// writing once the count is over the limit.
fn match_twig(
    g: &CsrGraph,
    m: &TwigMatcher<'_>,
    roots: &[VertexId],
    bindings: &[Option<BitSet>],
    limit: usize,
) -> Result<Vec<u32>, TwigError> {
    let words = AtomicUsize::new(0);
    let over = || words.load(Ordering::Relaxed) > limit;
    let parts: Vec<Vec<u32>> = roots
        .par_chunks(64)
        .map_init(
            || (Vec::new(), Vec::new()),
            |(sets, rec), chunk| {
                let mut out = Vec::new();
                let mut published = 0;
                for &n in chunk {
                    if over() {
                        break;
                    }
                    if m.leaf_sets(g, n, bindings, sets) && m.feasible(sets) {
                        let mut full = false;
                        m.for_each_record(n, sets, None, rec, &mut |r| {
                            if full {
                                return;
                            }
                            out.extend_from_slice(r);
                            out.push(hashjoin::NONE);
                            if out.len() - published >= PUBLISH_WORDS {
                                words.fetch_add(out.len() - published, Ordering::Relaxed);
                                published = out.len();
                                full = over();
                            }
                        });
                    }
                }
                words.fetch_add(out.len() - published, Ordering::Relaxed);
                out
            },
        )
        .collect();
    if over() {
        return Err(TwigError::Budget);
    }
    let total: usize = parts.iter().map(Vec::len).sum();
    let records = total / (m.width() + 1);
    if records >= hashjoin::NONE as usize {
        return Err(TwigError::Indices(records));
    }
    let mut pool = Vec::with_capacity(total);
    for p in parts {
        pool.extend(p);
    }
    Ok(pool)
}

impl StaticMatcher for Stwig {
    fn name(&self) -> &str {
        "stwig"
    }
    fn count(&self, g: &CsrGraph, q: &QueryGraph) -> Result<u64, EngineError> {
        Ok(self.run(g, q)?.count)
    }
}
