//! The kernel's algorithm, run by the CPU model in `csm_gpu::emulate` on the
//! exact inputs the GPU gets (encoded plans, seeds, raw lists, DCSR packs),
//! against the CPU engine. Runs everywhere (no GPU needed).

mod common;

use std::sync::Arc;

use csm_baselines::cpu::{count_delta_sequential, Symmetry};
use csm_baselines::CpuEngine;
use csm_engine::StaticMatcher;
use csm_gpu::cache::{within_budget, DcsrPack};
use csm_gpu::emulate::{emulate, emulate_with};
use csm_gpu::plan::{encode_plan, QueryPlans, Shape, Task, TaskOptions};
use csm_graph::{DynamicGraph, GraphData, GraphView, LocatedUpdate, Strictness, Version, VertexId};
use csm_planner::{static_plan, Executor, GcsmOrder, GraphStats, QueryGraph, Sign};

use common::*;

/// Runs every batch through the emulated kernel with no cache, a cache of
/// every other vertex, and a degree-ranked cache, checking each against the
/// CPU engine's counts.
fn check(g0: &GraphData, batches: &[Vec<LocatedUpdate>], q: &QueryGraph, chunk: usize) {
    assert!(
        check_batches(g0, batches, q, chunk) > 0,
        "no batch produced matches: the test is vacuous"
    );
}

/// [`check`], giving the number of batches with matches.
fn check_batches(g0: &GraphData, batches: &[Vec<LocatedUpdate>], q: &QueryGraph, chunk: usize) -> usize {
    let mut g = DynamicGraph::from_data(g0).unwrap();
    let stats = GraphStats::of(&g);
    let qp = QueryPlans::new(q, &GcsmOrder, &stats, true).unwrap();
    let sym = Symmetry::of(q, &qp.plans);
    let mut ex = Executor::new();
    let mut nonzero = 0;
    for (i, b) in batches.iter().enumerate() {
        g.stage(b, "test", Strictness::Strict).unwrap();
        let delta = g.pending_delta().unwrap().clone();
        let want = count_delta_sequential(&g, &qp.plans, Some(&sym), &delta, &mut ex);
        let seeds: Vec<Task> = qp.seeds(&g, &delta).into_iter().map(Task::from).collect();
        let roots = qp.seeds(&g, &delta);
        let got = emulate(&g, None, &qp.encoded, Some(&seeds), chunk);
        assert_eq!(got, (want.positive, want.negative), "batch {i}, no cache");
        let plain = emulate_with(&g, None, &qp.encoded, Some(&seeds), chunk, false);
        assert_eq!(plain, (want.positive, want.negative), "batch {i}, no cache, no memo");
        for (expand_above, max_prefix, max_task) in [(0, 4, 3), (2, 3, 0), (5, 4, 7), (u32::MAX, 2, 1)] {
            let opts = TaskOptions {
                expand_above,
                max_prefix,
                max_task,
                max_tasks: 1 << 20,
                ..TaskOptions::default()
            };
            let tasks = qp.tasks(&g, &roots, &opts);
            let got = emulate(&g, None, &qp.encoded, Some(&tasks), chunk);
            assert_eq!(got, (want.positive, want.negative), "batch {i}, tasks {opts:?}");
        }
        let few = TaskOptions {
            expand_above: 0,
            max_tasks: 5,
            ..TaskOptions::default()
        };
        let got = emulate(&g, None, &qp.encoded, Some(&qp.tasks(&g, &roots, &few)), chunk);
        assert_eq!(got, (want.positive, want.negative), "batch {i}, capped expansion");
        // Small-batch balance: deeper expansion and slices down to 2.
        let balanced = TaskOptions {
            target_tasks: roots.len() * 64 + 1000,
            min_task: 2,
            ..TaskOptions::default()
        };
        let got = emulate(&g, None, &qp.encoded, Some(&qp.tasks(&g, &roots, &balanced)), chunk);
        assert_eq!(got, (want.positive, want.negative), "batch {i}, balanced tasks");
        // Match v5's balance: never into the last level, deep for up to
        // 4x more seeds, gated by the start levels' total work.
        for min_balance_work in [0, 1 << 12] {
            let v5 = TaskOptions {
                target_tasks: roots.len() * 16 + 1000,
                expand_above: 4,
                deep_factor: 16,
                min_task: 2,
                min_balance_work,
                ..TaskOptions::v5()
            };
            let got = emulate(&g, None, &qp.encoded, Some(&qp.tasks(&g, &roots, &v5)), chunk);
            assert_eq!(got, (want.positive, want.negative), "batch {i}, v5 balance {v5:?}");
        }
        // Match v6: batches of many seeds are only sliced (slices of
        // total domain / target), and with expand_few off small ones too.
        for (target_tasks, expand_few) in [(roots.len().max(1), true), (roots.len() * 64 + 1000, false)] {
            let v6 = TaskOptions {
                target_tasks,
                expand_few,
                slice_min: 1,
                ..TaskOptions::v6()
            };
            let tasks = qp.tasks(&g, &roots, &v6);
            assert!(tasks.iter().all(|t| t.start == 2), "v6 expanded a seed on the host");
            let got = emulate(&g, None, &qp.encoded, Some(&tasks), chunk);
            assert_eq!(got, (want.positive, want.negative), "batch {i}, v6 split {v6:?}");
        }
        let half: Vec<VertexId> = (0..g.num_vertices() as VertexId).filter(|v| v % 2 == 0).collect();
        let pack = DcsrPack::build(&g, &half);
        let got = emulate(&g, Some(&pack), &qp.encoded, Some(&seeds), chunk);
        assert_eq!(got, (want.positive, want.negative), "batch {i}, half cached");
        let mut ranked: Vec<VertexId> = (0..g.num_vertices() as VertexId).collect();
        ranked.sort_by_key(|&v| std::cmp::Reverse(g.nbrs(v, Version::New).len()));
        let chosen = within_budget(&g, &ranked, 4000);
        let pack = DcsrPack::build(&g, &chosen);
        let got = emulate(&g, Some(&pack), &qp.encoded, Some(&seeds), chunk);
        assert_eq!(got, (want.positive, want.negative), "batch {i}, degree cache");
        nonzero += usize::from(want.positive + want.negative > 0);
        g.commit();
    }
    nonzero
}

