//! `csm sample`: GCSM's cache study (Sec. IV, V-B, VI-D). For each batch of
//! an update stream: stage it, select the lists to cache with a policy
//! (sampled = GCSM's random-walk estimate, degree = Naive, khop = VSGM, none),
//! run exact incremental matching on the CPU (the FE-fraction denominator),
//! count the exact list accesses, and report coverage of the top-1%/5%
//! accessed vertices, the top-5% access share, the hit rate and the FE
//! fraction. See `csm_sampler` for the definitions.

use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use csm_baselines::cpu::{count_delta_parallel, Symmetry};
use csm_graph::{BatchDelta, DynamicGraph, GraphView, Strictness, VertexId};
use csm_planner::{delta_plans, DeltaPlan, GraphStats};
use csm_sampler::cache::list_bytes;
use csm_sampler::{
    in_pool, pool_threads, run_batch_study, BatchReport, CachePolicy, Confidence, DcsrPack, DegreePolicy, KHopPolicy,
    NoCache, SampledPolicy, Splitting, StudyConfig, WalkOptions, WalkRule,
};
use serde_json::{json, Value};

use crate::input::{self, GraphArgs, QueryArgs, StreamArgs};
use crate::output;

/// Which cache policy to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PolicyName {
    /// GCSM: highest estimated access frequency (random walks).
    Sampled,
    /// GCSM's "Naive": highest degree.
    Degree,
    /// VSGM: every list within k hops of the batch.
    Khop,
    /// Zero-copy only: cache nothing.
    None,
}

/// Arguments of `csm sample`.
#[derive(Args, Debug, Clone)]
pub struct SampleArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    #[command(flatten)]
    pub query: QueryArgs,
    /// Update stream (`--updates`), or how to generate it (`--stream-fraction`,
    /// `--stream-count`, `--seed`; GCSM Sec. VI-A). `--seed` also seeds the
    /// walks unless `--walk-seed` is given.
    #[command(flatten)]
    pub stream: StreamArgs,
    /// Updates per batch.
    #[arg(long, short = 'b', value_name = "B", default_value_t = 4096)]
    pub batch: usize,
    /// Stop after N batches.
    #[arg(long, value_name = "N")]
    pub max_batches: Option<usize>,
    /// Cache policy.
    #[arg(long, value_enum, default_value_t = PolicyName::Sampled)]
    pub policy: PolicyName,
    /// Hops for `--policy khop` (default: the smallest k that covers every
    /// list the query's delta plans can read).
    #[arg(long, value_name = "K")]
    pub k: Option<usize>,
    /// Cache budget: bytes of the DCSR pack, with an optional K/M/G suffix
    /// (powers of 1024), or `P%` of the whole graph's lists (default:
    /// unlimited, the paper's setting where every sampled list fits).
    #[arg(long, value_name = "BYTES")]
    pub budget: Option<String>,
    /// Eq. (5) walk count: resolve frequency gaps of α (C_x = (1+α) C_y)...
    #[arg(long, value_name = "A", requires = "delta", conflicts_with_all = ["walks", "fixed_walks"])]
    pub alpha: Option<f64>,
    /// ...with confidence δ (misranking probability at most 1 - δ).
    #[arg(long, value_name = "D", requires = "alpha")]
    pub delta: Option<f64>,
    /// Exactly M walks per batch.
    #[arg(long, value_name = "M", conflicts_with = "fixed_walks")]
    pub walks: Option<u64>,
    /// The paper's rule M = |ΔE|·D^(n-2)/32^n (the default).
    #[arg(long)]
    pub fixed_walks: bool,
    /// Eq. (5) refinement: walks of the first round.
    #[arg(long, value_name = "M", default_value_t = 1024)]
    pub initial_walks: u64,
    /// Eq. (5) refinement: cap on the walks per batch.
    #[arg(long, value_name = "M", default_value_t = 1 << 26)]
    pub max_walks: u64,
    /// Eq. (5) refinement: C_y is taken among the top F of the sampled
    /// vertices (within the budget); 1 = every vertex that would be cached.
    #[arg(long, value_name = "F", default_value_t = 0.05)]
    pub focus: f64,
    /// How the merged walk splits walks among children: multinomial (exactly
    /// M independent walks) or independent (the paper's per-child binomials).
    #[arg(long, value_name = "S", default_value = "multinomial")]
    pub splitting: Splitting,
    /// Seed of the walks (default: --seed).
    #[arg(long, value_name = "S")]
    pub walk_seed: Option<u64>,
    /// Run the estimation on one thread (default: rayon over the roots).
    #[arg(long)]
    pub sequential: bool,
    /// Worker threads for estimation, exact matching and counting (0 = all cores).
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    pub threads: usize,
    /// Matching order: gcsm (GCSM's fixed order) or cost.
    #[arg(long, value_name = "ORDER", default_value = "gcsm")]
    pub order: String,
    /// Skip building the DCSR pack of each selection.
    #[arg(long)]
    pub no_pack: bool,
    /// Print JSON lines (one per batch, then a summary object) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Parses `--budget`: `unlimited`, `N`, `N{K,M,G}` or `P%` (of `graph_bytes`).
