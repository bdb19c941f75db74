//! `csm match`: the number of embeddings of a query in a graph (static).

use std::time::Instant;

use anyhow::Result;
use clap::Args;
use csm_graph::format::Format;
use csm_graph::CsrGraph;
use serde_json::json;

use crate::input::{self, EngineArgs, GraphArgs};
use crate::output;

/// Arguments of `csm match`.
#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Query file, or a standard query name (`triangle`, `house`, ...; add
    /// `:l0,l1,...` for vertex labels).
    #[arg(long, short = 'q', value_name = "QUERY")]
    pub query: String,
    /// Format of a query file (default: detected).
    #[arg(long, value_name = "FORMAT", value_parser = input::parse_format)]
    pub query_format: Option<Format>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Also report the number of distinct subgraphs: count / |Aut(Q)|.
    #[arg(long)]
    pub unique: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: MatchArgs) -> Result<()> {
    let g = args.graph.load()?;
    let q = input::load_query(&args.query, args.query_format)?;
    let engine = args.engine.static_engine()?;
    let csr = CsrGraph::from_data(&g.data).map_err(|mut e| {
        e.source_name = g.name.clone();
        e
    })?;
    let t0 = Instant::now();
    let count = engine.count(&csr, &q.query)?;
    let seconds = t0.elapsed().as_secs_f64();
    let aut = q.query.automorphism_count().max(1);
    if args.json {
        let mut o = json!({
            "engine": args.engine.engine,
            "graph": g.name,
            "query": q.name,
            "vertices": g.data.num_vertices(),
            "edges": g.data.num_edges(),
            "threads": args.engine.threads,
            "order": args.engine.order,
            "count": count,
            "seconds": seconds,
            "load_seconds": g.seconds,
        });
        if args.unique {
            o["unique"] = json!(count / aut);
            o["automorphisms"] = json!(aut);
        }
        output::json_line(&o);
    } else {
        println!("count   {count}");
        if args.unique {
            println!("unique  {}  (|Aut(Q)| = {aut})", count / aut);
        }
        println!(
            "engine  {} ({} s matching, {} s loading)",
            args.engine.engine,
            fmt3(seconds),
            fmt3(g.seconds)
        );
    }
    Ok(())
}

fn fmt3(s: f64) -> String {
    format!("{s:.3}")
}