#[test]
fn emulated_kernel_matches_cpu_on_rmat() {
    let g = rmat_graph(9, 3000, 2, None, 1);
    let (g0, batches) = stream(&g, 64, 4, 2);
    for name in ["triangle", "diamond", "house", "5-cycle"] {
        check(&g0, &batches, &query(name, &[0, 1]), 1024);
    }
    // Small chunks: candidate sets produced in several pieces.
    check(&g0, &batches, &query("diamond", &[0, 0, 1, 1]), 4);
}

#[test]
fn emulated_kernel_matches_cpu_on_single_edge_batches() {
    let g = er_graph(200, 1500, 1, None, 3);
    let (g0, batches) = stream(&g, 1, 12, 4);
    check(&g0, &batches, &query("4-clique", &[0]), 1024);
    check(&g0, &batches, &query("triangle", &[0]), 1024);
}

#[test]
fn emulated_kernel_handles_edge_labels() {
    let g = rmat_graph(8, 2000, 2, Some(2), 5);
    let (g0, batches) = stream(&g, 32, 4, 6);
    check(&g0, &batches, &edge_labelled_query("triangle", &[0, 1], &[0, 1]), 1024);
    check(&g0, &batches, &edge_labelled_query("house", &[0], &[1, 0, 0]), 8);
}

#[test]
fn emulated_kernel_handles_new_vertices() {
    let g = er_graph(120, 700, 2, None, 7);
    let (g0, batches) = growth_stream(&g, 16, 2, 8);
    check(&g0, &batches, &query("triangle", &[1, 0]), 1024);
    check(&g0, &batches, &query("diamond", &[0, 1]), 1024);
}

