//! A batch as its net deletions one at a time, then its net insertions one
//! at a time: the same `positive` and `negative` as Eq. (1)'s delta plans,
//! counted by single-edge updates, which the symmetry shortcut serves (one
//! representative seed per orbit of oriented query edges, the automorphisms
//! left once the edge is bound broken; `csm_planner::symmetry`).
//!
//! Why the counts are exact. Let D = E \ E' and I = E' \ E be the batch's
//! net deletions and insertions (an edge inserted and deleted again in the
//! batch is in neither), and G ∩ G' the graph with the edges of both. An
//! embedding of G that is not one of G' uses an edge of D, and deleting D's
//! edges one at a time from G, d_1 … d_p, loses each such embedding exactly
//! once: at the first d_k it uses. So
//! `negative` = |M(G) \ M(G')| = Σ_k |{f ∈ M(G \ {d_1 … d_(k-1)}) : f uses d_k}|,
//! and likewise, inserting I's edges one at a time onto G ∩ G',
//! `positive` = |M(G') \ M(G)| = Σ_k |{f ∈ M((G ∩ G') ∪ {e_1 … e_k}) : f uses e_k}|.
//! Deletions only remove embeddings and insertions only add them, so no
//! embedding is counted on both sides (the spurious ± pairs that summing a
//! batch's updates in their own order would give, when an embedding appears
//! and vanishes within the batch). Each term is what one single-edge update
//! reports, so the batch runs through the one-at-a-time path
//! ([`CpuEngine::process_each_overlapped`]: overlapped runs on several
//! threads, DCSM's per-update list versions) on the net updates, and the
//! results are summed.
//!
//! Where it pays: a query whose automorphisms map query edges onto each
//! other (a 5-cycle has 10, which leave one representative of its 10
//! oriented edges) runs one seed per changed edge instead of one per
//! oriented query edge, and matches on plain sorted lists
//! ([`csm_graph::CommonView`]) instead of lists with marks and appended
//! parts. Eq. (1) visits every seed once for the whole batch, which wins
//! where the query has no symmetry to use or where one-at-a-time staging
//! costs more than the matching. [`DecomposeChoice`] measures both.

use std::time::Instant;

use csm_engine::{Batch, BatchResult, EngineError};
use csm_graph::{Edge, LocatedUpdate, Strictness, Update};
use csm_planner::{count, SeedRule};

use super::CpuEngine;

/// Whether batches of a registered query run decomposed, checked on the
/// batches themselves. They start decomposed (every query with
/// automorphisms measured so far ran quicker so: below), and after
/// [`KEEP_BATCHES`] batches of at least [`PROBE_MIN_UPDATES`] updates one
/// runs as one Eq. (1) batch; the quicker by matching plus update seconds
/// per update then runs the next batches, [`KEEP_BATCHES`] times the ratio
/// of the two (at most [`KEEP_MAX`]), after which the other way is measured
/// again against the latest of those. Batches of fewer updates run the way
/// last chosen. A stream of a few batches (the Enron benchmark's five)
/// never pays for an Eq. (1) probe that a 5-cycle's batches take 20× longer
/// in.
#[derive(Clone, Copy, Debug)]
pub(super) struct DecomposeChoice {
    /// Seconds per update of the latest batch run each way (Eq. 1, decomposed).
    each: [Option<f64>; 2],
    /// Batches left before the next measurement.
    keep: usize,
    /// The way chosen for those batches.
    decompose: bool,
    /// A way set by [`CpuEngine::decompose_batches`], measured never.
    pub(super) forced: Option<bool>,
}

impl Default for DecomposeChoice {
    fn default() -> Self {
        DecomposeChoice {
            each: [None, None],
            keep: KEEP_BATCHES,
            decompose: true,
            forced: None,
        }
    }
}

/// Batches run the chosen way before the other is measured again, when the
/// two took about as long; a way k times slower is measured k times more
/// rarely (a 5-cycle's Eq. (1) batches took 20× the decomposed ones).
const KEEP_BATCHES: usize = 16;

/// The most batches between two measurements.
const KEEP_MAX: usize = 1024;

/// Batches of fewer updates are not measured (their times are mostly
/// overhead); they run the way last chosen.
const PROBE_MIN_UPDATES: usize = 16;

