//! `csm verify`: runs several engines on the same input and fails on any
//! disagreement (static count, and per-batch positive/negative counts).

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use csm_baselines::registry::ENGINES;
use csm_engine::{Batch, BatchResult, ContinuousMatcher, EngineError};
use csm_graph::{CsrGraph, DynamicGraph, Strictness, Version};
use csm_planner::count;
use serde_json::json;

use crate::cmd::stream::EACH_RUN;
use crate::input::{self, GraphArgs, QueryArgs, StreamArgs};
use crate::output;

/// Arguments of `csm verify`.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    #[command(flatten)]
    pub query: QueryArgs,
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Updates per batch.
    #[arg(long, short = 'b', value_name = "B", default_value_t = 64)]
    pub batch: usize,
    /// Comma-separated engine names, or `all` (every registered engine);
    /// `gpu` adds the GPU engine (`--variant`, `--budget`, `--gpu-kernel`
    /// ...), which `all` leaves out.
    #[arg(long, value_name = "LIST", default_value = "cpu,oracle,vf2")]
    pub engines: String,
    /// Worker threads of the engines that use them (0 = all cores).
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    pub threads: usize,
    /// Matching order: auto (the default), cost or gcsm.
    #[arg(long, value_name = "ORDER", default_value = "auto")]
    pub order: String,
    #[command(flatten)]
    pub memory: input::MemoryArgs,
    /// Options of the `gpu` engine, when `--engines` names it.
    #[command(flatten)]
    pub gpu: input::GpuArgs,
    /// Print one JSON object with the outcome (the exit code still tells).
    #[arg(long)]
    pub json: bool,
}

// the GPU engine's name in `--engines`
use input::GPU_ENGINE as GPU;

/// The engines a `--engines` value names.
pub fn engine_list(spec: &str) -> Result<Vec<String>> {
    let names = if spec.trim() == "all" {
        ENGINES.iter().map(|s| s.to_string()).collect()
    } else {
        input::split_list(spec)
    };
    if names.is_empty() {
        bail!("--engines: no engine named");
    }
    for n in &names {
        if !ENGINES.contains(&n.as_str()) && n != GPU {
            bail!("unknown engine '{n}'; available: {}, {GPU}", ENGINES.join(", "));
        }
    }
    Ok(names)
}

/// The first position at which the engines' per-batch results differ.
fn first_disagreement(results: &[(usize, Vec<BatchResult>)]) -> Option<usize> {
    let (_, r0) = results.first()?;
    let counts = |r: &BatchResult| (r.positive, r.negative);
    (0..r0.len()).find(|&j| {
        results
            .iter()
            .any(|(_, r)| r.get(j).map(counts) != Some(counts(&r0[j])))
    })
}

