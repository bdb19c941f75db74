//! Eq. (3) is unbiased: over many seeds, the mean estimate of each of the
//! most-accessed vertices lies within its 99.9% confidence interval of the
//! exact count, for the merged walk (both splittings) and for independent
//! single walks; deliberately biased estimators fail the same check.

mod common;

use csm_graph::{GraphView, VertexId};
use csm_sampler::{
    exact_access_counts, independent_walks, merged_walk, merged_walk_into, AccessSink, ExecutionTree, Freq, Splitting,
};
use statrs::statistics::Statistics;

const SEEDS: u64 = 400;
const WALKS: u64 = 100;
const TOP: usize = 5;

/// Multiplies each read's weight by `f(level)`.
struct Reweigh<'a, F: Fn(usize) -> f64> {
    inner: &'a mut Freq,
    f: F,
}

impl<F: Fn(usize) -> f64> AccessSink for Reweigh<'_, F> {
    fn access(&mut self, v: VertexId, level: usize, weight: f64) {
        self.inner.add(v, weight * (self.f)(level));
    }
}

/// For each vertex in `top` (with exact count), whether the exact count lies
/// in mean ± z·s/√n of the samples.
fn within_ci(top: &[(VertexId, f64)], samples: &[Vec<f64>]) -> Vec<bool> {
    let z = common::z(0.999);
    top.iter()
        .enumerate()
        .map(|(k, &(_, c))| {
            let xs: Vec<f64> = samples.iter().map(|s| s[k]).collect();
            let (m, sd) = (xs.iter().mean(), xs.iter().std_dev());
            let half = z * sd / (xs.len() as f64).sqrt();
            eprintln!(
                "  C = {c}: mean {m:.2} ± {half:.2} (|z| = {:.2})",
                (m - c).abs() / (half / z)
            );
            (m - c).abs() <= half
        })
        .collect()
}

fn sample(top: &[(VertexId, f64)], f: impl Fn(u64) -> Box<dyn Fn(VertexId) -> f64>) -> Vec<Vec<f64>> {
    (0..SEEDS)
        .map(|seed| {
            let est = f(seed);
            top.iter().map(|&(v, _)| est(v)).collect()
        })
        .collect()
}

#[test]
fn estimators_are_unbiased_and_biased_ones_are_rejected() {
    let s = common::small();
    let tree = ExecutionTree::new(&s.g, &s.plans, &s.delta);
    let exact = exact_access_counts(&tree).counts;
    let top: Vec<(VertexId, f64)> = exact.ranked().into_iter().take(TOP).collect();
    assert_eq!(top.len(), TOP);

    let unbiased: [(&str, Vec<Vec<f64>>); 3] = [
        (
            "merged/multinomial",
            sample(&top, |seed| {
                let e = merged_walk(&tree, WALKS, seed, Splitting::Multinomial);
                Box::new(move |v| e.get(v))
            }),
        ),
        (
            "merged/independent",
            sample(&top, |seed| {
                let e = merged_walk(&tree, WALKS, seed, Splitting::Independent);
                Box::new(move |v| e.get(v))
            }),
        ),
        (
            "single walks",
            sample(&top, |seed| {
                let e = independent_walks(&tree, WALKS, seed);
                Box::new(move |v| e.get(v))
            }),
        ),
    ];
    for (name, samples) in &unbiased {
        eprintln!("{name}");
        let ok = within_ci(&top, samples);
        assert!(
            ok.iter().all(|&b| b),
            "{name}: exact count outside the 99.9% CI for some of {top:?}: {ok:?}"
        );
    }

    let d = tree.max_degree as f64;
    let r = tree.num_roots() as f64;
    let nv = s.g.num_vertices();
    let tree = &tree;
    let biased = |f: fn(usize, f64, f64) -> f64| {
        sample(&top, move |seed| {
            let mut sums = Freq::dense(nv);
            let mut sink = Reweigh {
                inner: &mut sums,
                f: |level| f(level, d, r),
            };
            merged_walk_into(tree, WALKS, seed, Splitting::Multinomial, &mut sink);
            Box::new(move |v| sums.get(v) / WALKS as f64)
        })
    };
    // Eq. (3) with D^i instead of D^(i-1)
    let ok = within_ci(&top, &biased(|_, d, _| d));
    assert!(ok.iter().all(|&b| !b), "D^i variant not rejected: {ok:?}");
    // the first level's weight R dropped (weight D^(i-1) at level 1 only)
    let ok = within_ci(&top, &biased(|level, _, r| if level == 1 { 1.0 / r } else { 1.0 }));
    assert!(
        ok.iter().filter(|&&b| !b).count() >= 3,
        "dropped first-level weight not rejected: {ok:?}"
    );
}
