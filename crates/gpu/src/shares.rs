//! How much of a neighbour list a plan level can use: the share of a
//! label-`a` vertex's list entries whose other end has label `b`.
//!
//! The kernel defers a heavy node (match v5) when the list it iterates is
//! long. What makes a node heavy is the number of candidates the list
//! gives, and a level keeps only the entries with its vertex label. With 8
//! uniform labels and every edge in the graph, about an eighth of a list
//! are candidates; on a graph that holds only the edges of the query's
//! label triples (`csm_engine::EdgesApart`) most of it can be. So a
//! threshold in list elements (1,024 in match v6) defers 8 times fewer
//! nodes of equal work on the second graph. Match v11 writes each level's
//! share into its plan block ([`encode_shares`]; not the last level's, see
//! there) and the kernel defers from `MatcherConfig::defer_wanted / share`
//! elements.

use std::collections::HashMap;

use csm_graph::{GraphView, Label, Version, VertexId, ABSENT};
use csm_planner::Plan;
use rayon::prelude::*;

use crate::plan::{Shape, PLAN_HEADER};

/// Word of a level block that holds the level's share (16.16 fixed point;
/// 0: unknown, the kernel then uses `defer_min`).
pub const L_SHARE: usize = 3;

/// Per vertex label `a`: how many list entries of label-`a` vertices were
/// seen, and how many of them per label of the other end.
#[derive(Clone, Debug, Default)]
pub struct LabelShares {
    from: HashMap<Label, (u64, HashMap<Label, u64>)>,
}

impl LabelShares {
    /// Vertices read at most: every `n / SAMPLE_VERTICES`-th vertex of a
    /// larger graph (all its list entries), so that the pass stays a few
    /// milliseconds on graphs of any size.
    pub const SAMPLE_VERTICES: usize = 1 << 18;

    /// The shares of `g`'s lists (version New), from a sample of its
    /// vertices (see [`LabelShares::SAMPLE_VERTICES`]).
    pub fn of<G: GraphView + Sync + ?Sized>(g: &G) -> LabelShares {
        let n = g.num_vertices();
        let stride = n.div_ceil(Self::SAMPLE_VERTICES).max(1);
        let labels = g.labels();
        let label = |v: VertexId| labels.get(v as usize).copied().filter(|&l| l != ABSENT);
        let counts = (0..n.div_ceil(stride))
            .into_par_iter()
            .fold(HashMap::<(Label, Label), u64>::new, |mut m, i| {
                let v = (i * stride) as VertexId;
                if let Some(a) = label(v) {
                    for (w, _) in g.nbrs(v, Version::New).iter() {
                        if let Some(b) = label(w) {
                            *m.entry((a, b)).or_default() += 1;
                        }
                    }
                }
                m
            })
            .reduce(HashMap::new, |mut x, y| {
                for (k, c) in y {
                    *x.entry(k).or_default() += c;
                }
                x
            });
        let mut from: HashMap<Label, (u64, HashMap<Label, u64>)> = HashMap::new();
        for ((a, b), c) in counts {
            let e = from.entry(a).or_default();
            e.0 += c;
            *e.1.entry(b).or_default() += c;
        }
        LabelShares { from }
    }

    /// The share of label-`a` vertices' list entries that end at a label-`b`
    /// vertex (`None`: no entry of a label-`a` vertex was seen).
    pub fn share(&self, a: Label, b: Label) -> Option<f64> {
        let (total, per) = self.from.get(&a)?;
        (*total > 0).then(|| per.get(&b).copied().unwrap_or(0) as f64 / *total as f64)
    }
}

/// `s` (in 0..=1) in 16.16 fixed point, at least 1 (0 means unknown).
pub fn share_word(s: f64) -> u32 {
    ((s.clamp(0.0, 1.0) * 65_536.0).round() as u32).max(1)
}