pub fn parse_budget(s: &str, graph_bytes: usize) -> Result<usize> {
    input::parse_size("--budget", s, Some(graph_bytes))
}

impl SampleArgs {
    /// The walk-count rule the flags ask for.
    pub fn walk_rule(&self) -> Result<WalkRule> {
        Ok(match (self.alpha, self.delta, self.walks) {
            (Some(alpha), Some(delta), _) => {
                let c = Confidence {
                    alpha,
                    delta,
                    initial: self.initial_walks,
                    max_walks: self.max_walks,
                    focus: self.focus,
                    ..Confidence::default()
                };
                c.validate().map_err(|e| anyhow!("--alpha/--delta: {e}"))?;
                WalkRule::Confidence(c)
            }
            (_, _, Some(0)) => bail!("--walks must be at least 1"),
            (_, _, Some(m)) => WalkRule::Fixed(m),
            _ => WalkRule::Paper,
        })
    }

    /// The policy the flags ask for.
    pub fn policy(&self) -> Result<Box<dyn CachePolicy>> {
        Ok(match self.policy {
            PolicyName::Sampled => Box::new(SampledPolicy {
                rule: self.walk_rule()?,
                walk: WalkOptions {
                    splitting: self.splitting,
                    parallel: !self.sequential,
                },
                seed: self.walk_seed.unwrap_or(self.stream.seed),
            }),
            PolicyName::Degree => Box::new(DegreePolicy),
            PolicyName::Khop => Box::new(KHopPolicy { k: self.k }),
            PolicyName::None => Box::new(NoCache),
        })
    }
}

fn batch_json(r: &BatchReport) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn budget_text(b: usize) -> String {
    if b == usize::MAX {
        "unlimited".into()
    } else {
        format!("{} bytes", output::group(b as u64))
    }
}

