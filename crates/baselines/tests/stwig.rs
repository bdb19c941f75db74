//! The `stwig` engine against the brute-force oracle and petgraph's VF2, and
//! its decomposition against the definition (every edge once, later roots
//! bound, fewest twigs by brute force over vertex subsets), and its memory
//! budget against the size of the tables an unbounded run builds.

mod common;

use std::collections::BTreeSet;

use common::*;
use csm_baselines::oracle::{embeddings, BruteForce, Vf2};
use csm_baselines::stwig::decompose::{decompose, DecomposeStats, Twig};
use csm_baselines::stwig::Stwig;
use csm_engine::StaticMatcher;
use csm_graph::{CsrGraph, Edge, GraphData, GraphView};
use csm_planner::QueryGraph;
use proptest::prelude::*;
use rand::Rng;

fn engines() -> Vec<(&'static str, Stwig)> {
    vec![
        ("default", Stwig::new()),
        ("1 thread", Stwig::new().with_threads(1).unwrap()),
        (
            "3 threads, probe pruning",
            Stwig::new().with_threads(3).unwrap().with_probe_pruning(true),
        ),
    ]
}

/// Checks the decomposition against the definition, independently of the
/// engine's own validator.
fn check_decomposition(q: &QueryGraph, twigs: &[Twig]) -> Result<(), TestCaseError> {
    let mut seen = BTreeSet::new();
    let mut bound = BTreeSet::new();
    for (i, t) in twigs.iter().enumerate() {
        prop_assert!(
            i == 0 || bound.contains(&t.root),
            "twig {} root {} not bound: {:?}",
            i,
            t.root,
            twigs
        );
        prop_assert!(!t.leaves.is_empty());
        bound.insert(t.root);
        for &l in &t.leaves {
            prop_assert!(q.has_edge(t.root, l), "({}, {}) not an edge", t.root, l);
            prop_assert!(
                seen.insert((t.root.min(l), t.root.max(l))),
                "edge covered twice: {:?}",
                twigs
            );
            bound.insert(l);
        }
    }
    let all: BTreeSet<_> = q.edges().iter().map(|&(a, b, _)| (a.min(b), a.max(b))).collect();
    prop_assert_eq!(seen, all, "edges not covered: {:?}", twigs);
    // fewest twigs: the smallest vertex set touching every edge and inducing
    // a connected subgraph (each later root adjacent to an earlier one)
    let n = q.num_vertices();
    let mut best = n;
    for mask in 1u32..(1 << n) {
        let size = mask.count_ones() as usize;
        if size >= best
            || !q
                .edges()
                .iter()
                .all(|&(a, b, _)| mask >> a & 1 == 1 || mask >> b & 1 == 1)
        {
            continue;
        }
        let mut reach = 1u32 << mask.trailing_zeros();
        loop {
            let next = (0..n)
                .filter(|&u| reach >> u & 1 == 1)
                .fold(reach, |r, u| r | (q.adj_mask(u) & mask));
            if next == reach {
                break;
            }
            reach = next;
        }
        if reach == mask {
            best = size;
        }
    }
    prop_assert_eq!(twigs.len(), best, "not minimal: {:?}", twigs);
    Ok(())
}

