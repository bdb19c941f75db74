//! Batches that re-add a vertex under another label, processed in two
//! phases ([`csm_graph::phases`]): every engine's
//! [`ContinuousMatcher::process`] asks [`relabel_phases`] first and, when it
//! gets phases, hands them to [`process_phases`].

use std::time::Instant;

use csm_graph::phases::{relabels, split_relabels, Phases, StartState};
use csm_graph::DynamicGraph;
use csm_planner::count;
use serde_json::Value;

use crate::{Batch, BatchResult, ContinuousMatcher, EdgesApart, EngineError};

/// The phases of `batch` when it re-adds a vertex of `start` (the engine's
/// whole graph, nothing pending) under another label; `None` for every
/// other batch (a scan of its vertex additions). An invalid batch is an
/// error here in strict mode, as the engine's own validation would give.
pub fn relabel_phases(start: &impl StartState, batch: Batch<'_>) -> Result<Option<(Phases, f64)>, EngineError> {
    if !relabels(start, batch.updates) {
        return Ok(None);
    }
    let t = Instant::now();
    let phases = split_relabels(start, batch.updates, batch.source, batch.strictness)?;
    Ok(Some((phases, t.elapsed().as_secs_f64())))
}

/// [`relabel_phases`] on an engine's graph `g` and, where the engine keeps
/// edges apart, those edges too (validation sees the whole graph).
pub fn relabel_phases_in(
    g: &DynamicGraph,
    apart: Option<&EdgesApart>,
    batch: Batch<'_>,
) -> Result<Option<(Phases, f64)>, EngineError> {
    match apart {
        Some(apart) => relabel_phases(&apart.whole(g), batch),
        None => relabel_phases(g, batch),
    }
}

/// Runs the two phases of a batch on `m`, one `process` call each, and
/// adds their results up: `positive` and `negative` are the batch's exactly
/// (see [`csm_graph::phases`]), times and skipped updates are summed (the
/// split's own time, `split_seconds`, goes to the update time), and so are
/// numeric engine figures (`extra`); other figures are the last phase's.
///
/// The phases hold only valid updates, so the engine's validation rejects
/// neither; an engine error in the addition phase leaves the removal phase
/// applied.
pub fn process_phases<M: ContinuousMatcher + ?Sized>(
    m: &mut M,
    batch: Batch<'_>,
    phases: (Phases, f64),
) -> Result<BatchResult, EngineError> {
    process_phases_with(batch, phases, |part| m.process(part))
}

/// [`process_phases`] with each phase run by `run` instead of the engine's
/// `process` (for an engine whose `process` does more per batch than a
/// phase should, such as numbering its batches).
pub fn process_phases_with(
    batch: Batch<'_>,
    (phases, split_seconds): (Phases, f64),
    mut run: impl FnMut(Batch<'_>) -> Result<BatchResult, EngineError>,
) -> Result<BatchResult, EngineError> {
    let mut total = BatchResult {
        skipped: phases.skipped,
        update_seconds: split_seconds,
        ..BatchResult::default()
    };
    for part in [&phases.removal, &phases.addition] {
        if part.is_empty() {
            continue;
        }
        let r = run(Batch { updates: part, ..batch })?;
        add(&mut total, r);
    }
    Ok(total)
}

/// Adds `r` into `total`.
fn add(total: &mut BatchResult, r: BatchResult) {
    total.positive = count::add(total.positive, r.positive);
    total.negative = count::add(total.negative, r.negative);
    total.seconds += r.seconds;
    total.update_seconds += r.update_seconds;
    total.skipped += r.skipped;
    for (key, value) in r.extra {
        let summed = match (total.extra.get(&key), &value) {
            (Some(Value::Number(a)), Value::Number(b)) => match (a.as_u64(), b.as_u64()) {
                (Some(a), Some(b)) => Some(Value::from(a.saturating_add(b))),
                _ => a.as_f64().zip(b.as_f64()).map(|(a, b)| Value::from(a + b)),
            },
            _ => None,
        };
        total.extra.insert(key, summed.unwrap_or(value));
    }
}
