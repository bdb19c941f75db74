//! Every matching order of one seed edge, measured: `order_sweep GRAPH
//! UPDATES QUERY A B` runs the delta plans of query edge A-B (both signs)
//! in each order that starts A B and keeps every later vertex joined to an
//! earlier one, over the stream one update at a time (plain lists, no
//! symmetry), and prints the order, the execution-tree nodes and the
//! seconds, fewest nodes first: what the order strategies can be held
//! against (RapidFlow's delete Q_28 seeded on 1-3: 21,000 nodes for the
//! best order, 503,000 for the worst).
use csm_graph::format::{read_graph_file, read_updates_file, ReadOptions};
use csm_graph::{DynamicGraph, Strictness, VertexId};
use csm_planner::{count_batch, delta_plans, Executor, GraphStats, Level, OrderStrategy, QueryGraph, Visitor};

struct Nodes(u64);
impl Visitor for Nodes {
    const OBSERVES: bool = false;
    fn enter(&mut self, _: usize, _: &[VertexId], _: &Level) -> bool {
        self.0 += 1;
        true
    }
}
/// The order given, after the seed edge.
struct Fixed(Vec<usize>);
impl OrderStrategy for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn order(&self, _: &QueryGraph, prefix: &[usize], _: &GraphStats) -> Vec<usize> {
        let mut o = prefix.to_vec();
        o.extend(self.0.iter().filter(|v| !prefix.contains(v)));
        o
    }
}
/// Every permutation of `rest`.
fn perms(rest: Vec<usize>) -> Vec<Vec<usize>> {
    if rest.is_empty() {
        return vec![vec![]];
    }
    let mut out = vec![];
    for i in 0..rest.len() {
        let mut r = rest.clone();
        let x = r.remove(i);
        for mut p in perms(r) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let [graph, updates, query, sa, sb] = &a[..] else {
        return Err("usage: order_sweep GRAPH UPDATES QUERY A B".into());
    };
    let (gd, _) = read_graph_file(graph, None, &ReadOptions::default())?;
    let stream = read_updates_file(updates)?;
    let (qd, _) = read_graph_file(query, None, &ReadOptions::default())?;
    let (sa, sb): (usize, usize) = (sa.parse()?, sb.parse()?);
    let q = QueryGraph::from_data(&qd)?;
    if sa.max(sb) >= q.num_vertices() || !q.has_edge(sa, sb) {
        return Err(format!("{sa}-{sb} is not an edge of the query").into());
    }
    let mut rows = Vec::new();
    let rest: Vec<usize> = (0..q.num_vertices()).filter(|&v| v != sa && v != sb).collect();
    for p in perms(rest) {
        let mut order = vec![sa, sb];
        order.extend(&p);
        let ok = (2..order.len()).all(|k| order[..k].iter().any(|&w| q.has_edge(w, order[k])));
        if !ok {
            continue;
        }
        let mut g = DynamicGraph::from_data(&gd)?;
        let stats = GraphStats::of(&g);
        let plans: Vec<_> = delta_plans(&q, &Fixed(order.clone()), &stats)
            .into_iter()
            .filter(|d| {
                let (x, y, _) = q.edges()[d.edge_index];
                (x, y) == (sa.min(sb), sa.max(sb))
            })
            .collect();
        let mut ex = Executor::new();
        let mut vis = Nodes(0);
        let t = std::time::Instant::now();
        for u in &stream {
            g.stage(std::slice::from_ref(u), updates, Strictness::Strict)?;
            let delta = g
                .pending_delta()
                .ok_or("a staged update leaves a pending batch")?
                .clone();
            count_batch(&g, &plans, &delta, &mut ex, &mut vis);
            g.commit();
        }
        // the plan's own order (it may defer a leaf)
        let planned = plans.first().map(|p| p.plan.order.clone()).unwrap_or(order);
        rows.push((vis.0, planned, t.elapsed().as_secs_f64()));
    }
    rows.sort_by_key(|r| r.0);
    rows.dedup_by(|a, b| a.1 == b.1);
    for (nodes, order, secs) in rows {
        println!("{order:?}: {nodes} nodes, {secs:.4} s");
    }
    Ok(())
}
