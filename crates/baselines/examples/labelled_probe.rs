//! Probe of one-update-at-a-time matching on labelled CSM-format inputs:
//! `labelled_probe GRAPH UPDATES HUB_MIN_DEGREE QUERY...` runs each query
//! file on one thread (cost order) and prints its result count, the wall
//! seconds of the stream and the matching seconds.
//!
//! Environment: `REPEAT=k` replays the stream and its undo k times after
//! the first pass; `BATCH=b` sends batches of b updates through `process`;
//! `BATCH_HUB=d` sets `HubRule::batch_min_degree` (default 64); `NOSYM=1`
//! turns symmetry off; `EACH=1` prints every result; `PLANS=1` prints the
//! positive delta plans' orders and shortcuts.

use std::sync::Arc;
use std::time::Instant;

use csm_baselines::{CpuEngine, HubRule};
use csm_engine::{Batch, ContinuousMatcher};
use csm_graph::format::{read_graph_file, read_updates_file, ReadOptions};
use csm_graph::Strictness;
use csm_planner::{CostOrder, QueryGraph};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [graph, updates, min_degree, queries @ ..] = &args[..] else {
        return Err("usage: labelled_probe GRAPH UPDATES HUB_MIN_DEGREE QUERY...".into());
    };
    let (g, _) = read_graph_file(graph, None, &ReadOptions::default())?;
    let stream = read_updates_file(updates)?;
    for qf in queries {
        let (qd, _) = read_graph_file(qf, None, &ReadOptions::default())?;
        let q = QueryGraph::from_data(&qd)?;
        if std::env::var("PLANS").is_ok() {
            let dg = csm_graph::DynamicGraph::from_data(&g)?;
            let stats = csm_planner::GraphStats::of(&dg);
            let plans = csm_planner::delta_plans(&q, &CostOrder, &stats);
            let print = |p: &csm_planner::DeltaPlan, weight: Option<u64>| {
                let hoist = p.plan.levels.last().and_then(|l| l.hoist);
                let above: Vec<_> = p.plan.levels.iter().map(|l| l.above.clone()).collect();
                println!(
                    "  edge {} order {:?} hoist {:?} tail {} memo {:?} wide {:?} above {:?} weight {:?}",
                    p.edge_index,
                    p.plan.order,
                    hoist,
                    p.plan.independent_tail,
                    p.plan.memo_from,
                    p.plan.wide_tail.as_ref().map(|t| t.start),
                    above,
                    weight
                );
            };
            let positive = csm_planner::Sign::Positive;
            match csm_planner::single_edge_restricted(&q, &plans, positive) {
                // the plans single-edge updates run (symmetry restricted)
                Some((rules, restricted)) if std::env::var("NOSYM").is_err() => {
                    for r in rules {
                        print(&restricted[r.plan], Some(r.weight));
                    }
                }
                _ => plans.iter().filter(|p| p.sign == positive).for_each(|p| print(p, None)),
            }
        }
        let rule = HubRule {
            min_degree: min_degree.parse()?,
            batch_min_degree: std::env::var("BATCH_HUB")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(64),
            ..HubRule::default()
        };
        let mut eng = CpuEngine::new(1, Arc::new(CostOrder))?.hub_rule(rule);
        if std::env::var("NOSYM").is_ok() {
            eng = eng.without_symmetry();
        }
        eng.init(&g, &q)?;
        // REPEAT=k: the stream, then its undo (reversed, inserts and
        // deletions swapped), k times over, to profile matching alone
        let repeat: usize = std::env::var("REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
        let undo: Vec<_> = stream
            .iter()
            .rev()
            .map(|u| {
                let mut u = *u;
                u.update = match u.update {
                    csm_graph::Update::AddEdge(e) => csm_graph::Update::RemoveEdge(e),
                    csm_graph::Update::RemoveEdge(e) => csm_graph::Update::AddEdge(e),
                    other => other,
                };
                u
            })
            .collect();
        let t = Instant::now();
        let mut results = Vec::with_capacity(stream.len());
        // BATCH=b: batches of b updates through `process` instead
        let batch: usize = std::env::var("BATCH").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
        for k in 0..=2 * repeat {
            let updates = if k % 2 == 0 { &stream } else { &undo };
            if batch > 0 {
                for chunk in updates.chunks(batch) {
                    results.push(eng.process(Batch {
                        updates: chunk,
                        source: "stream",
                        strictness: Strictness::Strict,
                    })?);
                }
                continue;
            }
            eng.process_each(
                Batch {
                    updates,
                    source: "stream",
                    strictness: Strictness::Strict,
                },
                &mut results,
            )?;
        }
        let secs = t.elapsed().as_secs_f64();
        let (pos, neg) = results
            .iter()
            .fold((0, 0), |(p, n), r| (p + r.positive, n + r.negative));
        let matching: f64 = results.iter().map(|r| r.seconds).sum();
        println!("{qf}: {} results, {secs:.4} s, matching {matching:.4} s", pos + neg);
        if std::env::var("ZEROS").is_ok() {
            // where matching time goes: updates that changed no match
            let zero: Vec<f64> = results
                .iter()
                .filter(|r| r.positive + r.negative == 0)
                .map(|r| r.seconds)
                .collect();
            println!(
                "  {} of {} updates changed no match: {:.4} s of matching",
                zero.len(),
                results.len(),
                zero.iter().sum::<f64>()
            );
        }
    }
    Ok(())
}