/// Writes each level's share into word [`L_SHARE`] of its block in `words`
/// (`plan`'s encoded words, [`crate::plan::Shape::plan_words`] of them): for a level that reads lists,
/// the mean over its reads of the share of the read vertex's label that
/// has the level's label; 1 when the plan checks no labels (every entry is
/// a candidate). Levels with no read, or whose labels were never seen,
/// keep 0, and so does the last level: it is counted in one intersection,
/// so deferring it only moves that intersection to other warps, whose
/// slices each resolve the level's lists again. On Graph500-skewed R-MAT
/// that cost more than it saved (docs/GPU_NOTES.md, match v11, run 40), so
/// the last level defers by length (`defer_min`) as before. Edge labels
/// are not counted: a read that requires one may keep less than its share
/// says.
pub fn encode_shares(plan: &Plan, shares: &LabelShares, words: &mut [u32]) {
    encode_shares_with(plan, shares, words, false);
}

/// [`encode_shares`], with the last level's share written too when
/// `last_level` (match v11's first cut, runs 35-39; for comparisons).
pub fn encode_shares_with(plan: &Plan, shares: &LabelShares, words: &mut [u32], last_level: bool) {
    let shape = Shape::of_words(words).expect("an encoded plan's build tag");
    debug_assert!(words.len() >= shape.plan_words());
    for (d, level) in plan.levels.iter().enumerate() {
        let s = if level.reads.is_empty() || (d + 1 == plan.levels.len() && !last_level) {
            None
        } else if !plan.check_labels {
            Some(1.0)
        } else {
            let seen: Vec<f64> = level
                .reads
                .iter()
                .filter_map(|r| shares.share(plan.levels[r.pos as usize].label, level.label))
                .collect();
            (!seen.is_empty()).then(|| seen.iter().sum::<f64>() / seen.len() as f64)
        };
        words[PLAN_HEADER + d * shape.level_words() + L_SHARE] = s.map_or(0, share_word);
    }
}

