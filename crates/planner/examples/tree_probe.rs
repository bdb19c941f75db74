//! Execution-tree size of a stream matched one update at a time:
//! `tree_probe GRAPH UPDATES QUERY` runs the query's delta plans (cost
//! order unless `ORDER` names another, no symmetry, plain `DynamicGraph` lists) from every update's seeds
//! and prints the result count, the nodes entered per depth (the counting
//! shortcuts stay on, so a depth sized without listing has no nodes) and
//! the matching seconds (`FROM=k` matches only from the k-th update on):
//! the figures to set beside another system's partial-result counts
//! (RapidFlow prints them). `PER_PLAN=1` also prints
//! the nodes of each delta plan run on its own.
use csm_graph::format::{read_graph_file, read_updates_file, ReadOptions};
use csm_graph::{DynamicGraph, Strictness, VertexId};
use csm_planner::{count_batch, delta_plans_on, strategy_by_name, Executor, GraphStats, Level, QueryGraph, Visitor};

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
    // ORDER=gcsm|cost|auto picks the order strategy (default cost)
    let order = std::env::var("ORDER").unwrap_or_else(|_| "cost".into());
    let strategy = strategy_by_name(&order).ok_or("ORDER is gcsm, cost or auto")?;
    let plans = delta_plans_on(&q, strategy.as_ref(), &GraphStats::of(&g), &g);
    let mut ex = Executor::new();
    let mut vis = Nodes([0; 33]);
    // PER_PLAN=1: also the nodes of each delta plan, run alone
    let per_plan = std::env::var("PER_PLAN").is_ok();
    let mut by_plan = vec![0u64; plans.len()];
    let (mut p, mut n) = (0, 0);
    let mut t = std::time::Duration::ZERO;
    // FROM=k: apply the first k updates without matching them
    let from: usize = std::env::var("FROM").map_or(Ok(0), |s| s.parse())?;
    for (k, u) in stream.iter().enumerate() {
        if k < from {
            g.apply(std::slice::from_ref(u), "s", Strictness::Strict)?;
            continue;
        }
        g.stage(std::slice::from_ref(u), "s", Strictness::Strict)?;
        let delta = g
            .pending_delta()
            .ok_or("a staged update leaves a pending batch")?
            .clone();
        if per_plan {
            for (i, nodes) in by_plan.iter_mut().enumerate() {
                let mut one = Nodes([0; 33]);
                count_batch(&g, &plans[i..=i], &delta, &mut ex, &mut one);
                *nodes += one.0.iter().sum::<u64>();
            }
        }
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
    for (p, nodes) in plans.iter().zip(&by_plan).filter(|(_, &n)| n > 0) {
        println!(
            "  edge {} {:?} order {:?}: {nodes} nodes",
            p.edge_index, p.sign, p.plan.order
        );
    }
    Ok(())
}
