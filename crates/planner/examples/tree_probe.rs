//! Execution-tree size of a stream matched one update at a time:
//! `tree_probe GRAPH UPDATES QUERY` runs the query's delta plans (cost
//! order, no symmetry, plain `DynamicGraph` lists) from every update's seeds
//! and prints the result count, the nodes entered per depth (the counting
//! shortcuts stay on, so a depth sized without listing has no nodes) and
//! the matching seconds: the figures to set beside another system's
//! partial-result counts (RapidFlow prints them).
use csm_graph::format::{read_graph_file, read_updates_file, ReadOptions};
use csm_graph::{DynamicGraph, Strictness, VertexId};
use csm_planner::{count_batch, delta_plans, CostOrder, Executor, GraphStats, Level, QueryGraph, Visitor};

struct Nodes([u64; 33]);
impl Visitor for Nodes {
    const OBSERVES: bool = false;
    fn enter(&mut self, d: usize, _: &[VertexId], _: &Level) -> bool {
        self.0[d] += 1;
        true
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 3 {
        return Err("usage: tree_probe GRAPH UPDATES QUERY".into());
    }
    let (gd, _) = read_graph_file(&a[0], None, &ReadOptions::default())?;
    let stream = read_updates_file(&a[1])?;
    let (qd, _) = read_graph_file(&a[2], None, &ReadOptions::default())?;
    let q = QueryGraph::from_data(&qd)?;
    let mut g = DynamicGraph::from_data(&gd)?;
    let plans = delta_plans(&q, &CostOrder, &GraphStats::of(&g));
    let mut ex = Executor::new();
    let mut vis = Nodes([0; 33]);
    let (mut p, mut n) = (0, 0);
    let mut t = std::time::Duration::ZERO;
    for u in &stream {
        g.stage(std::slice::from_ref(u), "s", Strictness::Strict)?;
        let delta = g
            .pending_delta()
            .ok_or("a staged update leaves a pending batch")?
            .clone();
        let t0 = std::time::Instant::now();
        let c = count_batch(&g, &plans, &delta, &mut ex, &mut vis);
        t += t0.elapsed();
        p += c.positive;
        n += c.negative;
        g.commit();
    }
    println!(
        "results {} nodes per depth {:?} matching {:.4} s",
        p + n,
        &vis.0[..q.num_vertices()],
        t.as_secs_f64()
    );
    Ok(())
}
