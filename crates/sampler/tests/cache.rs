//! Cache policies and the batch study.

mod common;

use csm_graph::{DynamicGraph, GraphView, VertexId};
use csm_sampler::cache::{khop_radius, list_bytes, pack_bytes, CachePolicy, SelectionContext};
use csm_sampler::{
    coverage, exact_access_counts, run_batch_study, sequential_exact_match, Confidence, DegreePolicy, KHopPolicy,
    NoCache, SampledPolicy, SelectError, StudyConfig, WalkOptions, WalkRule,
};

fn ctx<'a>(s: &'a common::Staged, budget: usize) -> SelectionContext<'a> {
    SelectionContext {
        graph: &s.g,
        delta: &s.delta,
        plans: &s.plans,
        budget_bytes: budget,
        seed: 1,
    }
}

#[test]
fn khop_with_the_plans_radius_covers_every_access() {
    for (q, ql) in [
        ("diamond", None),
        ("house", None),
        ("5-cycle", Some(&[0u32, 1, 0, 1, 0][..])),
    ] {
        let s = common::staged(300, 1500, if ql.is_some() { 2 } else { 1 }, 40, 40, q, ql, 8);
        let c = ctx(&s, usize::MAX);
        let sel = KHopPolicy::default().select_report(&c).unwrap();
        let exact = exact_access_counts(&c.tree()).counts;
        assert!(exact.nonzero_count() > 0);
        assert_eq!(
            coverage(&exact, &sel.vertices, 1.0),
            1.0,
            "{q}: k = {}",
            khop_radius(&s.plans)
        );
        // one hop less misses some list (for these queries and graphs)
        let k = khop_radius(&s.plans);
        if k > 0 {
            let less = KHopPolicy { k: Some(k - 1) }.select(&c);
            assert!(coverage(&exact, &less, 1.0) < 1.0, "{q}: k - 1 still covers everything");
        }
    }
}

#[test]
fn khop_over_budget_is_an_error_with_a_truncation() {
    let s = common::staged(300, 1500, 1, 40, 40, "house", None, 8);
    let full = KHopPolicy::default().select_report(&ctx(&s, usize::MAX)).unwrap();
    let budget = full.bytes / 3;
    match KHopPolicy::default().select_report(&ctx(&s, budget)) {
        Err(SelectError::OverBudget {
            needed_bytes,
            budget_bytes,
            partial,
            ..
        }) => {
            assert_eq!(needed_bytes, full.bytes);
            assert_eq!(budget_bytes, budget);
            assert!(partial.bytes <= budget && !partial.vertices.is_empty());
            assert_eq!(partial.vertices, KHopPolicy::default().select(&ctx(&s, budget)));
            // nearest first: the batch endpoints come first
            let mut ends: Vec<VertexId> = s
                .delta
                .inserted
                .iter()
                .chain(&s.delta.deleted)
                .flat_map(|e| [e.u, e.v])
                .collect();
            ends.sort_unstable();
            ends.dedup();
            assert!(partial
                .vertices
                .iter()
                .take(ends.len())
                .all(|v| ends.binary_search(v).is_ok()));
        }
        other => panic!("expected OverBudget, got {other:?}"),
    }
}

#[test]
fn policies_respect_the_budget_and_rank() {
    let s = common::staged(500, 4000, 1, 60, 60, "diamond", None, 3);
    let g: &DynamicGraph = &s.g;
    let budget = 4000;
    let c = ctx(&s, budget);
    let policies: Vec<Box<dyn CachePolicy>> = vec![
        Box::new(SampledPolicy {
            rule: WalkRule::Fixed(2000),
            walk: WalkOptions::default(),
            seed: 1,
        }),
        Box::new(SampledPolicy::default()),
        Box::new(SampledPolicy {
            rule: WalkRule::Confidence(Confidence {
                initial: 100,
                max_walks: 20_000,
                ..Confidence::default()
            }),
            walk: WalkOptions {
                parallel: true,
                ..WalkOptions::default()
            },
            seed: 2,
        }),
        Box::new(DegreePolicy),
        Box::new(NoCache),
    ];
    for p in &policies {
        let sel = p.select_report(&c).unwrap();
        assert!(sel.bytes <= budget, "{}: {} > {budget}", p.name(), sel.bytes);
        assert_eq!(sel.bytes, pack_bytes(g, &sel.vertices), "{}", p.name());
        assert_eq!(sel.vertices, p.select(&c), "{}: deterministic", p.name());
    }
    assert!(NoCache.select(&c).is_empty());
    // degree: every cached vertex has at least the degree of any skipped one
    // that would have fitted
    let d = DegreePolicy.select(&c);
    let deg = |v: VertexId| g.nbrs(v, csm_graph::Version::New).len();
    let min_cached = d.iter().map(|&v| deg(v)).min().unwrap();
    let used = pack_bytes(g, &d);
    for v in 0..g.num_vertices() as VertexId {
        if !d.contains(&v) && deg(v) > min_cached {
            assert!(
                used + list_bytes(g, v) > budget,
                "vertex {v} (degree {}) fits but was skipped",
                deg(v)
            );
        }
    }
    // sampled with plenty of walks and budget: the hottest vertices are cached
    let sampled = SampledPolicy {
        rule: WalkRule::Fixed(200_000),
        ..SampledPolicy::default()
    };
    let all = sampled.select(&ctx(&s, usize::MAX));
    let exact = exact_access_counts(&c.tree()).counts;
    assert!(coverage(&exact, &all, 0.05) == 1.0);
}

