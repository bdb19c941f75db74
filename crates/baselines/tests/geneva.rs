//! GENEVA against the independent oracles: static counts equal brute force
//! (and VF2) on small random labelled graphs, with and without edge labels,
//! for random connected queries and symmetric ones (cycles, cliques, stars),
//! in every mode (PV / SV, symmetry breaking on / off, tiny memory budgets
//! that force blocked breadth-first execution and rows flushed in pieces,
//! and no block over the budget); and, lifted by `Recount`,
//! per-batch positive / negative equal the oracle's set differences.

mod common;

use common::*;
use csm_baselines::geneva::{Geneva, IntervalPcsr, Pattern, Phase};
use csm_baselines::oracle::{BruteForce, Vf2};
use csm_engine::{ContinuousMatcher, Recount, StaticMatcher};
use csm_graph::CsrGraph;
use csm_planner::QueryGraph;
use proptest::prelude::*;
use rand::Rng;

fn engines() -> Vec<Geneva> {
    let base = Geneva::new(2).expect("pool");
    vec![
        base.clone(),
        base.clone().with_multi_vertex(false),
        base.clone().with_symmetry_breaking(false),
        base.clone().with_budget_words(64),
        base.with_multi_vertex(false)
            .with_symmetry_breaking(false)
            .with_budget_words(8),
    ]
}

fn check_static(seed: u64, symmetric: bool) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let vl = r.random_range(1..=3u32);
    let el = seed.is_multiple_of(3).then_some(2);
    let (n, p) = (r.random_range(5..13u32), r.random_range(0.2..0.7));
    let model = random_graph(&mut r, n, p, vl, el);
    let q = if symmetric {
        symmetric_query(&mut r, vl, el, 7)
    } else {
        let k = r.random_range(2..=6usize);
        random_query(&mut r, k, 0.3, vl, el)
    };
    let g = CsrGraph::from_data(&model.to_data()).expect("valid");
    let expected = BruteForce.count(&g, &q).expect("small");
    for e in engines() {
        let report = e.run(&g, &q);
        let got = report.embeddings;
        // no block outgrows the budget, not even one row's whole output
        prop_assert!(
            report.peak_words <= e.budget_words.max(64) as u64,
            "block of {} VIDs over a budget of {}",
            report.peak_words,
            e.budget_words
        );
        prop_assert_eq!(
            got,
            expected,
            "seed {} mv {} sym {} budget {} query {:?}",
            seed,
            e.multi_vertex,
            e.symmetry_breaking,
            e.budget_words,
            q
        );
    }
    // a query whose edges carry labels matched against an unlabelled graph
    if el.is_none() && seed % 4 == 1 {
        let ql = QueryGraph::new(q.labels().to_vec(), q.edges(), true).expect("valid");
        prop_assert_eq!(
            Geneva::new(1).unwrap().count(&g, &ql).unwrap(),
            BruteForce.count(&g, &ql).unwrap()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]

    #[test]
    fn random_queries_equal_brute_force(seed in any::<u64>()) {
        check_static(seed, false)?;
    }

    #[test]
    fn symmetric_queries_equal_brute_force(seed in any::<u64>()) {
        check_static(seed, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, .. ProptestConfig::default() })]

    /// Lifted by Recount: exact positive / negative on mixed batches.
    #[test]
    fn recount_matches_set_differences(seed in any::<u64>()) {
        let mut r = rng(seed);
        let vl = r.random_range(1..=3u32);
        let el = (seed % 2 == 0).then_some(2);
        let n = r.random_range(5..11u32);
        let mut model = random_graph(&mut r, n, 0.4, vl, el);
        let k = r.random_range(2..=5usize);
        let q = random_query(&mut r, k, 0.4, vl, el);
        let mut eng = Recount::new(Geneva::new(1).unwrap());
        eng.init(&model.to_data(), &q).unwrap();
        let spec = StreamSpec { batches: 3, max_len: 10, vlabels: vl, elabels: el, vertex_ops: true };
        check_set_differences(&mut eng, &mut r, &mut model, &q, spec)
            .map_err(|e| TestCaseError::fail(format!("seed {seed}: {e}")))?;
    }
}

