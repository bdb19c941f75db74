//! Times the `cpu` engine's static count of one query, several times over
//! one loaded graph (loading and the kept-edges pass excluded), so that a
//! profiler sees the count and its set-up rather than the reader.
//!
//! `cargo run --release -p csm-bench --example static_probe -- GRAPH QUERY[:labels] THREADS ROUNDS [ORDER]`
//! (QUERY as `csm match -q` takes a standard query's name and labels).

use std::sync::Arc;
use std::time::Instant;

use csm_baselines::CpuEngine;
use csm_bench::input::standard_query_data;
use csm_engine::{EdgesApart, StaticMatcher};
use csm_graph::format::{read_graph_file, ReadOptions};
use csm_planner::{strategy_by_name, QueryGraph};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [graph, query, threads, rounds, rest @ ..] = &args[..] else {
        return Err("usage: static_probe GRAPH QUERY[:l0,l1,..] THREADS ROUNDS [ORDER]".into());
    };
    let (g, _) = read_graph_file(graph, None, &ReadOptions::default())?;
    let qd = standard_query_data(query)?.ok_or("unknown standard query")?;
    let q = QueryGraph::from_data(&qd)?;
    let csr = EdgesApart::counted_csr(&g, &q, true)?;
    let order = strategy_by_name(rest.first().map_or("gcsm", String::as_str)).ok_or("unknown order")?;
    let order: Arc<dyn csm_planner::OrderStrategy> = Arc::from(order);
    if std::env::var_os("PLAN").is_some() {
        // the plan before symmetry breaking: order and last-level memo
        let stats = csm_planner::GraphStats::of(&csr);
        let plan = csm_planner::static_plan_on(&q, order.as_ref(), &stats, csm_graph::Version::New, &csr);
        println!("order {:?}, last-level memo from {:?}", plan.order, plan.memo_from);
    }
    let engine = CpuEngine::new(threads.parse()?, order)?;
    for r in 0..rounds.parse::<usize>()? {
        let t = Instant::now();
        let n = engine.count(&csr, &q)?;
        println!("round {r}: {n} embeddings in {:.4} s", t.elapsed().as_secs_f64());
    }
    Ok(())
}