#[test]
fn emulated_static_count_matches_cpu() {
    let g = rmat_graph(9, 2500, 2, None, 9);
    let csr = csm_graph::CsrGraph::from_data(&g).unwrap();
    let cpu = CpuEngine::new(1, Arc::new(GcsmOrder)).unwrap();
    for name in ["triangle", "square", "house"] {
        let q = query(name, &[0, 1]);
        let plan = static_plan(&q, &GcsmOrder, &GraphStats::of(&csr), Version::New);
        let mut words = Vec::new();
        encode_plan(&plan, Shape::NARROW, 1, Sign::Positive, &mut words).unwrap();
        let got = emulate(&csr, None, &words, None, 1024).0;
        assert_eq!(got, cpu.count(&csr, &q).unwrap(), "{name}");
    }
}

/// Counts every list read of the execution tree exactly.
struct ReadCounter<'a>(&'a mut std::collections::HashMap<VertexId, u64>);

impl csm_planner::Visitor for ReadCounter<'_> {
    fn enter(&mut self, _depth: usize, emb: &[VertexId], level: &csm_planner::Level) -> bool {
        for r in &level.reads {
            *self.0.entry(emb[r.pos as usize]).or_insert(0) += 1;
        }
        true
    }
}

#[test]
fn walk_selector_ranks_the_hot_lists_first() {
    use csm_gpu::cache::{CacheSelector, SelectCtx, WalkSelector};
    let g = rmat_graph(11, 20_000, 2, None, 41);
    let (g0, batches) = stream(&g, 256, 1, 42);
    let mut dg = DynamicGraph::from_data(&g0).unwrap();
    let q = query("house", &[0, 1]);
    let qp = QueryPlans::new(&q, &GcsmOrder, &GraphStats::of(&dg), false).unwrap();
    dg.stage(&batches[0], "t", Strictness::Strict).unwrap();
    let delta = dg.pending_delta().unwrap().clone();
    let seeds = qp.seeds(&dg, &delta);
    // Exact access counts (leaves read nothing; the executor's last level is
    // entered too, which reads the last level's lists once per node).
    let mut exact = std::collections::HashMap::new();
    let mut ex = Executor::new();
    for s in &seeds {
        let p = &qp.plans[s.plan as usize].plan;
        ex.count(&dg, p, &[s.x, s.y], &mut ReadCounter(&mut exact));
    }
    let mut top: Vec<(VertexId, u64)> = exact.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let top: Vec<VertexId> = top.iter().take(20).map(|x| x.0).collect();
    let mut sel = WalkSelector::with_walks(64);
    let ranked = sel
        .select(&SelectCtx {
            graph: &dg,
            query: &qp,
            delta: &delta,
            seeds: &seeds,
            budget: usize::MAX,
        })
        .unwrap();
    let est: std::collections::HashSet<VertexId> = ranked.iter().take(40).copied().collect();
    let hit = top.iter().filter(|v| est.contains(v)).count();
    assert!(
        hit >= 14,
        "only {hit} of the 20 most read lists are in the estimate's top 40"
    );
}

#[test]
fn sampler_policies_plug_in_as_selectors() {
    use csm_gpu::cache::{CacheSelector, SamplerSelector, SelectCtx};
    let g = rmat_graph(10, 8000, 2, None, 45);
    let (g0, batches) = stream(&g, 128, 1, 46);
    let mut dg = DynamicGraph::from_data(&g0).unwrap();
    let q = query("house", &[0, 1]);
    let qp = QueryPlans::new(&q, &GcsmOrder, &GraphStats::of(&dg), true).unwrap();
    dg.stage(&batches[0], "t", Strictness::Strict).unwrap();
    let delta = dg.pending_delta().unwrap().clone();
    let roots = qp.seeds(&dg, &delta);
    let mut ex = Executor::new();
    let sym = Symmetry::of(&q, &qp.plans);
    let want = count_delta_sequential(&dg, &qp.plans, Some(&sym), &delta, &mut ex);
    let budget = 20_000;
    for mut sel in [
        SamplerSelector::sampled(Some(8)),
        SamplerSelector::policy(Box::new(csm_sampler::DegreePolicy)),
    ] {
        let chosen = sel
            .select(&SelectCtx {
                graph: &dg,
                query: &qp,
                delta: &delta,
                seeds: &roots,
                budget,
            })
            .unwrap();
        assert!(!chosen.is_empty(), "{}", sel.name());
        let chosen = within_budget(&dg, &chosen, budget);
        let pack = DcsrPack::build(&dg, &chosen);
        assert!(pack.words.len() * 4 <= budget);
        let tasks: Vec<Task> = roots.iter().map(|&s| Task::from(s)).collect();
        let got = emulate(&dg, Some(&pack), &qp.encoded, Some(&tasks), 1024);
        assert_eq!(got, (want.positive, want.negative), "{}", sel.name());
    }
}