#[test]
fn clique_counts_and_vf2_agree() {
    // K5 data graph, triangle and K4 queries, one label
    let model = random_graph(&mut rng(7), 5, 1.0, 1, None);
    let g = CsrGraph::from_data(&model.to_data()).unwrap();
    let tri = QueryGraph::new(vec![0; 3], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
    let k4 = QueryGraph::new(
        vec![0; 4],
        &[(0, 1, 0), (0, 2, 0), (0, 3, 0), (1, 2, 0), (1, 3, 0), (2, 3, 0)],
        false,
    )
    .unwrap();
    for e in engines() {
        assert_eq!(e.count(&g, &tri).unwrap(), 60);
        assert_eq!(e.count(&g, &k4).unwrap(), 120);
    }
    assert_eq!(Vf2.count(&g, &tri).unwrap(), 60);
    let rep = Geneva::new(1).unwrap().run(&g, &k4);
    assert_eq!((rep.unique, rep.embeddings), (5, 120));
}

#[test]
fn sv_mode_has_no_pv_phases_and_writes_more() {
    // a 4-cycle with a 3-leaf star: PV uses P1 on the cycle and P5 on the star
    let q = QueryGraph::new(
        vec![0, 0, 0, 0, 1, 1, 1],
        &[
            (0, 1, 0),
            (1, 2, 0),
            (2, 3, 0),
            (3, 0, 0),
            (0, 4, 0),
            (0, 5, 0),
            (0, 6, 0),
        ],
        false,
    )
    .unwrap();
    let mut r = rng(3);
    let model = random_graph(&mut r, 14, 0.5, 2, None);
    let g = CsrGraph::from_data(&model.to_data()).unwrap();
    let pv = Geneva::new(1).unwrap().run(&g, &q);
    let sv = Geneva::new(1).unwrap().with_multi_vertex(false).run(&g, &q);
    assert_eq!(pv.embeddings, BruteForce.count(&g, &q).unwrap());
    assert_eq!(pv.embeddings, sv.embeddings);
    assert!(pv.pv_phases >= 2, "{pv:?}");
    assert_eq!(sv.pv_phases, 0);
    assert!(sv.phases > pv.phases);
    let plan = Geneva::new(1).unwrap().plan(&IntervalPcsr::build(&g, false), &q);
    assert!(
        plan.phases
            .iter()
            .any(|p| matches!(p, Phase::Ext(e) if e.pattern == Pattern::P5)),
        "{plan:?}"
    );
}

/// Every pattern P0–P7 occurs in the plans of the generated queries, and
/// those plans count correctly (guards the coverage of the property tests).
#[test]
fn every_pattern_is_exercised() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..400u64 {
        let mut r = rng(seed);
        let vl = r.random_range(1..=3u32);
        let el = seed.is_multiple_of(3).then_some(2);
        let model = random_graph(&mut r, 9, 0.6, vl, el);
        let q = if seed % 2 == 0 {
            symmetric_query(&mut r, vl, el, 7)
        } else {
            random_query(&mut r, 6, 0.2, vl, el)
        };
        let g = CsrGraph::from_data(&model.to_data()).unwrap();
        let eng = Geneva::new(1).unwrap();
        let plan = eng.plan(&IntervalPcsr::build(&g, q.edge_labelled()), &q);
        let here: Vec<Pattern> = plan
            .phases
            .iter()
            .filter_map(|p| if let Phase::Ext(e) = p { Some(e.pattern) } else { None })
            .collect();
        assert_eq!(
            eng.count(&g, &q).unwrap(),
            BruteForce.count(&g, &q).unwrap(),
            "seed {seed} {q:?} {here:?}"
        );
        seen.extend(here);
    }
    assert_eq!(seen.len(), 8, "patterns seen: {seen:?}");
}

/// Timing: static matching on an R-MAT graph (2^18 vertices, 1.2M edges, 16
/// uniform vertex labels), PV versus SV, with the conversion time and the
/// volume materialised between phases. Run with
/// `cargo test --release -p csm-baselines --test geneva -- --ignored --nocapture`
/// (`CSM_BENCH_SCALE` / `CSM_BENCH_EDGES` override the size).
#[test]
#[ignore]
fn timing_rmat_pv_vs_sv() {
    use csm_graph::gen::{
        assign_labels, graph_from_pairs, random_walk_query, rmat, standard_query, with_labels, Labeller, RMAT_STANDARD,
    };
    let env = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (scale, m) = (env("CSM_BENCH_SCALE", 18) as u32, env("CSM_BENCH_EDGES", 1_200_000));
    let (a, b, c) = RMAT_STANDARD;
    let pairs = rmat(scale, m, a, b, c, 1);
    let n = 1usize << scale;
    let data = graph_from_pairs(
        n,
        &pairs,
        assign_labels(
            n,
            &Labeller::Uniform {
                num_labels: 16,
                seed: 2,
            },
        ),
        None,
    );
    let g = CsrGraph::from_data(&data).unwrap();
    let mut queries: Vec<(String, QueryGraph)> = Vec::new();
    for k in 4..=6 {
        let qd = random_walk_query(&data, k, 1, false).expect("query");
        queries.push((format!("walk{k}"), QueryGraph::from_data(&qd).unwrap()));
    }
    for (name, labels) in [
        ("diamond", vec![0, 1, 0, 1]),
        ("house", vec![0, 0, 1, 1, 2]),
        ("4-cycle", vec![0, 1, 0, 1]),
    ] {
        let qd = with_labels(&standard_query(name).unwrap(), &labels);
        queries.push((format!("{name}:{labels:?}"), QueryGraph::from_data(&qd).unwrap()));
    }
    println!(
        "R-MAT scale {scale}, {} edges, 16 labels, {} threads",
        g.num_edges(),
        rayon::current_num_threads()
    );
    println!(
        "query | mode | plan | embeddings | build s | match s | phases (PV) | rows written | VIDs written | peak block VIDs"
    );
    let pcsr = IntervalPcsr::build(&g, false);
    for (name, q) in &queries {
        for mv in [true, false] {
            let eng = Geneva::new(0).unwrap().with_multi_vertex(mv);
            let plan: Vec<String> = eng
                .plan(&pcsr, q)
                .phases
                .iter()
                .map(|p| match p {
                    Phase::Ext(e) => format!("{:?}", e.pattern),
                    Phase::Elim(e) => format!("E{}", e.edges.len()),
                })
                .collect();
            let r = eng.run(&g, q);
            println!(
                "{name} | {} | {} | {} | {:.3} | {:.3} | {} ({}) | {} | {} | {}",
                if mv { "PV" } else { "SV" },
                plan.join(" "),
                r.embeddings,
                r.build_seconds,
                r.match_seconds,
                r.phases,
                r.pv_phases,
                r.rows_written,
                r.words_written,
                r.peak_words
            );
        }
    }
    println!(
        "interval-PCSR: {} bytes, {} intervals; CSR {} bytes",
        pcsr.memory_bytes(),
        pcsr.num_intervals(),
        g.memory_bytes()
    );
}