/// How many embeddings' worth of seeds a single-edge rule must stand for on
/// average (its weight: the orbit of oriented query edges it represents,
/// times the symmetry broken once the edge is bound) for batches to be
/// decomposed at all. Without automorphisms a decomposed batch runs the
/// seeds Eq. (1) runs, one update at a time: on a 2 M-edge R-MAT with 16
/// labels the distinct-label house's batches of 4,096 took 1.1-1.6× as long
/// (this VM, 1 and 2 threads); with them a one-label 5-cycle's took a
/// twentieth, on that graph and on email-Enron.
const MIN_SYMMETRY_SAVING: u64 = 2;

/// `CSM_DECOMPOSE=1` runs every batch that can be decomposed that way,
/// `CSM_DECOMPOSE=0` none (for comparisons; [`CpuEngine::decompose_batches`]
/// does the same per engine).
fn forced_by_env() -> Option<bool> {
    match std::env::var("CSM_DECOMPOSE").ok()?.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

impl DecomposeChoice {
    /// Forgets what was measured (a forced way stays).
    pub(super) fn reset(&mut self) {
        *self = DecomposeChoice {
            forced: self.forced,
            ..DecomposeChoice::default()
        };
    }

    fn forced(&self) -> Option<bool> {
        self.forced.or_else(forced_by_env)
    }

    /// Whether the next batch of `n` updates runs decomposed.
    fn next(&self, n: usize) -> bool {
        if let Some(f) = self.forced() {
            return f;
        }
        if n < PROBE_MIN_UPDATES || self.keep > 0 {
            return self.decompose;
        }
        // the chosen way's run is over: measure the other (again)
        !self.decompose
    }

    /// Records a batch of `n` updates run `decomposed` in `seconds`.
    fn observe(&mut self, decomposed: bool, n: usize, seconds: f64) {
        if n < PROBE_MIN_UPDATES || self.forced().is_some() {
            return;
        }
        self.each[usize::from(decomposed)] = Some(seconds / n as f64);
        if self.keep > 0 {
            self.keep -= 1;
        } else if let [Some(batch), Some(single)] = self.each {
            self.decompose = single < batch;
            let ratio = (batch / single.max(1e-12)).max(single / batch.max(1e-12));
            self.keep = ((KEEP_BATCHES as f64 * ratio) as usize).clamp(KEEP_BATCHES, KEEP_MAX);
        }
    }
}

impl CpuEngine {
    /// Runs every batch that can be decomposed into its net deletions, then
    /// its net insertions, one single-edge update at a time (a batch of
    /// edge updates of a query with automorphisms; docs/ENGINE.md,
    /// "Batches decomposed") that way (`Some(true)`), none (`Some(false)`),
    /// or lets the engine choose and check (`None`, the default).
    pub fn decompose_batches(mut self, way: Option<bool>) -> Self {
        self.decompose.forced = way;
        self
    }

    /// Whether `batch` (the graph's part) can run decomposed: more than one
    /// update, and single-edge rules for both signs that save at least
    /// [`MIN_SYMMETRY_SAVING`]. Vertex updates may be in it (a relabelling
    /// re-addition was split into phases before: `csm_graph::phases`).
    fn decomposable(&self, batch: &Batch<'_>) -> bool {
        let Some(sym) = self.state.as_ref().map(|s| &s.2) else {
            return false;
        };
        let saves = |rules: &Option<(Vec<SeedRule>, _)>| {
            rules.as_ref().is_some_and(|(rules, _)| {
                let seeds: u64 = rules.iter().map(|r| r.weight).sum();
                seeds >= MIN_SYMMETRY_SAVING * rules.len().max(1) as u64
            })
        };
        saves(&sym.positive) && saves(&sym.negative) && batch.updates.len() > 1
    }

    /// Runs `batch` decomposed or as one Eq. (1) batch (`eq1`), as
    /// [`DecomposeChoice`] says, and learns from its time.
    pub(super) fn process_graph_choosing(
        &mut self,
        batch: Batch<'_>,
        eq1: impl FnOnce(&mut Self, Batch<'_>) -> Result<BatchResult, EngineError>,
    ) -> Result<BatchResult, EngineError> {
        let n = batch.updates.len();
        let can = self.decomposable(&batch);
        let decompose = can && self.decompose.next(n);
        let r = if decompose {
            self.process_decomposed(batch)?
        } else {
            eq1(self, batch)?
        };
        if can {
            self.decompose.observe(decompose, n, r.seconds + r.update_seconds);
        }
        Ok(r)
    }

    /// The batch's net deletions one at a time, then its net insertions
    /// ([module docs](self)), summed into one result. The batch is
    /// validated first as a whole (staged and aborted), so an invalid batch
    /// fails with its own error and leaves the graph unchanged.
    ///
    /// Vertex updates: the vertices new in G' are added first and those
    /// gone from G' removed last. An isolated vertex is in no embedding (a
    /// query with automorphism rules has edges at every vertex: it is
    /// connected, with at least one edge), so neither changes a count; a
    /// removed vertex's edges are net deletions of the batch (staging
    /// deletes them), so it is isolated when it goes, and a new vertex's
    /// edges are net insertions, made after it exists.
    fn process_decomposed(&mut self, batch: Batch<'_>) -> Result<BatchResult, EngineError> {
        let t0 = Instant::now();
        let g = &mut self
            .state
            .as_mut()
            .ok_or_else(|| EngineError::NotInitialised("cpu".into()))?
            .0;
        g.stage(batch.updates, batch.source, batch.strictness)?;
        let delta = g.pending_delta().expect("just staged");
        let line = batch.updates.first().map_or(0, |u| u.line);
        let at = |update| LocatedUpdate { line, update };
        let added = delta
            .added_vertices
            .iter()
            .map(|&(id, label)| at(Update::AddVertex { id, label }));
        let removed = (delta.removed_vertices.iter()).map(|&id| at(Update::RemoveVertex { id, label: None }));
        let net: Vec<LocatedUpdate> = added
            .chain(delta.deleted.iter().map(|&e: &Edge| at(Update::RemoveEdge(e))))
            .chain(delta.inserted.iter().map(|&e: &Edge| at(Update::AddEdge(e))))
            .chain(removed)
            .collect();
        let skipped = delta.skipped;
        g.abort();
        let validated = t0.elapsed().as_secs_f64();
        // the graph's own updates: nothing kept apart to route
        let apart = self.apart.take();
        let mut each = Vec::with_capacity(net.len());
        let run = self.process_each_overlapped(
            Batch {
                updates: &net,
                source: batch.source,
                strictness: Strictness::Strict,
            },
            None,
            &mut each,
        );
        self.apart = apart;
        run?;
        debug_assert_eq!(each.len(), net.len());
        let mut r = BatchResult {
            update_seconds: validated,
            skipped,
            ..BatchResult::default()
        };
        for e in &each {
            r.positive = count::add(r.positive, e.positive);
            r.negative = count::add(r.negative, e.negative);
            r.seconds += e.seconds;
            r.update_seconds += e.update_seconds;
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `batches` batches of 100 updates, each taking `secs(decomposed)`,
    /// and returns the ways they ran.
    fn ways(c: &mut DecomposeChoice, batches: usize, secs: impl Fn(bool) -> f64) -> Vec<bool> {
        (0..batches)
            .map(|_| {
                let d = c.next(100);
                c.observe(d, 100, secs(d));
                d
            })
            .collect()
    }

    #[test]
    fn starts_decomposed_then_probes_and_keeps_the_quicker_way() {
        // Eq. (1) 20x slower: one probe after KEEP_BATCHES, then 320 more
        let mut c = DecomposeChoice::default();
        let w = ways(&mut c, 400, |d| if d { 1.0 } else { 20.0 });
        assert!(w[..KEEP_BATCHES].iter().all(|&d| d));
        assert!(!w[KEEP_BATCHES]);
        assert!(w[KEEP_BATCHES + 1..KEEP_BATCHES + 1 + 320].iter().all(|&d| d));
        assert_eq!(w.iter().filter(|&&d| !d).count(), 2);
        // Eq. (1) quicker: after the probe every batch runs it, and
        // decomposing is measured again only KEEP_BATCHES later
        let mut c = DecomposeChoice::default();
        let w = ways(&mut c, 60, |d| if d { 3.0 } else { 2.0 });
        assert!(w[KEEP_BATCHES..KEEP_BATCHES + 1 + 24].iter().all(|&d| !d));
        assert!(w[KEEP_BATCHES + 25]);
        // small batches run the way chosen, unmeasured
        let mut c = DecomposeChoice::default();
        ways(&mut c, KEEP_BATCHES + 1, |d| if d { 3.0 } else { 2.0 });
        assert!(!c.next(PROBE_MIN_UPDATES - 1));
        // forced: never measured
        let mut c = DecomposeChoice {
            forced: Some(false),
            ..DecomposeChoice::default()
        };
        assert!(ways(&mut c, 40, |_| 1.0).iter().all(|&d| !d));
    }
}
