//! Prints which delta plans of a query split, and how, with the statistics
//! of a data graph:
//! `cargo run --release -p csm-planner --example plan_splits -- GRAPH QUERY`
//! (QUERY: a standard query name or a query file).
use csm_graph::format::{read_graph_file, ReadOptions};
use csm_graph::gen::standard_query;
use csm_graph::CsrGraph;
use csm_planner::{delta_plans, CostOrder, GraphStats, QueryGraph};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (g, _) = read_graph_file(std::path::Path::new(&args[1]), None, &ReadOptions::default()).expect("graph");
    let qd = match standard_query(&args[2]) {
        Some(q) => q,
        None => {
            read_graph_file(std::path::Path::new(&args[2]), None, &ReadOptions::default())
                .expect("query")
                .0
        }
    };
    let q = QueryGraph::from_data(&qd).expect("query");
    let stats = GraphStats::of(&CsrGraph::from_data(&g).expect("graph"));
    for p in delta_plans(&q, &CostOrder, &stats) {
        if let Some(s) = &p.plan.split {
            println!(
                "edge {} {:?}: order {:?}, split at {}: {} parts, {} overlaps ({} overlap plans in all)",
                p.edge_index,
                p.sign,
                p.plan.order,
                s.at,
                s.parts.len(),
                s.overlaps.len(),
                p.plan.splits().iter().map(|s| s.overlaps.len()).sum::<usize>()
            );
        }
        if std::env::var("MEMO").is_ok() {
            // SUFFIX MEMO: each plan's memoised depths and their keys
            for plan in p.plan.plans() {
                let keys: Vec<String> = (0..plan.depth())
                    .filter(|&d| plan.suffix_memo >> d & 1 == 1)
                    .map(|d| format!("{d}:{:b}", plan.suffix_deps[d]))
                    .collect();
                println!("  order {:?} memo {}", plan.order, keys.join(" "));
            }
        }
    }
}
