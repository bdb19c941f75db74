//! `csm match`: the number of embeddings of a query in a graph (static).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use csm_baselines::listing::{list_static, list_static_par};
use csm_engine::EdgesApart;
use csm_graph::CsrGraph;
use csm_planner::{count, QueryGraph};
use serde_json::{json, Value};

use crate::cmd::stream::query_columns;
use crate::input::{self, EngineArgs, GraphArgs, LoadedGraph, QueryArgs};
use crate::limit::{self, Watchdog};
use crate::list_file::{self, ListFile};
use crate::output;

/// Arguments of `csm match`.
#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    #[command(flatten)]
    pub query: QueryArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Also report the number of distinct subgraphs: count / |Aut(Q)|.
    #[arg(long)]
    pub unique: bool,
    /// Give up after this many seconds of matching (counted from the end
    /// of loading): a watchdog prints `"count": null, "timed_out": true`
    /// (text: a line saying so) and ends the run with status 0.
    #[arg(long, value_name = "SECONDS", value_parser = crate::limit::parse_limit)]
    pub time_limit: Option<f64>,
    /// Stop once N embeddings are found (the `-num` cap of the
    /// SubgraphMatching study's and RapidFlow's tools): the count is then
    /// `min(count, N)`, and `"limit_reached": true` when it is N. The `cpu`
    /// engine stops early; other engines count everything and cap.
    #[arg(long, value_name = "N", conflicts_with = "unique", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write every embedding to FILE (`-`: stdout, not with --json), one
    /// line each: `f(u0) f(u1) ...` in the file's vertex ids. Runs the
    /// listing engine (`list`) on the whole graph instead of --engine's;
    /// on several threads without --limit the lines come in no fixed order.
    #[arg(long, value_name = "FILE")]
    pub list: Option<PathBuf>,
}

pub fn run(args: MatchArgs) -> Result<()> {
    input::use_threads(args.engine.threads);
    let mut g = args.graph.load()?;
    let mut q = args.query.load()?;
    input::drop_zero_edge_labels(&mut g.data, &[], &mut q.query);
    list_file::check_args(args.list.as_deref(), args.json, &args.engine.engine)?;
    let engine_name = if args.list.is_some() {
        "list"
    } else {
        &args.engine.engine
    };
    let engine = args.engine.static_engine()?;
    // every engine counts the same on the edges of the query's label
    // triples (an invalid edge keeps the whole graph, whose build names it);
    // a listing reads the whole graph, in the file's numbering
    let t_keep = Instant::now();
    let filter = !args.engine.whole_graph && args.list.is_none();
    let csr = EdgesApart::counted_csr(&g.data, &q.query, filter).map_err(|mut e| {
        e.source_name = g.name.clone();
        e
    })?;
    let keep_seconds = t_keep.elapsed().as_secs_f64();
    let head = json!({
        "engine": engine_name,
        "graph": g.name,
        "query": q.name,
        "vertices": g.data.num_vertices(),
        "edges": g.data.num_edges(),
        "edges_matched": csr.num_edges(),
        "threads": args.engine.threads,
        "pool_threads": rayon::current_num_threads(),
        "order": args.engine.order,
    });
    let t0 = Instant::now();
    let (json, limit, fired_head) = (args.json, args.time_limit.unwrap_or(0.0), head.clone());
    let load_seconds = g.seconds;
    let watchdog = Watchdog::start(limit::deadline(args.time_limit)?, (), move |_| {
        if json {
            let mut o = fired_head;
            o["count"] = Value::Null;
            o["timed_out"] = json!(true);
            o["seconds"] = json!(limit);
            o["load_seconds"] = json!(load_seconds);
            output::json_line(&o);
        } else {
            println!("count   unknown: time limit of {limit} s reached");
        }
    });
    let count = match (&args.list, args.limit) {
        (Some(path), limit) => list_all(path, &csr, &g, &q.query, &args.engine.order, limit),
        (None, Some(n)) => Ok(engine.count_at_most(&csr, &q.query, n)?),
        (None, None) => Ok(engine.count(&csr, &q.query)?),
    };
    watchdog.finish();
    let count = count?;
    let seconds = t0.elapsed().as_secs_f64();
    // (|Aut(Q)| only when asked: a search per pair of query vertices)
    let aut = if args.unique { q.query.automorphism_count() } else { 1 };
    let unique = u64::try_from(u128::from(count) / aut).expect("a quotient of a u64");
    let reached = args.limit.is_some_and(|n| count >= n);
    if args.json {
        let mut o = head;
        o["count"] = output::count_json(count);
        o["seconds"] = json!(seconds);
        o["load_seconds"] = json!(g.seconds);
        o["keep_seconds"] = json!(keep_seconds);
        o["timed_out"] = json!(false);
        if let Some(n) = args.limit {
            o["limit"] = json!(n);
            o["limit_reached"] = json!(reached);
        }
        if args.unique {
            o["unique"] = if count::saturated(count) {
                Value::Null
            } else {
                json!(unique)
            };
            // (a number past 2^64 as its digits: JSON numbers stop there)
            o["automorphisms"] = u64::try_from(aut).map_or_else(|_| json!(aut.to_string()), |a| json!(a));
        }
        if count::saturated(count) {
            o["overflow"] = json!(true);
        }
        output::json_line(&o);
    } else {
        if reached {
            println!("count   {count}  (limit reached: at least this many)");
        } else {
            let text = if count::saturated(count) {
                output::count_text(count)
            } else {
                count.to_string()
            };
            println!("count   {text}");
        }
        if args.unique && !count::saturated(count) {
            println!("unique  {unique}  (|Aut(Q)| = {aut})");
        }
        if let Some(path) = &args.list {
            println!("listed  {count} embeddings in {}", input::output_name(path));
        }
        println!(
            "engine  {} ({} s matching, {} s loading)",
            engine_name,
            fmt3(seconds),
            fmt3(g.seconds)
        );
    }
    Ok(())
}

/// Writes every embedding of `q` in `csr` (the whole graph `g`) to `path`,
/// or the first `limit` ([`list_static`]), and returns how many it wrote.
fn list_all(
    path: &Path,
    csr: &CsrGraph,
    g: &LoadedGraph,
    q: &QueryGraph,
    order: &str,
    limit: Option<u64>,
) -> Result<u64> {
    let file = ListFile::create(path, g.ids.clone(), &query_columns(q.num_vertices()))?;
    let order = input::order_strategy(order)?;
    // (several threads: each writes its lines in pieces, in no fixed order)
    let n = if limit.is_none() && rayon::current_num_threads() > 1 {
        list_static_par(csr, q, order.as_ref(), || {
            let mut buf = file.buffer();
            move |l| buf.push(l)
        })
    } else {
        list_static(csr, q, order.as_ref(), limit, &mut |l| file.write(l, false))
    };
    file.finish()?;
    Ok(n)
}

fn fmt3(s: f64) -> String {
    format!("{s:.3}")
}
