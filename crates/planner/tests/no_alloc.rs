//! The executor allocates nothing per execution-tree node: once its buffers
//! have grown (a warm-up run), running every static and delta plan again
//! performs zero heap allocations. Counted with a global allocator wrapper,
//! on the test's own thread only: libtest's main thread books the running
//! test in a map of its own at about the same time (an allocation that made
//! this test fail about once in 200 runs).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use csm_graph::{DynamicGraph, Edge, GraphData, LocatedUpdate, Strictness, Update, Version};
use csm_planner::{count_batch, delta_plans, static_plan, Executor, GcsmOrder, GraphStats, NoVisitor, QueryGraph};

struct Counting;

thread_local! {
    /// Allocations by this thread (const-initialised: reading it allocates nothing).
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: a thread being torn down may still free and allocate
    let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
}

fn allocs_here() -> usize {
    ALLOCS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count_one();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count_one();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn graph() -> GraphData {
    // a deterministic dense-ish graph: i ~ j when (i * j + i + j) % 7 < 3
    let n = 60u32;
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if (i * j + i + j) % 7 < 3 {
                edges.push(Edge::new(i, j, 0));
            }
        }
    }
    GraphData {
        labels: vec![0; n as usize],
        edges,
        edge_labelled: false,
    }
}

#[test]
fn executor_runs_allocation_free_after_warm_up() {
    let data = graph();
    let mut g = DynamicGraph::from_data(&data).unwrap();
    let batch: Vec<LocatedUpdate> = data.edges[..10]
        .iter()
        .enumerate()
        .map(|(i, &e)| LocatedUpdate {
            line: i + 1,
            update: Update::RemoveEdge(e),
        })
        .chain(
            [(0u32, 59u32), (1, 58), (2, 57)]
                .iter()
                .enumerate()
                .filter_map(|(i, &(u, v))| {
                    (!data.edges.contains(&Edge::new(u, v, 0))).then_some(LocatedUpdate {
                        line: 20 + i,
                        update: Update::AddEdge(Edge::new(u, v, 0)),
                    })
                }),
        )
        .collect();
    g.stage(&batch, "t", Strictness::Strict).unwrap();
    let delta = g.pending_delta().unwrap().clone();
    let stats = GraphStats::of(&g);
    let mut ex = Executor::new();
    for edges in [
        vec![(0, 1), (1, 2), (0, 2)],
        vec![(0, 1), (1, 2), (2, 3), (0, 3)],
        vec![(0, 1), (1, 2), (2, 3), (0, 3), (0, 4), (1, 4)],
        vec![(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)],
    ] {
        let e: Vec<(usize, usize, u32)> = edges.iter().map(|&(a, b)| (a, b, 0)).collect();
        let n = 1 + edges.iter().map(|&(a, b)| a.max(b)).max().unwrap();
        let q = QueryGraph::new(vec![0; n], &e, false).unwrap();
        let plans = delta_plans(&q, &GcsmOrder, &stats);
        let splan = static_plan(&q, &GcsmOrder, &stats, Version::New);
        let run = |ex: &mut Executor| {
            let d = count_batch(&g, &plans, &delta, ex, &mut NoVisitor);
            let s: u64 = (0..60).map(|v| ex.count(&g, &splan, &[v], &mut NoVisitor)).sum();
            (d, s)
        };
        let warm = run(&mut ex);
        let before = allocs_here();
        let again = run(&mut ex);
        let allocs = allocs_here() - before;
        assert_eq!(warm, again);
        assert!(
            warm.1 > 0 && warm.0.positive + warm.0.negative > 0,
            "the workload must do something"
        );
        assert_eq!(allocs, 0, "{allocs} allocations while running plans for {edges:?}");
    }
}