/// The deferral threshold the kernel derives from a level's share word
/// (`match_kernel`'s `defer_node`; for tests and logs): `wanted / share`
/// elements, at least 32, or `defer_min` when the share is unknown or
/// `wanted` is 0.
pub fn defer_threshold(share_word: u32, wanted: u32, defer_min: u32) -> u64 {
    if wanted == 0 || share_word == 0 {
        return u64::from(defer_min);
    }
    ((u64::from(wanted) << 16).div_ceil(u64::from(share_word))).max(32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{QueryPlans, LEVEL_WORDS, PLAN_WORDS};
    use csm_graph::{DynamicGraph, Edge, GraphData};
    use csm_planner::{GcsmOrder, GraphStats, QueryGraph};

    /// A small graph with uneven label pairs, and its edges and labels.
    fn small_graph() -> (DynamicGraph, Vec<Label>, Vec<Edge>) {
        let labels: Vec<Label> = (0..60u32).map(|v| v % 3 + (v % 7 == 0) as u32 * 5).collect();
        let mut edges = Vec::new();
        for u in 0..60u32 {
            for v in (u + 1)..60 {
                if (u * 31 + v * 17) % 5 == 0 {
                    edges.push(Edge::new(u, v, 0));
                }
            }
        }
        let g = DynamicGraph::from_data(&GraphData {
            labels: labels.clone(),
            edges: edges.clone(),
            edge_labelled: false,
        })
        .unwrap();
        (g, labels, edges)
    }

    /// The share by brute force: every list entry of every label-`a` vertex.
    fn brute_share(labels: &[Label], edges: &[Edge], a: Label, b: Label) -> Option<f64> {
        let ends = |b: Option<Label>| -> usize {
            edges
                .iter()
                .flat_map(|e| [(e.u, e.v), (e.v, e.u)])
                .filter(|&(x, y)| labels[x as usize] == a && b.map_or(true, |b| labels[y as usize] == b))
                .count()
        };
        let total = ends(None);
        (total > 0).then(|| ends(Some(b)) as f64 / total as f64)
    }

    /// The sampled pass reads every vertex of a small graph: its shares
    /// equal the brute-force ones.
    #[test]
    fn shares_equal_a_brute_force_count() {
        let (g, labels, edges) = small_graph();
        let s = LabelShares::of(&g);
        let mut all = labels.clone();
        all.sort_unstable();
        all.dedup();
        for &a in &all {
            for &b in &all {
                assert_eq!(s.share(a, b), brute_share(&labels, &edges, a, b), "labels {a} -> {b}");
            }
        }
        assert_eq!(s.share(99, 0), None);
    }

    /// Every level that reads lists but the last carries the mean
    /// brute-force share of its reads; levels without reads and the last
    /// carry 0 (the last one too with `last_level`); a plan that checks no
    /// labels carries 1.
    #[test]
    fn plans_carry_their_levels_shares() {
        let (g, labels, edges) = small_graph();
        let shares = LabelShares::of(&g);
        let q = QueryGraph::new(vec![0, 1, 2, 0], &[(0, 1, 0), (1, 2, 0), (2, 0, 0), (2, 3, 0)], false).unwrap();
        let mut qp = QueryPlans::new(&q, &GcsmOrder, &GraphStats::of(&g), true).unwrap();
        qp.set_label_shares(&shares);
        for (p, w) in qp.plans.iter().zip(qp.encoded.chunks(PLAN_WORDS)) {
            assert!(p.plan.check_labels);
            let mut every = w.to_vec();
            encode_shares_with(&p.plan, &shares, &mut every, true);
            for (d, level) in p.plan.levels.iter().enumerate() {
                let at = PLAN_HEADER + d * LEVEL_WORDS + L_SHARE;
                let (word, last) = (w[at], d + 1 == p.plan.depth());
                if level.reads.is_empty() {
                    assert_eq!((word, every[at]), (0, 0), "level {d} reads nothing");
                    continue;
                }
                if last {
                    assert_eq!(word, 0, "the last level defers by length");
                } else {
                    assert_eq!(word, every[at], "level {d}");
                }
                let word = every[at];
                let s: Vec<f64> = level
                    .reads
                    .iter()
                    .map(|r| brute_share(&labels, &edges, p.plan.levels[r.pos as usize].label, level.label).unwrap())
                    .collect();
                assert_eq!(word, share_word(s.iter().sum::<f64>() / s.len() as f64), "level {d}");
            }
        }
        // one label throughout: no label checks, every entry a candidate
        let one = DynamicGraph::from_data(&GraphData {
            labels: vec![0; 60],
            edges,
            edge_labelled: false,
        })
        .unwrap();
        let q = QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (1, 2, 0), (2, 0, 0)], false).unwrap();
        let mut qp = QueryPlans::new(&q, &GcsmOrder, &GraphStats::of(&one), true).unwrap();
        qp.set_label_shares(&LabelShares::of(&one));
        for (p, w) in qp.plans.iter().zip(qp.encoded.chunks(PLAN_WORDS)) {
            assert!(!p.plan.check_labels);
            for (d, level) in p.plan.levels.iter().enumerate() {
                let want = if level.reads.is_empty() || d + 1 == p.plan.depth() {
                    0
                } else {
                    1 << 16
                };
                assert_eq!(w[PLAN_HEADER + d * LEVEL_WORDS + L_SHARE], want, "level {d}");
            }
        }
    }

    #[test]
    fn thresholds_follow_the_share() {
        // an eighth: match v6's 1,024 from 128 wanted candidates
        assert_eq!(defer_threshold(share_word(0.125), 128, 1024), 1024);
        assert_eq!(defer_threshold(share_word(1.0), 128, 1024), 128);
        assert_eq!(defer_threshold(share_word(0.5), 128, 1024), 256);
        // unknown share or no wanted count: the global threshold
        assert_eq!(defer_threshold(0, 128, 1024), 1024);
        assert_eq!(defer_threshold(share_word(0.5), 0, 1024), 1024);
        // never below 32, and a share of 0 still gives a finite threshold
        assert_eq!(defer_threshold(share_word(1.0), 8, 1024), 32);
        assert_eq!(share_word(0.0), 1);
        assert_eq!(defer_threshold(share_word(0.0), 128, 1024), 128 << 16);
    }
}
