//! Engines by name: the list `csm --engine` accepts.

use std::sync::Arc;

use csm_engine::{ContinuousMatcher, EngineError, Recount, StaticMatcher};
use csm_planner::OrderStrategy;

use crate::listing::{ListingCount, ListingEngine};
use crate::oracle::{Vf2Within, VF2_TIME_BUDGET_S};
use crate::{BruteForce, CpuEngine};

/// Options common to every CPU engine.
#[derive(Clone)]
pub struct EngineOptions {
    /// Worker threads (0 = all cores).
    pub threads: usize,
    pub order: Arc<dyn OrderStrategy>,
    /// Static counts of the `cpu` engines read neighbour lists grouped by
    /// label ([`csm_graph::CsrByLabel`]) when labels matter (default true).
    pub label_groups: bool,
    /// Continuous matching of the `cpu` engines keeps the edges of label
    /// triples the query lacks apart from its graph (default true; see
    /// [`csm_engine::apart`]).
    pub edge_filter: bool,
    /// Bytes the materialising baselines may hold for intermediate results
    /// (`geneva`'s blocks, `stwig`'s hash tables); `None` = their defaults.
    pub memory_budget: Option<usize>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            threads: 0,
            order: Arc::new(csm_planner::SampledOrder::default()),
            label_groups: true,
            edge_filter: true,
            memory_budget: None,
        }
    }
}

/// Names of the CPU engines available to `csm match` and `csm stream`.
pub const ENGINES: &[&str] = &[
    "cpu",
    "cpu-nosym",
    "cpu-whole",
    "oracle",
    "vf2",
    "stwig",
    "pbe",
    "geneva",
    "rapidflow",
    "list",
];

/// The `cpu` engine with `opts`.
fn cpu(opts: &EngineOptions) -> Result<CpuEngine, EngineError> {
    let e = CpuEngine::new(opts.threads, opts.order.clone())?;
    let e = if opts.label_groups { e } else { e.without_label_groups() };
    Ok(if opts.edge_filter { e } else { e.without_edge_filter() })
}

/// The `stwig` engine with `opts`.
fn stwig(opts: &EngineOptions) -> Result<crate::stwig::Stwig, EngineError> {
    let e = crate::stwig::Stwig::new().with_threads(opts.threads)?;
    Ok(match opts.memory_budget {
        Some(b) => e.with_budget_bytes(b),
        None => e,
    })
}

/// The `geneva` engine with `opts` (the budget in 4-byte VIDs).
fn geneva(opts: &EngineOptions) -> Result<crate::geneva::Geneva, EngineError> {
    let e = crate::geneva::Geneva::new(opts.threads)?;
    Ok(match opts.memory_budget {
        Some(b) => e.with_budget_words(b / 4),
        None => e,
    })
}

/// A static matcher by name.
pub fn static_engine(name: &str, opts: &EngineOptions) -> Result<Box<dyn StaticMatcher>, EngineError> {
    Ok(match name {
        "cpu" => Box::new(cpu(opts)?),
        "cpu-nosym" => Box::new(cpu(opts)?.without_symmetry()),
        // the edge filter is continuous matching's only
        "cpu-whole" => Box::new(cpu(opts)?),
        "oracle" => Box::new(BruteForce),
        "vf2" => Box::new(Vf2Within(VF2_TIME_BUDGET_S)),
        "stwig" => Box::new(stwig(opts)?),
        "pbe" => Box::new(crate::pbe::Pbe::default().with_threads(opts.threads)?),
        "geneva" => Box::new(geneva(opts)?),
        "rapidflow" => Box::new(crate::rapidflow::RapidFlow::new(opts.threads)?),
        "list" => Box::new(ListingCount::new(opts.order.clone())),
        _ => return Err(unknown(name)),
    })
}

/// A continuous matcher by name (static engines are lifted by [`Recount`]).
pub fn continuous_engine(name: &str, opts: &EngineOptions) -> Result<Box<dyn ContinuousMatcher>, EngineError> {
    Ok(match name {
        "cpu" => Box::new(cpu(opts)?),
        "cpu-nosym" => Box::new(cpu(opts)?.without_symmetry()),
        "cpu-whole" => Box::new(cpu(opts)?.without_edge_filter()),
        "oracle" => Box::new(Recount::new(BruteForce)),
        "vf2" => Box::new(Recount::new(Vf2Within(VF2_TIME_BUDGET_S))),
        "stwig" => Box::new(Recount::new(stwig(opts)?)),
        "pbe" => Box::new(Recount::new(crate::pbe::Pbe::default().with_threads(opts.threads)?)),
        "geneva" => Box::new(Recount::new(geneva(opts)?)),
        "rapidflow" => Box::new(crate::rapidflow::RapidFlow::new(opts.threads)?),
        // (counts by listing; `csm stream --list` gives it a file; with
        // more than one thread it lists on the caller's pool, as
        // `csm stream --list` does there)
        "list" if opts.threads == 1 => Box::new(ListingEngine::new(opts.order.clone(), Box::new(|_| {}))),
        "list" => Box::new(ListingEngine::parallel(
            opts.order.clone(),
            Arc::new(|| Box::new(|_| {})),
        )),
        _ => return Err(unknown(name)),
    })
}

fn unknown(name: &str) -> EngineError {
    EngineError::Other(format!("unknown engine '{name}'; available: {}", ENGINES.join(", ")))
}