fn stats_for(g: &CsrGraph) -> (Vec<u32>, usize, f64) {
    let labels = g.labels().to_vec();
    let n = labels.len();
    (labels, n, 2.0 * g.num_edges() as f64 / n.max(1) as f64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn counts_equal_brute_force(seed in any::<u64>()) {
        let (g, data, q) = random_case(seed, seed % 2 == 0, 6);
        let want = embeddings(&data, &q).len() as u64;
        for (name, e) in engines() {
            let rep = e.run(&g, &q).unwrap();
            prop_assert_eq!(rep.count, want, "{} seed {} query {:?} twigs {:?}", name, seed, q, rep.twigs);
        }
    }

    /// A memory budget declines (`Unsupported`) exactly when the twig
    /// results R_2 … R_n of an unbounded run take more bytes than it, and
    /// never changes a count it gives.
    #[test]
    fn memory_budget_declines_or_counts_exactly(seed in any::<u64>(), budget in 0usize..4096) {
        let (g, data, q) = random_case(seed, seed % 2 == 0, 6);
        let want = embeddings(&data, &q).len() as u64;
        let full = Stwig::new().run(&g, &q).unwrap();
        // records of the tables built: R_2 … R_n, width 1 + leaves, plus a link
        let table_bytes: u64 = full.relation_sizes[1..]
            .iter()
            .zip(&full.twigs[1..])
            .map(|(&n, t)| n * (t.leaves.len() as u64 + 2) * 4)
            .sum();
        let threads = 1 + (seed % 3) as usize;
        match Stwig::new().with_threads(threads).unwrap().with_budget_bytes(budget).run(&g, &q) {
            Ok(rep) => {
                prop_assert_eq!(rep.count, want, "seed {} budget {}", seed, budget);
                prop_assert!(table_bytes <= budget as u64, "{} bytes of tables under a budget of {}", table_bytes, budget);
            }
            Err(csm_engine::EngineError::Unsupported { reason, .. }) => {
                prop_assert!(table_bytes > budget as u64, "declined {} bytes under a budget of {}: {}", table_bytes, budget, reason);
                prop_assert!(reason.contains("memory budget"), "{}", reason);
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    #[test]
    fn decomposition_is_minimal_and_ordered(seed in any::<u64>()) {
        let mut r = rng(seed);
        let k = r.random_range(2..=9usize);
        let extra = r.random_range(0.0..0.6);
        let q = random_query(&mut r, k, extra, 2, None);
        let (g, _, _) = random_case(seed, false, 6);
        let (labels, n, avg) = stats_for(&g);
        let freq = |l: u32| labels.iter().filter(|&&x| x == l).count();
        let twigs = decompose(&q, &DecomposeStats { label_freq: &freq, num_vertices: n, avg_degree: avg });
        check_decomposition(&q, &twigs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, .. ProptestConfig::default() })]

    /// Dense graphs with one or two labels: many same-label query vertices,
    /// so injectivity inside and across twigs decides most candidates.
    #[test]
    fn repeated_labels_equal_vf2(seed in any::<u64>()) {
        let (g, q, _) = dense_case(seed, 3..=5, 0.5);
        let want = vf2_or_brute_force(&g, &q);
        for (name, e) in engines() {
            prop_assert_eq!(e.count(&g, &q).unwrap(), want, "{} seed {} {:?}", name, seed, q);
        }
    }
}

fn graph(labels: Vec<u32>, edges: &[(u32, u32)]) -> CsrGraph {
    let edges = edges.iter().map(|&(u, v)| Edge::new(u, v, 0)).collect();
    CsrGraph::from_data(&GraphData {
        labels,
        edges,
        edge_labelled: false,
    })
    .unwrap()
}

#[test]
fn same_label_leaves_are_distinct() {
    // star with 20 same-label leaves; query star with 3 same-label leaves:
    // 20·19·18 ordered choices. The product exceeds the split threshold, so
    // the parallel split of a heavy probe root runs too.
    let edges: Vec<(u32, u32)> = (1..=20).map(|v| (0, v)).collect();
    let g = graph([vec![0], vec![1; 20]].concat(), &edges);
    let q = QueryGraph::new(vec![0, 1, 1, 1], &[(0, 1, 0), (0, 2, 0), (0, 3, 0)], false).unwrap();
    for (name, e) in engines() {
        assert_eq!(e.count(&g, &q).unwrap(), 20 * 19 * 18, "{name}");
    }
}

#[test]
fn injectivity_across_twigs() {
    // a one-label path of 4 query vertices on a triangle plus a pendant:
    // twigs share no leaf entries, yet the join must not reuse a vertex.
    let g = graph(vec![0; 4], &[(0, 1), (1, 2), (0, 2), (2, 3)]);
    let q = QueryGraph::new(vec![0; 4], &[(0, 1, 0), (1, 2, 0), (2, 3, 0)], false).unwrap();
    let want = BruteForce.count(&g, &q).unwrap();
    assert_eq!(want, Vf2.count(&g, &q).unwrap());
    for (name, e) in engines() {
        let rep = e.run(&g, &q).unwrap();
        assert!(rep.twigs.len() >= 2, "{name}: path of 4 needs two twigs");
        assert_eq!(rep.count, want, "{name}");
    }
}

#[test]
fn edge_labels_filter_twig_edges() {
    let data = GraphData {
        labels: vec![0, 0, 0],
        edges: vec![Edge::new(0, 1, 1), Edge::new(1, 2, 2), Edge::new(0, 2, 1)],
        edge_labelled: true,
    };
    let g = CsrGraph::from_data(&data).unwrap();
    let q = QueryGraph::new(vec![0, 0, 0], &[(0, 1, 1), (1, 2, 1)], true).unwrap();
    // paths x-y-z with both edges labelled 1: centre 0 (1-0-2, 2-0-1)
    assert_eq!(embeddings(&data, &q).len(), 2);
    assert_eq!(Stwig::new().count(&g, &q).unwrap(), 2);
    // the same query unlabelled sees all 6 paths of the triangle
    let q = QueryGraph::new(vec![0, 0, 0], &[(0, 1, 1), (1, 2, 1)], false).unwrap();
    assert_eq!(Stwig::new().count(&g, &q).unwrap(), 6);
}

#[test]
fn absent_label_gives_zero() {
    let g = graph(vec![0, 0], &[(0, 1)]);
    let q = QueryGraph::new(vec![0, 7], &[(0, 1, 0)], false).unwrap();
    assert_eq!(Stwig::new().count(&g, &q).unwrap(), 0);
}

/// Through the engine registry as a continuous matcher (lifted by
/// `Recount`): per-batch positive/negative equal the oracle's set
/// differences.
#[test]
fn continuous_engine_matches_set_differences() {
    registry_engine_matches_set_differences("stwig", 40);
}

#[global_allocator]
static ALLOC: measure::Counting = measure::Counting;

/// Timing on a large R-MAT graph: `cargo test --release -p csm-baselines
/// --test stwig -- --ignored --nocapture bench_rmat`. Scale and edge count
/// via `CSM_BENCH_SCALE` / `CSM_BENCH_EDGES` (default 2^17 vertices, 1.2M edges);
/// `CSM_BENCH_K` (e.g. `4,5,6`), `CSM_BENCH_SEEDS`, `CSM_BENCH_DENSE=1`.
#[test]
#[ignore]
fn bench_rmat() {
    let (data, g) = measure::bench_graph();
    println!(
        "graph: {} vertices, {} edges, 16 labels",
        g.num_vertices(),
        g.num_edges()
    );
    let e = Stwig::new();
    for (k, seed, dense, q) in measure::bench_queries(&data) {
        let m = measure::measured_beside_cpu(&g, &q, || e.run(&g, &q).unwrap());
        let rep = m.value;
        assert_eq!(rep.count, m.cpu_count, "cpu engine disagrees on {q:?}");
        println!(
            "k={k} dense={dense} seed={seed} edges={} count={} twigs={} |R|={:?} hash={:.1}MiB match={:.3}s join={:.3}s {}",
            q.num_edges(),
            rep.count,
            rep.twigs.len(),
            rep.relation_sizes,
            rep.hash_bytes as f64 / 1048576.0,
            rep.match_seconds,
            rep.join_seconds,
            m.figures,
        );
    }
}
