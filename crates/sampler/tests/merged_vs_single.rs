//! The merged execution (Sec. IV-B) draws its estimates from the same
//! distribution as M independent single walks (Sec. IV-A): a two-sample
//! Kolmogorov–Smirnov test at level 0.001 does not reject, while it does
//! reject wrong variants. Also: the rayon version draws the same numbers.

mod common;

use csm_graph::{GraphView, VertexId};
use csm_sampler::{
    exact_access_counts, independent_walks, merged_walk, merged_walk_par, Estimate, ExecutionTree, Splitting,
};

const SEEDS: u64 = 300;
const WALKS: u64 = 100;
const ALPHA: f64 = 0.001;

/// Statistics of one estimate compared across seeds: the top vertex's
/// estimate and the estimated total number of accesses.
fn stats(e: &Estimate, top: VertexId) -> [f64; 2] {
    [e.get(top), e.sums.total() / e.walks as f64]
}

fn samples(f: impl Fn(u64) -> Estimate, top: VertexId) -> [Vec<f64>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for seed in 0..SEEDS {
        let s = stats(&f(seed), top);
        out[0].push(s[0]);
        out[1].push(s[1]);
    }
    out
}

/// Whether KS rejects "same distribution" for either statistic.
fn rejects(a: &[Vec<f64>; 2], b: &[Vec<f64>; 2]) -> bool {
    let crit = common::ks_critical(a[0].len(), b[0].len(), ALPHA);
    (0..2).any(|k| {
        let d = common::ks_statistic(&a[k], &b[k]);
        eprintln!("  statistic {k}: KS D = {d:.3} (critical {crit:.3})");
        d > crit
    })
}

#[test]
fn merged_matches_independent_single_walks() {
    let s = common::small();
    let tree = ExecutionTree::new(&s.g, &s.plans, &s.delta);
    let exact = exact_access_counts(&tree).counts;
    let top = exact.ranked()[0].0;
    // seeds of the two samples must differ: offset the single walks'
    let single = samples(|seed| independent_walks(&tree, WALKS, seed + 1_000_000), top);
    let merged = samples(|seed| merged_walk(&tree, WALKS, seed, Splitting::Multinomial), top);
    eprintln!("merged (multinomial) vs single walks");
    assert!(
        !rejects(&merged, &single),
        "merged walk differs in distribution from single walks"
    );
    let indep = samples(|seed| merged_walk(&tree, WALKS, seed, Splitting::Independent), top);
    eprintln!("merged (independent binomials) vs single walks");
    assert!(
        !rejects(&indep, &single),
        "independent splitting differs in distribution from single walks"
    );

    // wrong variant 1: a quarter of the walks (still unbiased, but four
    // times the variance): same mean, different distribution
    let quarter = samples(|seed| merged_walk(&tree, WALKS / 4, seed, Splitting::Multinomial), top);
    eprintln!("wrong: M/4 walks");
    assert!(rejects(&quarter, &single), "KS did not detect a four-fold variance");
    // wrong variant 2: a 25% bias (e.g. a mis-normalised weight)
    let inflated = samples(
        |seed| {
            let mut e = merged_walk(&tree, WALKS, seed, Splitting::Multinomial);
            e.sums.scale(1.25);
            e
        },
        top,
    );
    eprintln!("wrong: estimates 25% too high");
    assert!(rejects(&inflated, &single), "KS did not detect a 25% bias");
}

#[test]
fn parallel_draws_the_same_numbers() {
    let s = common::staged(150, 1200, 1, 80, 80, "house", None, 9);
    let tree = ExecutionTree::new(&s.g, &s.plans, &s.delta);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    for split in [Splitting::Multinomial, Splitting::Independent] {
        for walks in [7, 5_000] {
            let a = merged_walk(&tree, walks, 17, split);
            let b = pool.install(|| merged_walk_par(&tree, walks, 17, split));
            assert_eq!(a.nodes, b.nodes);
            let (ra, rb) = (a.ranked(), b.ranked());
            assert_eq!(ra.len(), rb.len());
            for (x, y) in ra.iter().zip(&rb) {
                assert_eq!(x.0, y.0);
                assert!((x.1 - y.1).abs() <= 1e-9 * x.1.abs(), "{x:?} vs {y:?}");
            }
        }
    }
}

#[test]
fn sparse_and_dense_accumulators_agree() {
    // > 2^16 vertices and few walks: merged_walk picks a sparse accumulator
    let s = common::staged(100_000, 300_000, 1, 400, 400, "diamond", None, 2);
    let tree = ExecutionTree::new(&s.g, &s.plans, &s.delta);
    let sparse = merged_walk(&tree, 50, 4, Splitting::Multinomial);
    assert!(!sparse.sums.is_dense());
    let mut dense = csm_sampler::Freq::dense(s.g.num_vertices());
    csm_sampler::merged_walk_into(&tree, 50, 4, Splitting::Multinomial, &mut dense);
    assert!(sparse.sampled_vertices() > 0);
    assert_eq!(sparse.sums.ranked(), dense.ranked());
}
