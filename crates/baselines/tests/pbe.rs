//! The `pbe` engine against the brute-force oracle: for random and
//! partitioner-made partitions with n = 1, 2, 4, … parts, intra = the
//! oracle's embeddings inside one part, inter = those across parts, and
//! intra + inter = total, as counts and as sets (no instance twice).

mod common;

use std::collections::BTreeSet;

use common::*;
use csm_baselines::oracle::embeddings;
use csm_baselines::pbe::plan::edge_classes;
use csm_baselines::pbe::{partition, Pbe};
use csm_engine::StaticMatcher;
use csm_graph::{CsrGraph, Edge, GraphData, GraphView, VertexId};
use csm_planner::QueryGraph;
use proptest::prelude::*;
use rand::Rng;

/// The oracle's embeddings split by whether all vertices share one part.
fn oracle_split(data: &GraphData, q: &QueryGraph, parts: &[u32]) -> (BTreeSet<Vec<VertexId>>, BTreeSet<Vec<VertexId>>) {
    embeddings(data, q)
        .into_iter()
        .partition(|f| f.iter().all(|&v| parts[v as usize] == parts[f[0] as usize]))
}

fn check(
    pbe: &Pbe,
    g: &CsrGraph,
    data: &GraphData,
    q: &QueryGraph,
    parts: &[u32],
    what: &str,
) -> Result<(), TestCaseError> {
    let (want_intra, want_inter) = oracle_split(data, q, parts);
    let rep = pbe.run_partitioned(g, q, parts).unwrap();
    prop_assert_eq!(
        (rep.intra, rep.inter),
        (want_intra.len() as u64, want_inter.len() as u64),
        "{}: parts {:?} query {:?}",
        what,
        parts,
        q
    );
    prop_assert_eq!(rep.count, rep.intra + rep.inter);
    let (intra, inter) = pbe.embeddings_partitioned(g, q, parts).unwrap();
    let (si, sx): (BTreeSet<_>, BTreeSet<_>) = (intra.iter().cloned().collect(), inter.iter().cloned().collect());
    prop_assert_eq!(si.len(), intra.len(), "{}: an intra instance emitted twice", what);
    prop_assert_eq!(sx.len(), inter.len(), "{}: an inter instance emitted twice", what);
    prop_assert_eq!(si, want_intra, "{}: intra instances differ", what);
    prop_assert_eq!(
        sx,
        want_inter,
        "{}: inter instances differ (parts {:?}, query {:?})",
        what,
        parts,
        q
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// Random partitions into 1, 2, 4 or 8 parts; tiny reserves so that the
    /// chunked level buffers fill and flush many times.
    #[test]
    fn random_partitions_split_exactly(seed in any::<u64>()) {
        let (g, data, q) = random_case(seed, seed % 2 == 1, 5);
        let mut r = rng(seed ^ 0x9e37);
        let reserve = r.random_range(1..24usize);
        let pbe = Pbe::new(1000).with_reserve(reserve).with_threads(1 + (seed % 3) as usize).unwrap();
        for n in [1u32, 2, 4, 8] {
            let parts: Vec<u32> = (0..g.num_vertices()).map(|_| r.random_range(0..n)).collect();
            check(&pbe, &g, &data, &q, &parts, &format!("random n={n}"))?;
        }
    }

    /// The engine's own partitioner at budgets giving 1, 2, 4, … parts:
    /// n follows ⌈|G| / (g − θ)⌉ and every count equals the oracle's.
    #[test]
    fn budgets_do_not_change_counts(seed in any::<u64>()) {
        let (g, data, q) = random_case(seed, seed % 2 == 0, 5);
        let want = embeddings(&data, &q).len() as u64;
        let m = g.num_edges();
        for target in [1usize, 2, 4, 8] {
            let per_part = m.div_ceil(target).max(1);
            let pbe = Pbe::new(per_part + 3).with_reserve(3);
            let parts = pbe.partition(&g).unwrap();
            let n = m.div_ceil(per_part).max(1);
            prop_assert_eq!(pbe.num_parts(m).unwrap(), n);
            prop_assert_eq!(parts.len(), g.num_vertices());
            prop_assert!(parts.iter().all(|&p| (p as usize) < n), "part id out of range: {:?}", parts);
            check(&pbe, &g, &data, &q, &parts, &format!("partitioner n={n}"))?;
            prop_assert_eq!(pbe.count(&g, &q).unwrap(), want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, .. ProptestConfig::default() })]

    /// Dense one- or two-label graphs and queries with repeated labels
    /// (large automorphism groups, so shared execution multiplies a lot).
    #[test]
    fn repeated_labels_equal_vf2(seed in any::<u64>()) {
        let (g, q, mut r) = dense_case(seed, 2..=5, 0.6);
        let want = vf2_or_brute_force(&g, &q);
        let parts: Vec<u32> = (0..g.num_vertices()).map(|_| r.random_range(0..3)).collect();
        let rep = Pbe::new(64).with_reserve(5).run_partitioned(&g, &q, &parts).unwrap();
        prop_assert_eq!(rep.count, want, "seed {} {:?} parts {:?}", seed, q, parts);
    }

    /// Equivalence edge classes: a partition of E(P), and each stored map
    /// is an automorphism taking the representative onto the member.
    #[test]
    fn edge_classes_are_automorphism_orbits(seed in any::<u64>()) {
        let mut r = rng(seed);
        let k = r.random_range(2..=7usize);
        let extra = r.random_range(0.0..0.8);
        let el = (seed % 2 == 0).then_some(2);
        let q = random_query(&mut r, k, extra, 2, el);
        let classes = edge_classes(&q);
        let mut seen = BTreeSet::new();
        for c in &classes {
            for (e, aut) in &c.members {
                prop_assert!(seen.insert((e.0.min(e.1), e.0.max(e.1))));
                let mut img: Vec<usize> = aut.clone();
                img.sort_unstable();
                prop_assert_eq!(img, (0..k).collect::<Vec<_>>(), "not a permutation");
                for a in 0..k {
                    prop_assert_eq!(q.label(a), q.label(aut[a]));
                    for b in 0..k {
                        prop_assert_eq!(q.edge_label(a, b), q.edge_label(aut[a], aut[b]));
                    }
                }
                let (x, y) = (aut[c.rep.0], aut[c.rep.1]);
                prop_assert_eq!((x.min(y), x.max(y)), (e.0.min(e.1), e.0.max(e.1)));
            }
        }
        prop_assert_eq!(seen.len(), q.num_edges());
        // classes are maximal: the class sizes sum over orbits equals the
        // orbit count computed from all automorphisms by brute force
        let mut perm: Vec<usize> = (0..k).collect();
        let mut orbit_of = std::collections::BTreeMap::new();
        let edges: Vec<(usize, usize)> = q.edges().iter().map(|&(a, b, _)| (a.min(b), a.max(b))).collect();
        let mut autos = Vec::new();
        permutations(&mut perm, 0, &mut |p| {
            let ok = (0..k).all(|a| q.label(a) == q.label(p[a]) && (0..k).all(|b| q.edge_label(a, b) == q.edge_label(p[a], p[b])));
            if ok {
                autos.push(p.to_vec());
            }
        });
        for &(a, b) in &edges {
            let orbit: BTreeSet<(usize, usize)> = autos.iter().map(|p| (p[a].min(p[b]), p[a].max(p[b]))).collect();
            orbit_of.insert((a, b), orbit);
        }
        let distinct: BTreeSet<_> = orbit_of.values().cloned().collect();
        prop_assert_eq!(classes.len(), distinct.len());
    }
}

fn permutations(p: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == p.len() {
        f(p);
        return;
    }
    for i in k..p.len() {
        p.swap(k, i);
        permutations(p, k + 1, f);
        p.swap(k, i);
    }
}

fn graph(labels: Vec<u32>, edges: &[(u32, u32)]) -> (CsrGraph, GraphData) {
    let data = GraphData {
        labels,
        edges: edges.iter().map(|&(u, v)| Edge::new(u, v, 0)).collect(),
        edge_labelled: false,
    };
    (CsrGraph::from_data(&data).unwrap(), data)
}

#[test]
fn triangles_across_parts_of_k5() {
    let edges: Vec<(u32, u32)> = (0..5).flat_map(|u| (u + 1..5).map(move |v| (u, v))).collect();
    let (g, _) = graph(vec![0; 5], &edges);
    let q = QueryGraph::new(vec![0; 3], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
    // 10 triangles × 6 automorphic images; parts {0,1,2} | {3,4}: one
    // triangle inside (6 embeddings), the other 9 across (54)
    let rep = Pbe::new(100).run_partitioned(&g, &q, &[0, 0, 0, 1, 1]).unwrap();
    assert_eq!((rep.intra, rep.inter, rep.count), (6, 54, 60));
    assert_eq!(rep.edge_classes, 1, "all triangle edges are equivalent");
}

#[test]
fn single_edge_query_counts_both_orientations() {
    let (g, data) = graph(vec![0, 0, 1, 0], &[(0, 1), (1, 2), (2, 3), (0, 3)]);
    let q = QueryGraph::new(vec![0, 0], &[(0, 1, 0)], false).unwrap();
    let want = embeddings(&data, &q).len() as u64;
    assert_eq!(want, 4);
    for parts in [[0, 0, 0, 0], [0, 1, 0, 1], [0, 1, 2, 3], [9, u32::MAX, 9, 70]] {
        assert_eq!(
            Pbe::new(10).run_partitioned(&g, &q, &parts).unwrap().count,
            want,
            "{parts:?}"
        );
    }
}

#[test]
fn partitioner_finds_the_bridge() {
    // two 6-cliques joined by one edge: 2 parts should cut only the bridge
    let mut edges = Vec::new();
    for base in [0u32, 6] {
        for u in 0..6 {
            for v in u + 1..6 {
                edges.push((base + u, base + v));
            }
        }
    }
    edges.push((5, 6));
    let (g, _) = graph(vec![0; 12], &edges);
    let parts = partition::partition(&g, 2);
    assert_eq!(partition::cross_edges(&g, &parts), vec![(5, 6)], "{parts:?}");
}

/// Through the engine registry as a continuous matcher (lifted by
/// `Recount`): per-batch positive/negative equal the oracle's set
/// differences.
#[test]
fn continuous_engine_matches_set_differences() {
    registry_engine_matches_set_differences("pbe", 40);
}

#[global_allocator]
static ALLOC: measure::Counting = measure::Counting;

/// Timing on a large R-MAT graph: `cargo test --release -p csm-baselines
/// --test pbe -- --ignored --nocapture bench_rmat`. `CSM_BENCH_SCALE`,
/// `CSM_BENCH_EDGES`, `CSM_BENCH_BUDGET` (edges; default |G| / 3, i.e. 4
/// parts with θ = g / 4), `CSM_BENCH_K` (e.g. `4,5,6`), `CSM_BENCH_SEEDS`,
/// `CSM_BENCH_DENSE=1` (induced queries).
#[test]
#[ignore]
fn bench_rmat() {
    let (data, g) = measure::bench_graph();
    let budget = measure::bench_env("CSM_BENCH_BUDGET").unwrap_or(g.num_edges() / 3);
    let pbe = Pbe::new(budget);
    let t = std::time::Instant::now();
    let parts = pbe.partition(&g).unwrap();
    let part_secs = t.elapsed().as_secs_f64();
    println!(
        "graph: {} vertices, {} edges, 16 labels; budget {budget} edges -> {} parts in {part_secs:.2}s, {} cross edges",
        g.num_vertices(),
        g.num_edges(),
        pbe.num_parts(g.num_edges()).unwrap(),
        partition::cross_edges(&g, &parts).len()
    );
    for (k, seed, dense, q) in measure::bench_queries(&data) {
        let m = measure::measured_beside_cpu(&g, &q, || pbe.run_partitioned(&g, &q, &parts).unwrap());
        let rep = m.value;
        assert_eq!(rep.count, m.cpu_count, "cpu engine disagrees on {q:?}");
        println!(
            "k={k} dense={dense} seed={seed} edges={} count={} intra={} inter={} classes={} seeds={} partials={} \
             intra={:.3}s inter={:.3}s {}",
            q.num_edges(),
            rep.count,
            rep.intra,
            rep.inter,
            rep.edge_classes,
            rep.inter_seeds,
            rep.inter_partials,
            rep.intra_seconds,
            rep.inter_seconds,
            m.figures,
        );
    }
}