#[test]
fn batch_study_runs_every_policy() {
    let s = common::staged(400, 3000, 2, 300, 1, "square", Some(&[0, 1, 0, 1]), 12);
    let mut g = s.g.clone();
    g.abort();
    // the first update was staged and aborted: study the rest of the stream
    let updates = s.rest.clone();
    let cfg = StudyConfig {
        batch_size: 64,
        ..StudyConfig::default()
    };
    let exact = &sequential_exact_match;
    let policies: Vec<Box<dyn CachePolicy>> =
        // (the paper's fixed rule gives a single walk on a graph this small)
        vec![
            Box::new(SampledPolicy { rule: WalkRule::Fixed(5000), ..SampledPolicy::default() }),
            Box::new(DegreePolicy),
            Box::new(KHopPolicy::default()),
            Box::new(NoCache),
        ];
    for p in &policies {
        let mut g = g.clone();
        let mut seen = 0;
        let (reports, summary) =
            run_batch_study(&mut g, &s.plans, &updates, p.as_ref(), &cfg, exact, |_| seen += 1).unwrap();
        assert_eq!(seen, updates.len().div_ceil(64));
        assert_eq!(reports.len(), seen);
        assert!(!g.is_pending());
        assert!(summary.measured_batches > 0);
        for r in &reports {
            assert!(r.metrics.coverage_top1 >= 0.0 && r.metrics.coverage_top1 <= 1.0);
            assert_eq!(r.pack_bytes, r.cached_bytes, "{}", p.name());
        }
        match p.name().as_str() {
            "none" => assert_eq!(summary.coverage_top5, 0.0),
            "khop" | "degree" => assert_eq!(
                summary.coverage_top5, 1.0,
                "unlimited budget caches everything accessed"
            ),
            _ => assert!(summary.walks == 5000.0 && summary.coverage_top1 > 0.5, "{summary:?}"),
        }
        assert!(summary.top5_access_share > 0.05 && summary.top5_access_share <= 1.0);
    }
    // a malformed batch is an input error naming the update
    let mut bad = updates.clone();
    bad[3] = bad[2];
    let mut g2 = g.clone();
    assert!(run_batch_study(&mut g2, &s.plans, &bad, &NoCache, &cfg, exact, |_| {}).is_err());
}

/// A batch that removes a vertex and re-adds it under another label is
/// studied as its two phases (two reports of one batch number), with the
/// counts of the hand-made case: vertex 3 (label 1, pendant to a triangle
/// of label 0) comes back under label 0 and closes the triangle 0-1-3 (6
/// embeddings), then leaves under label 1 again (6 vanish).
#[test]
fn batch_study_splits_relabelling_batches_into_phases() {
    use csm_graph::{Edge, GraphData, LocatedUpdate, Update};
    use csm_planner::{delta_plans, GcsmOrder, GraphStats, QueryGraph};
    let g0 = GraphData {
        labels: vec![0, 0, 0, 1],
        edges: [(0, 1), (0, 2), (1, 2), (2, 3)]
            .map(|(u, v)| Edge::new(u, v, 0))
            .to_vec(),
        edge_labelled: false,
    };
    let mut g = DynamicGraph::from_data(&g0).unwrap();
    let q = QueryGraph::new(vec![0, 0, 0], &[(0, 1, 0), (0, 2, 0), (1, 2, 0)], false).unwrap();
    let plans = delta_plans(&q, &GcsmOrder, &GraphStats::of(&g));
    let updates: Vec<LocatedUpdate> = [
        Update::RemoveVertex { id: 3, label: Some(1) },
        Update::AddVertex { id: 3, label: 0 },
        Update::AddEdge(Edge::new(3, 0, 0)),
        Update::AddEdge(Edge::new(3, 1, 0)),
        Update::RemoveVertex { id: 3, label: Some(0) },
        Update::AddVertex { id: 3, label: 1 },
        Update::AddEdge(Edge::new(3, 2, 0)),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, update)| LocatedUpdate { line: i + 1, update })
    .collect();
    let cfg = StudyConfig {
        batch_size: 4,
        ..StudyConfig::default()
    };
    let (reports, _) = run_batch_study(
        &mut g,
        &plans,
        &updates,
        &NoCache,
        &cfg,
        &sequential_exact_match,
        |_| {},
    )
    .unwrap();
    let per_batch = |b: usize| {
        let of: Vec<_> = reports.iter().filter(|r| r.batch == b).collect();
        (
            of.len(),
            of.iter().map(|r| r.positive).sum::<u64>(),
            of.iter().map(|r| r.negative).sum::<u64>(),
        )
    };
    assert_eq!(per_batch(0), (2, 6, 0));
    assert_eq!(per_batch(1), (2, 0, 6));
    assert_eq!(g.to_csr(csm_graph::Version::Old).labels()[3], 1);
}
