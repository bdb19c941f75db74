//! Shared fixtures: small generated graphs with one batch staged.
#![allow(dead_code)]

use csm_graph::gen::{self, Labeller, StreamAmount};
use csm_graph::{BatchDelta, DynamicGraph, LocatedUpdate, Strictness};
use csm_planner::{delta_plans, DeltaPlan, GcsmOrder, GraphStats, QueryGraph};
use statrs::distribution::{ContinuousCDF, Normal};

/// A graph with one batch staged, and the query's delta plans.
pub struct Staged {
    pub g: DynamicGraph,
    pub plans: Vec<DeltaPlan>,
    pub delta: BatchDelta,
    pub rest: Vec<LocatedUpdate>,
}

/// Erdős–Rényi graph (`n` vertices, `m` edges, `labels` uniform labels),
/// a stream of `stream` edges (half insertions) of which the first `batch`
/// are staged, and the delta plans of standard query `query` labelled by
/// `qlabels` (or all 0).
#[allow(clippy::too_many_arguments)]
pub fn staged(
    n: usize,
    m: usize,
    labels: u32,
    stream: usize,
    batch: usize,
    query: &str,
    qlabels: Option<&[u32]>,
    seed: u64,
) -> Staged {
    let pairs = gen::erdos_renyi(n, m, seed);
    let lab = if labels <= 1 {
        Labeller::Constant
    } else {
        Labeller::Uniform {
            num_labels: labels,
            seed,
        }
    };
    let data = gen::graph_from_pairs(n, &pairs, gen::assign_labels(n, &lab), None);
    let (g0, updates) = gen::make_stream(&data, StreamAmount::Count(stream), 0.5, seed + 1);
    let mut g = DynamicGraph::from_data(&g0).expect("valid graph");
    let mut qd = gen::standard_query(query).expect("standard query");
    if let Some(l) = qlabels {
        qd = gen::with_labels(&qd, l);
    }
    let q = QueryGraph::from_data(&qd).expect("valid query");
    let plans = delta_plans(&q, &GcsmOrder, &GraphStats::of(&g));
    let delta = g
        .stage(&updates[..batch], "<test>", Strictness::Strict)
        .expect("valid batch")
        .clone();
    Staged {
        g,
        plans,
        delta,
        rest: updates[batch..].to_vec(),
    }
}

/// The small tree the statistical tests use: 60 vertices, 360 edges, the
/// diamond query, a batch of 16 edges.
pub fn small() -> Staged {
    staged(60, 360, 1, 16, 16, "diamond", None, 5)
}

/// Two-sided standard-normal quantile for confidence `conf` (e.g. 0.999).
pub fn z(conf: f64) -> f64 {
    Normal::standard().inverse_cdf(0.5 + conf / 2.0)
}

/// Two-sample Kolmogorov–Smirnov statistic sup |F_a - F_b|.
pub fn ks_statistic(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The asymptotic two-sample KS critical value at level `alpha`.
pub fn ks_critical(n: usize, m: usize, alpha: f64) -> f64 {
    let c = (-(alpha / 2.0).ln() / 2.0).sqrt();
    c * ((n + m) as f64 / (n * m) as f64).sqrt()
}