pub fn run(args: SampleArgs) -> Result<()> {
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    if !args.stream.given() {
        bail!("give the updates: --updates FILE, or --stream-fraction F / --stream-count N to generate them");
    }
    if args.k.is_some() && args.policy != PolicyName::Khop {
        bail!("--k only applies to --policy khop");
    }
    let policy = args.policy()?;

    let mut g = args.graph.load()?;
    let mut q = args.query.load()?;
    let order = input::order_strategy(&args.order)?;
    let mut w = g.workload(&args.stream, None)?;
    input::drop_zero_edge_labels(&mut w.g0, &w.updates, &mut q.query);
    let mut dg = DynamicGraph::from_data(&w.g0).map_err(|mut e| {
        e.source_name = g.name.clone();
        e
    })?;
    let plans: Vec<DeltaPlan> = delta_plans(&q.query, order.as_ref(), &GraphStats::of(&dg));
    let graph_bytes = DcsrPack::EMPTY_BYTES
        + (0..dg.num_vertices() as VertexId)
            .map(|v| list_bytes(&dg, v))
            .sum::<usize>();
    let budget = match &args.budget {
        Some(s) => parse_budget(s, graph_bytes)?,
        None => usize::MAX,
    };
    let cfg = StudyConfig {
        batch_size: args.batch,
        budget_bytes: budget,
        max_batches: args.max_batches,
        strictness: if args.graph.read.lenient {
            Strictness::Lenient
        } else {
            Strictness::Strict
        },
        source: w.source.clone(),
        pack: !args.no_pack,
        parallel_exact: true,
    };
    // the cpu engine's exact matcher (with its single-edge symmetry shortcut)
    let sym = Symmetry::of(&q.query, &plans);
    let exact = |g: &DynamicGraph, p: &[DeltaPlan], d: &BatchDelta| count_delta_parallel(g, p, Some(&sym), d);

    let total = args
        .max_batches
        .map_or(w.updates.len(), |m| w.updates.len().min(m.saturating_mul(args.batch)));
    let pb = output::progress_bar(total as u64, !args.json, "updates");
    let json = args.json;
    let mut table = output::Table::new([
        "batch",
        "updates",
        "roots",
        "D",
        "walks",
        "cached",
        "cov top1",
        "cov top5",
        "top5 share",
        "hit rate",
        "FE",
    ]);
    let t0 = Instant::now();
    let result = in_pool(args.threads, || {
        run_batch_study(&mut dg, &plans, &w.updates, policy.as_ref(), &cfg, &exact, |r| {
            if json {
                output::json_line(&batch_json(r));
            } else {
                table.row([
                    r.batch.to_string(),
                    r.updates.to_string(),
                    r.roots.to_string(),
                    r.max_degree.to_string(),
                    r.walks.map_or("-".into(), |m| m.to_string()),
                    r.cached_vertices.to_string(),
                    pct(r.metrics.coverage_top1),
                    pct(r.metrics.coverage_top5),
                    pct(r.metrics.top5_access_share),
                    pct(r.metrics.hit_rate),
                    pct(r.fe_fraction),
                ]);
            }
            pb.inc(r.updates as u64);
        })
    });
    pb.finish_and_clear();
    let (_, s) = result.context("cannot start the thread pool")??;
    let seconds = t0.elapsed().as_secs_f64();

    if json {
        let mut o = json!({
            "summary": true,
            "graph": g.name,
            "query": q.name,
            "query_size": q.query.num_vertices(),
            "vertices": dg.num_vertices(),
            "edges": dg.num_edges(),
            "batch_size": args.batch,
            "budget_bytes": if budget == usize::MAX { Value::Null } else { json!(budget) },
            "graph_bytes": graph_bytes,
            "threads": pool_threads(args.threads),
            "splitting": format!("{:?}", args.splitting).to_lowercase(),
            "seconds": seconds,
            "load_seconds": g.seconds,
        });
        if let (Value::Object(o), Ok(Value::Object(sum))) = (&mut o, serde_json::to_value(&s)) {
            o.extend(sum);
        }
        output::json_line(&o);
    } else {
        print!("{}", table.render());
        println!(
            "policy {}  budget {}  batches {} ({} with accesses)",
            s.policy,
            budget_text(budget),
            s.batches,
            s.measured_batches
        );
        println!(
            "coverage top-1% {}  top-5% {}  top-5% access share {}  hit rate {}",
            pct(s.coverage_top1),
            pct(s.coverage_top5),
            pct(s.top5_access_share),
            pct(s.hit_rate)
        );
        println!(
            "FE fraction {} (mean of batches; {} of total)  walks/batch {:.0}  select {}  exact matching {}",
            pct(s.fe_fraction),
            pct(s.fe_fraction_total),
            s.walks,
            output::secs(s.select_seconds),
            output::secs(s.match_seconds)
        );
        if s.over_budget_batches > 0 {
            println!(
                "warning: {} batch(es) went over the budget (truncated nearest-first)",
                s.over_budget_batches
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets() {
        assert_eq!(parse_budget("4096", 0).unwrap(), 4096);
        assert_eq!(parse_budget("64K", 0).unwrap(), 65536);
        assert_eq!(parse_budget("1.5m", 0).unwrap(), 3 << 19);
        assert_eq!(parse_budget("2G", 0).unwrap(), 2 << 30);
        assert_eq!(parse_budget("10%", 1000).unwrap(), 100);
        assert_eq!(parse_budget("unlimited", 0).unwrap(), usize::MAX);
        assert!(parse_budget("x", 0).is_err());
        assert!(parse_budget("-5", 0).is_err());
    }
}