/// Ok(None) for an engine that declined with `Unsupported` (reason recorded).
fn supported<T>(r: Result<T, EngineError>, name: &str, skipped: &mut Vec<(String, String)>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(EngineError::Unsupported { reason, .. }) => {
            skipped.push((name.to_string(), reason));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

pub fn run(args: VerifyArgs) -> Result<()> {
    input::use_threads(args.threads);
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let names = engine_list(&args.engines)?;
    // Built before the graph is loaded, so that its options and the device
    // are checked first; it then makes the GPU's static count.
    let mut gpu_static = if names.iter().any(|n| n == GPU) {
        Some(args.gpu.engine(&args.order, false)?)
    } else {
        None
    };
    let mut g = args.graph.load()?;
    let graph_name = g.name.clone();
    let mut q = args.query.load()?;
    // the registry's engines, or a GPU engine from `--variant` and the rest
    let source = input::EngineSource {
        options: args.memory.apply(input::engine_options(args.threads, &args.order)?)?,
        gpu: &args.gpu,
        order: &args.order,
        whole_graph: false,
    };
    let strictness = if args.graph.read.lenient {
        Strictness::Lenient
    } else {
        Strictness::Strict
    };
    let mut w = g.workload(&args.stream, None)?;
    input::drop_zero_edge_labels(&mut w.g0, &w.updates, &mut q.query);
    let mut skipped: Vec<(String, String)> = Vec::new();

    // Static counts on G0.
    let csr0 = CsrGraph::from_data(&w.g0)?;
    let mut statics: Vec<(String, u64)> = Vec::new();
    // Wall time per engine (static count, init and batches).
    let mut wall: HashMap<String, f64> = HashMap::new();
    for n in &names {
        let eng: Box<dyn csm_engine::StaticMatcher> = match gpu_static.take_if(|_| n == GPU) {
            Some(e) => Box::new(e),
            None => source.static_engine(n)?,
        };
        let t0 = Instant::now();
        if let Some(c) = supported(eng.count(&csr0, &q.query), n, &mut skipped)? {
            statics.push((n.clone(), c));
            *wall.entry(n.clone()).or_default() += t0.elapsed().as_secs_f64();
        }
    }
    for (n, why) in &skipped {
        eprintln!("note: {n} skipped: {why}");
    }
    if statics.is_empty() {
        bail!("every engine declined this input; nothing was verified");
    }
    let base = statics[0].1;
    if statics.iter().any(|&(_, c)| c != base) {
        let mut t = output::Table::new(["engine", "|M(G0)|"]);
        for (n, c) in &statics {
            t.row([n.clone(), c.to_string()]);
        }
        eprint!("{}", t.render());
        if args.json {
            output::json_line(&json!({"ok": false, "stage": "static", "static": statics_json(&statics)}));
        }
        bail!("engines disagree on the static count of {} in {graph_name}", q.name);
    }

    // Continuous matching, batch by batch, in lockstep.
    let mut engines: Vec<(String, Box<dyn ContinuousMatcher>)> = Vec::new();
    if !w.updates.is_empty() {
        for (n, _) in &statics {
            let mut e = source.continuous_engine(n)?;
            let t0 = Instant::now();
            let init = e.init(&w.g0, &q.query);
            *wall.entry(n.clone()).or_default() += t0.elapsed().as_secs_f64();
            if supported(init, n, &mut skipped)?.is_some() {
                engines.push((n.clone(), e));
            } else if let Some((_, why)) = skipped.last() {
                eprintln!("note: {n} skipped for the stream: {why}");
            }
        }
    }
    let mut sums = vec![(0u64, 0u64); engines.len()];
    let mut reference = DynamicGraph::from_data(&w.g0)?;
    let batches = w.updates.len().div_ceil(args.batch);
    // batches of one update go through process_each a run at a time (the
    // cpu engine overlaps them), still compared update by update
    let step = if args.batch == 1 { EACH_RUN } else { args.batch };
    let pb = output::progress_bar(batches as u64, !args.json, "batches");
    for (s, chunk) in w.updates.chunks(step).enumerate() {
        let mut results: Vec<(usize, Vec<BatchResult>)> = Vec::new();
        let mut dropped = Vec::new();
        for (k, (n, e)) in engines.iter_mut().enumerate() {
            let t0 = Instant::now();
            let batch = Batch {
                updates: chunk,
                source: &w.source,
                strictness,
            };
            let r = if args.batch == 1 {
                let mut out = Vec::with_capacity(chunk.len());
                e.process_each(batch, &mut out).map(|()| out)
            } else {
                e.process(batch).map(|r| vec![r])
            };
            *wall.entry(n.clone()).or_default() += t0.elapsed().as_secs_f64();
            match supported(r, n, &mut skipped)? {
                Some(r) => results.push((k, r)),
                None => {
                    eprintln!(
                        "note: {n} dropped at batch {}: {}",
                        s * step / args.batch,
                        skipped.last().map_or("", |s| s.1.as_str())
                    );
                    dropped.push(k);
                }
            }
        }
        reference.apply_phased(chunk, &w.source, strictness)?;
        if let Some(j) = first_disagreement(&results) {
            pb.finish_and_clear();
            let (i, updates) = if args.batch == 1 {
                (s * step + j, &chunk[j..=j])
            } else {
                (s, chunk)
            };
            let first = updates.first().map_or(0, |u| u.line);
            let last = updates.last().map_or(0, |u| u.line);
            eprintln!("first differing batch: {i} (updates {first}..={last} of {})", w.source);
            let mut t = output::Table::new(["engine", "positive", "negative"]);
            for (k, r) in &results {
                t.row([
                    engines[*k].0.clone(),
                    r[j].positive.to_string(),
                    r[j].negative.to_string(),
                ]);
            }
            eprint!("{}", t.render());
            if args.json {
                let per: serde_json::Map<String, serde_json::Value> = results
                    .iter()
                    .map(|(k, r)| {
                        (
                            engines[*k].0.clone(),
                            json!({"positive": r[j].positive, "negative": r[j].negative}),
                        )
                    })
                    .collect();
                output::json_line(
                    &json!({"ok": false, "stage": "stream", "batch": i, "first_line": first, "engines": per}),
                );
            }
            bail!(
                "engines disagree on batch {i} (updates at lines {first}..={last} of {})",
                w.source
            );
        }
        for (k, rs) in &results {
            for r in rs {
                sums[*k].0 = count::add(sums[*k].0, r.positive);
                sums[*k].1 = count::add(sums[*k].1, r.negative);
            }
        }
        for k in dropped.into_iter().rev() {
            engines.remove(k);
            sums.remove(k);
        }
        pb.inc(chunk.len().div_ceil(args.batch) as u64);
    }
    pb.finish_and_clear();

    // Final consistency: |M(G0)| + Σpos - Σneg = |M(G_final)|.
    let mut final_count = None;
    if !w.updates.is_empty() {
        let csr1 = reference.to_csr(Version::New);
        let (rname, _) = &statics[0];
        let eng = source.static_engine(rname)?;
        if let Some(c) = supported(eng.count(&csr1, &q.query), rname, &mut skipped)? {
            final_count = Some(c);
            for ((n, _), &(p, m)) in engines.iter().zip(&sums) {
                if [base, p, m, c].into_iter().any(count::saturated) {
                    eprintln!("note: a count overflowed 64 bits: the final count of {n} is not checked");
                } else if (base + p).checked_sub(m) != Some(c) {
                    bail!(
                        "{n}: |M(G0)| + positive - negative = {base} + {p} - {m}, but {rname} counts {c} on the final graph"
                    );
                }
            }
        }
    }

    if args.json {
        let per: serde_json::Map<String, serde_json::Value> = engines
            .iter()
            .zip(&sums)
            .map(|((n, _), &(p, m))| (n.clone(), json!({"positive": p, "negative": m})))
            .collect();
        let sk: serde_json::Map<String, serde_json::Value> =
            skipped.iter().map(|(n, why)| (n.clone(), json!(why))).collect();
        output::json_line(&json!({
            "ok": true,
            "graph": graph_name,
            "query": q.name,
            "static": statics_json(&statics),
            "batches": batches,
            "updates": w.updates.len(),
            "stream": per,
            "final_count": final_count,
            "skipped": sk,
        }));
    } else {
        let mut t = output::Table::new(["engine", "|M(G0)|", "positive", "negative", "final", "time"]);
        for (n, c) in &statics {
            let row = engines.iter().position(|(e, _)| e == n).map(|k| sums[k]);
            let (p, m) = row.map_or(("-".to_string(), "-".to_string()), |(p, m)| {
                (p.to_string(), m.to_string())
            });
            let f = match (row, final_count) {
                (Some(_), Some(f)) => f.to_string(),
                _ => "-".into(),
            };
            let secs = output::secs(wall.get(n).copied().unwrap_or(0.0));
            t.row([n.clone(), output::count_text(*c), p, m, f, secs]);
        }
        print!("{}", t.render());
        let streamed = if w.updates.is_empty() {
            String::new()
        } else {
            format!(" and on all {batches} batches of {} updates", args.batch)
        };
        println!("ok: {} engine(s) agree on the static count{streamed}", statics.len());
        if statics.len() < 2 {
            println!("note: only one engine ran, so nothing was compared across engines");
        }
    }
    Ok(())
}

fn statics_json(statics: &[(String, u64)]) -> serde_json::Value {
    serde_json::Value::Object(
        statics
            .iter()
            .map(|(n, c)| (n.clone(), output::count_json(*c)))
            .collect(),
    )
}