/// Queries of 9-16 vertices are encoded for the kernel's wide build
/// (`Shape::WIDE`: level blocks with room for 16 conflict positions): the
/// emulated kernel on those plans against the CPU engine, per batch and
/// statically.
#[test]
fn emulated_kernel_matches_cpu_on_queries_of_9_to_16_vertices() {
    let g = er_graph(300, 1600, 5, None, 11);
    let (g0, batches) = stream(&g, 128, 4, 12);
    let csr = csm_graph::CsrGraph::from_data(&g0).unwrap();
    let cpu = CpuEngine::new(1, Arc::new(GcsmOrder)).unwrap();
    let mut checked = 0;
    for (k, seed) in [(9, 1u64), (10, 2), (12, 3), (16, 5)] {
        let Some(data) = csm_graph::gen::random_walk_query(&g0, k, seed, false) else {
            continue;
        };
        let q = QueryGraph::from_data(&data).unwrap();
        let qp = QueryPlans::new(&q, &GcsmOrder, &GraphStats::of(&csr), true).unwrap();
        assert_eq!(qp.shape, Shape::WIDE);
        assert_eq!(qp.encoded.len(), qp.plans.len() * Shape::WIDE.plan_words());
        check(&g0, &batches, &q, 1024);
        let plan = static_plan(&q, &GcsmOrder, &GraphStats::of(&csr), Version::New);
        let mut words = Vec::new();
        encode_plan(&plan, Shape::WIDE, 1, Sign::Positive, &mut words).unwrap();
        assert_eq!(
            emulate(&csr, None, &words, None, 1024).0,
            cpu.count(&csr, &q).unwrap(),
            "k = {k}"
        );
        checked += 1;
    }
    assert!(checked >= 3, "too few walk queries");
    // 17 vertices: not in the wide build
    let path = QueryGraph::new(vec![0; 17], &(0..16).map(|i| (i, i + 1, 0)).collect::<Vec<_>>(), false).unwrap();
    let plan = static_plan(&path, &GcsmOrder, &GraphStats::of(&csr), Version::New);
    let err = encode_plan(&plan, Shape::WIDE, 1, Sign::Positive, &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("at most 16"), "{err}");
}

/// The huge build (`-DMAXQ=32 -DMAXR=15 -DWARPS=1`): a 10-clique (levels
/// of up to 9 reads) planted in a random graph, whose first batch completes
/// it and second breaks it, and walk queries of 20-32 vertices, per batch
/// and as static counts.
#[test]
fn emulated_huge_build_matches_cpu() {
    let (g0, batches, queries) = planted_clique();
    let csr = csm_graph::CsrGraph::from_data(&g0).unwrap();
    let cpu = CpuEngine::new(1, Arc::new(GcsmOrder)).unwrap();
    assert!(queries.len() >= 3, "too few walk queries");
    for (i, q) in queries.iter().enumerate() {
        let k = q.num_vertices();
        let qp = QueryPlans::new(q, &GcsmOrder, &GraphStats::of(&csr), true).unwrap();
        assert_eq!(qp.shape, Shape::HUGE, "k = {k}");
        let with_matches = check_batches(&g0, &batches, q, 1024);
        if i == 0 {
            assert_eq!(with_matches, 2, "the clique's batches");
        }
        let plan = static_plan(q, &GcsmOrder, &GraphStats::of(&csr), Version::New);
        let mut words = Vec::new();
        encode_plan(&plan, Shape::HUGE, 1, Sign::Positive, &mut words).unwrap();
        let want = cpu.count(&csr, q).unwrap();
        assert_eq!(emulate(&csr, None, &words, None, 1024).0, want, "k = {k}");
        assert!(i == 0 || want > 0, "a walk query matches where it was walked");
    }
}
