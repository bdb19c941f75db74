//! One update at a time, overlapped: a run of single-edge updates is matched
//! concurrently, each update against the graph as it stood at its own turn,
//! with the results of one `process` call per update.
//!
//! An update that changes one edge gains or loses exactly the embeddings
//! that bind its edge to a query edge and read every other relation in the
//! graph without that edge (the single-edge shortcut of
//! `csm_planner::symmetry`, run on a [`csm_graph::CommonView`] by
//! `process`). Those graphs, one per update of the run, are kept as
//! per-update list versions ([`UpdateVersions`], DCSM's multi-version graph,
//! paper 001 Sec. 1.4), so the updates need not wait for each other: the
//! whole run is validated once, its versions are built (one list copy per
//! changed endpoint, chains of different vertices in parallel), the updates
//! are matched in parallel on the pool (a heavy update's nodes still split,
//! `count_split`), and the run is staged and committed as one batch. This is how DCSM overlaps batches; it gives a
//! one-update-at-a-time stream the threads that a single light update
//! cannot use.

use std::collections::HashSet;
use std::time::Instant;

use csm_engine::{past, process_each_sequentially, Batch, BatchResult, EngineError, FIRST_TIMED_RUN};
use csm_graph::{
    DynamicGraph, Edge, GraphView, HubLabelGroups, Hubs, InputError, LocatedUpdate, NewGroups, Strictness, Update,
    UpdateVersions, Version,
};
use csm_planner::count;
use csm_planner::DeltaCounts;
use rayon::prelude::*;

use super::{commit_with_hubs, count_split_in, graph_work, single_edge_seeds, CpuEngine, Seed, Shared, Symmetry};

/// Most updates in one overlapped run.
const RUN_MAX: usize = 4096;

/// Most updates in a run that measures whether overlapping pays (the first
/// run of a stream, and the first after a sequential span).
const PROBE_RUN: usize = 256;

/// Updates processed one by one after a run showed that overlapping did not
/// pay, before the next probe.
const SEQUENTIAL_SPAN: usize = 4096;

/// One by one is chosen only below this fraction of the overlapped run's
/// time (the 4-clique on Enron is within noise of even and stays
/// overlapped; the triangle is at about half).
const SEQUENTIAL_MARGIN: f64 = 0.75;

/// An overlapped run whose wall time per update is below this is mostly
/// overhead (versions, thread hand-offs), and the matching time its updates
/// took on the threads overstates what one thread spends on them (cold
/// caches, contention): an edge-labelled 4-vertex query measured 3.3 µs of
/// matching per update in its run against 0.5 µs one by one. After such a
/// run the engine measures one by one directly on the next
/// [`SAMPLE_SPAN`] updates ([`OverlapChoice::sampling`]), then runs another
/// short overlapped run: a stream's first run pays for warming up (the
/// diamond on Enron: 12 µs per update in the first run, 6 µs later), so
/// the sample is held against the second.
const LIGHT_EACH: f64 = 50e-6;

/// A light run is sampled only when its own clock credits overlapping with
/// less than this speed-up (one by one: its summed matching and updates
/// against its wall time); on 16 threads the 4-cycle on Enron is light
/// (3 µs per update) but overlapping is 5× quicker, and sampling it cost
/// a fifth of the stream's time.
const SAMPLE_BELOW_SPEEDUP: f64 = 3.0;

/// Updates of a one-by-one sample after a light run (the first quarter
/// is not counted: it rebuilds what the run left cold).
const SAMPLE_SPAN: usize = 256;

/// Whether overlapping pays for the query and stream at hand. An overlapped
/// run copies each update's endpoint lists into versions; for the lightest
/// queries (a triangle's update is one intersection of those same lists)
/// that copy costs as much as the matching it lets run in parallel, and on
/// two threads the run took 2-3× as long as one thread. Each overlapped run
/// measures both sides (its own wall time, and the matching time its
/// updates took summed over threads, i.e. what one thread would spend);
/// when one by one would have been clearly quicker ([`SEQUENTIAL_MARGIN`])
/// in two runs in a row, the next [`SEQUENTIAL_SPAN`] updates go one by one,
/// then a short run ([`PROBE_RUN`]) measures again. A light run
/// ([`LIGHT_EACH`]) is checked against a short one-by-one sample instead.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct OverlapChoice {
    /// Updates left to process one by one.
    sequential_left: usize,
    /// Whether the next run is a probe (capped at [`PROBE_RUN`]).
    measured: bool,
    /// Consecutive runs that found one by one quicker (two switch).
    strikes: u8,
    /// Graph-update seconds per update when processed one by one (latest
    /// sequential span), if measured.
    update_seconds_each: Option<f64>,
    /// A one-by-one sample runs after a light overlapped run.
    sampling: bool,
    /// Seconds per update one by one in that sample, held against the next
    /// overlapped run's wall seconds per update: below
    /// [`SEQUENTIAL_MARGIN`] of them, the next [`SEQUENTIAL_SPAN`] updates
    /// go one by one.
    sampled_each: Option<f64>,
    /// The latest overlapped run: its updates and wall seconds (sizes the
    /// runs before a deadline, [`timed_run_cap`]).
    last_run: Option<(usize, f64)>,
}

/// Most updates in an overlapped run that starts before `deadline`, given
/// the latest run (updates, wall seconds): at most twice its length, and
/// at most what fits in a quarter of the time left at its pace. A run is
/// not interrupted, so this bounds how far past the deadline the last one
/// ends; doubling keeps a stream whose first updates are light from
/// sizing a long run by them (a size-8 query on Enron: 3.5 ms per update
/// in its first 16, 22 ms over the stream).
fn timed_run_cap(deadline: Instant, last_run: Option<(usize, f64)>) -> usize {
    let Some((n, wall)) = last_run else {
        return FIRST_TIMED_RUN;
    };
    let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
    let fits = left / 4.0 / (wall / n.max(1) as f64).max(1e-9);
    (fits as usize).min(2 * n).clamp(1, RUN_MAX)
}

/// What an overlapped run measured.
struct RunClock {
    /// Wall seconds of the whole run (validation, versions, matching, staging).
    wall: f64,
    /// Matching seconds summed over its updates.
    matching: f64,
    /// Validation, staging and commit seconds.
    updating: f64,
}

/// Most list entries a run may copy into its versions (64 MiB of ids): a
/// run that keeps touching a hub ends early instead.
const RUN_MAX_ENTRIES: usize = 1 << 24;

impl CpuEngine {
    /// Whether one-at-a-time streams run overlapped: several threads and
    /// single-edge rules for both signs.
    fn overlaps(&self) -> bool {
        let sym = self.state.as_ref().map(|s| &s.2);
        self.threads > 1 && sym.is_some_and(|s| s.positive.is_some() && s.negative.is_some())
    }

    /// [`ContinuousMatcher::process_each`]: runs of updates that can overlap
    /// ([`run_len`]) are matched concurrently; any other update (a vertex
    /// update, an edge's second update in a run), and every update of a run
    /// that does not validate, goes through `process` alone, which also
    /// reports the first invalid update's error.
    pub(super) fn process_each_overlapped(
        &mut self,
        batch: Batch<'_>,
        deadline: Option<Instant>,
        out: &mut Vec<BatchResult>,
    ) -> Result<(), EngineError> {
        if !self.overlaps() {
            return process_each_sequentially(self, batch, deadline, out);
        }
        let mut seen = HashSet::new();
        let mut rest = batch.updates;
        while !rest.is_empty() && !past(deadline) {
            if self.overlap.sequential_left > 0 {
                let (span, tail) = rest.split_at(self.overlap.sequential_left.min(rest.len()));
                let from = out.len();
                process_each_sequentially(self, Batch { updates: span, ..batch }, deadline, out)?;
                if out.len() - from < span.len() {
                    // stopped at the deadline
                    self.overlap.sequential_left -= out.len() - from;
                    break;
                }
                let updating: f64 = out[from..].iter().map(|r| r.update_seconds).sum();
                self.overlap.update_seconds_each = Some(updating / span.len() as f64);
                self.overlap.sequential_left -= span.len();
                if self.overlap.sequential_left == 0 && std::mem::take(&mut self.overlap.sampling) {
                    // the first quarter warms up (the hubs' groups the run's
                    // commit dropped are built again)
                    let warm = &out[from + span.len() / 4..];
                    let each = warm.iter().map(|r| r.seconds + r.update_seconds).sum::<f64>() / warm.len() as f64;
                    self.overlap.sampled_each = Some(each);
                }
                rest = tail;
                continue;
            }
            let g = &self.state.as_ref().expect("overlaps() checked").0;
            let mut cap = if self.overlap.measured { RUN_MAX } else { PROBE_RUN };
            if let Some(d) = deadline {
                cap = cap.min(timed_run_cap(d, self.overlap.last_run));
            }
            let n = run_len(g, &rest[..rest.len().min(cap)], &mut seen).max(1);
            let (run, tail) = rest.split_at(n);
            let sub = Batch { updates: run, ..batch };
            match (n > 1).then(|| self.process_run(run, batch.source, out)) {
                Some(Ok(clock)) => self.choose(&clock, n),
                _ => {
                    let from = out.len();
                    process_each_sequentially(self, sub, deadline, out)?;
                    if out.len() - from < n {
                        break;
                    }
                }
            }
            rest = tail;
        }
        Ok(())
    }

    /// After an overlapped run of `n` updates: one by one for a while if
    /// that would have been quicker ([`OverlapChoice`]).
    fn choose(&mut self, clock: &RunClock, n: usize) {
        let updating = self
            .overlap
            .update_seconds_each
            .map_or(clock.updating, |each| each * n as f64);
        let one_by_one = clock.matching + updating;
        self.overlap.measured = true;
        self.overlap.last_run = Some((n, clock.wall));
        let run_each = clock.wall / n.max(1) as f64;
        if let Some(each) = self.overlap.sampled_each.take() {
            // the run after a one-by-one sample decides
            self.overlap.strikes = 0;
            if each < SEQUENTIAL_MARGIN * run_each {
                self.overlap.sequential_left = SEQUENTIAL_SPAN;
                self.overlap.measured = false;
            }
        } else if one_by_one >= SEQUENTIAL_MARGIN * clock.wall
            && one_by_one < SAMPLE_BELOW_SPEEDUP * clock.wall
            && run_each < LIGHT_EACH
        {
            // a light run: measure one by one itself on the next updates,
            // then probe again
            self.overlap.strikes = 0;
            self.overlap.sampling = true;
            self.overlap.sequential_left = SAMPLE_SPAN;
            self.overlap.measured = false;
        } else if one_by_one >= SEQUENTIAL_MARGIN * clock.wall {
            self.overlap.strikes = 0;
        } else if self.overlap.strikes == 0 {
            // once may be noise (a thread descheduled): probe again
            self.overlap.strikes = 1;
            self.overlap.measured = false;
        } else {
            self.overlap.strikes = 0;
            self.overlap.sequential_left = SEQUENTIAL_SPAN;
            self.overlap.measured = false;
        }
    }

    /// Validates `run` (strictly; on error nothing changes and nothing is
    /// reported), matches its updates concurrently on their snapshots of the
    /// committed graph, then stages and commits it as one batch, and appends
    /// one result per update. A result's `seconds` is its share of the run's
    /// matching wall time (version building included), in proportion to its
    /// own matching time; `update_seconds` an equal share of validation,
    /// staging and commit.
    fn process_run(
        &mut self,
        run: &[LocatedUpdate],
        source: &str,
        out: &mut Vec<BatchResult>,
    ) -> Result<RunClock, InputError> {
        let (g, _, sym, hubs, _) = self.state.as_mut().expect("overlaps() checked");
        let t0 = Instant::now();
        let wants_pool = g.wants_pool(run.len());
        graph_work(&self.pool, wants_pool, || g.check(run, source))?;
        let checked = t0.elapsed().as_secs_f64();

        let t1 = Instant::now();
        let g: &DynamicGraph = g;
        // hub lists the run does not change are read by label (none
        // without hubs); the run is not staged, so nothing is touched yet
        let no_hubs = Hubs::default();
        let grouped = HubLabelGroups::new(g, hubs.as_ref().unwrap_or(&no_hubs), &[]);
        let all = run_edges(g, run);
        let sym: &Symmetry = sym;
        // an edge that carries no query edge's labels seeds nothing and is
        // never read by a match (a list read keeps only the neighbours of
        // one query edge's labels): it is left out of the versions and the
        // matching, and reports zero. The seeds are found once, on the
        // graph before the run (labels decide them; degrees only orient a
        // reversible seed, which counts the same either way).
        let seeds: Vec<Vec<Seed>> = all
            .iter()
            .map(|&(e, insert)| {
                let side = if insert { &sym.positive } else { &sym.negative };
                let (rules, plans) = side.as_ref().expect("overlaps() checked");
                single_edge_seeds(g, plans, &e, rules)
            })
            .collect();
        let (edges, seeded): (Vec<(Edge, bool)>, Vec<&[Seed]>) = all
            .iter()
            .zip(&seeds)
            .filter(|p| !p.1.is_empty())
            .map(|(&e, s)| (e, s.as_slice()))
            .unzip();
        let pool = self.pool.as_ref();
        self.versions.build(&grouped, &edges);
        let versions = &self.versions;
        let matched: Vec<(DeltaCounts, f64)> = pool.install(|| {
            edges
                .par_iter()
                .zip(&seeded)
                .enumerate()
                .map(|(k, (&(_, insert), &seeds))| {
                    let t = Instant::now();
                    let view = versions.view(&grouped, UpdateVersions::common_time(k, insert));
                    let side = if insert { &sym.positive } else { &sym.negative };
                    let (_, plans) = side.as_ref().expect("overlaps() checked");
                    let mut c = DeltaCounts::default();
                    // the seeds in turn: the pool is busy with the run's
                    // other updates, and a heavy node still splits
                    for &(i, x, y, w) in seeds {
                        let p = &plans[i as usize];
                        c.add(
                            p.sign,
                            count::mul(w, count_split_in(&view, &p.plan, &[x, y], true, Shared::default())),
                        );
                    }
                    (c, t.elapsed().as_secs_f64())
                })
                .collect()
        });
        let wall = t1.elapsed().as_secs_f64();
        let mut matched = matched.into_iter();
        let counted: Vec<(DeltaCounts, f64)> = seeds
            .iter()
            .map(|s| {
                if !s.is_empty() {
                    matched.next().expect("one result per matched edge")
                } else {
                    (DeltaCounts::default(), 0.0)
                }
            })
            .collect();

        let t2 = Instant::now();
        let (g, _, _, hubs, _) = self.state.as_mut().expect("checked");
        graph_work(&self.pool, wants_pool, || {
            g.stage(run, source, Strictness::Strict)?;
            commit_with_hubs(g, hubs, NewGroups::default());
            Ok::<_, InputError>(())
        })?;
        let staged = t2.elapsed().as_secs_f64();
        let updating = (checked + staged) / run.len() as f64;
        let own: f64 = counted.iter().map(|c| c.1).sum();
        out.extend(counted.into_iter().map(|(c, t)| BatchResult {
            positive: c.positive,
            negative: c.negative,
            seconds: if own > 0.0 {
                wall * t / own
            } else {
                wall / run.len() as f64
            },
            update_seconds: updating,
            skipped: 0,
            extra: Default::default(),
        }));
        Ok(RunClock {
            wall: checked + wall + staged,
            matching: own,
            updating: checked + staged,
        })
    }
}

/// Length of the longest prefix of `updates` that can run overlapped: edge
/// updates on distinct vertex pairs (so that every version differs from
/// the previous one by one edge and the run stages as one batch), at most
/// [`RUN_MAX`] of them and about [`RUN_MAX_ENTRIES`] copied list entries.
/// Validity is not checked here (staging does).
fn run_len(g: &DynamicGraph, updates: &[LocatedUpdate], seen: &mut HashSet<(u32, u32)>) -> usize {
    seen.clear();
    let deg = |v| g.nbrs(v, Version::New).len();
    let mut entries = 0;
    for (k, u) in updates.iter().take(RUN_MAX).enumerate() {
        let e = match u.update {
            Update::AddEdge(e) | Update::RemoveEdge(e) => e,
            Update::AddVertex { .. } | Update::RemoveVertex { .. } => return k,
        };
        // each update copies both endpoint lists
        entries += deg(e.u) + deg(e.v) + 2 * k;
        if !seen.insert(e.key()) || (k > 0 && entries > RUN_MAX_ENTRIES) {
            return k;
        }
    }
    updates.len().min(RUN_MAX)
}

/// The edges of a validated run in order, each with its label as stored
/// (a deletion's from the graph) and whether it is an insertion.
fn run_edges(g: &DynamicGraph, run: &[LocatedUpdate]) -> Vec<(Edge, bool)> {
    run.iter()
        .map(|u| match u.update {
            Update::AddEdge(e) => {
                let label = if g.edge_labelled() { e.label } else { 0 };
                (Edge::new(e.u, e.v, label).normalized(), true)
            }
            Update::RemoveEdge(e) => {
                let label = g.edge_label(e.u, e.v).expect("a validated deletion's edge exists");
                (Edge::new(e.u, e.v, label).normalized(), false)
            }
            _ => unreachable!("run_len() admits edge updates only"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use csm_engine::ContinuousMatcher;
    use csm_graph::gen::{graph_from_pairs, make_stream, rmat, standard_query, StreamAmount};
    use csm_planner::{GcsmOrder, QueryGraph};

    use super::*;

    #[test]
    fn one_by_one_only_when_clearly_quicker() {
        let mut e = CpuEngine::new(2, Arc::new(GcsmOrder)).expect("pool");
        let clock = |wall, matching, updating| RunClock {
            wall,
            matching,
            updating,
        };
        // once probes again, twice in a row switches
        e.choose(&clock(1.0, 0.4, 0.2), 100);
        assert_eq!((e.overlap.sequential_left, e.overlap.measured), (0, false));
        e.choose(&clock(1.0, 0.4, 0.2), 100);
        assert_eq!(
            (e.overlap.sequential_left, e.overlap.measured),
            (SEQUENTIAL_SPAN, false)
        );
        // a run that paid in between resets the count
        e.overlap = OverlapChoice::default();
        e.choose(&clock(1.0, 0.4, 0.2), 100);
        e.choose(&clock(1.0, 0.7, 0.2), 100);
        assert_eq!((e.overlap.sequential_left, e.overlap.measured), (0, true));
        e.choose(&clock(1.0, 0.4, 0.2), 100);
        assert_eq!(e.overlap.sequential_left, 0);
        // a measured one-by-one update cost replaces the run's
        e.overlap = OverlapChoice::default();
        e.overlap.update_seconds_each = Some(1e-4);
        e.choose(&clock(1.0, 0.6, 0.3), 100);
        e.choose(&clock(1.0, 0.6, 0.3), 100);
        assert_eq!(e.overlap.sequential_left, SEQUENTIAL_SPAN);
        // a light run that its own clock keeps overlapped is followed by a
        // one-by-one sample (and a short run), and the run after the sample
        // decides against it
        for (sample_each, one_by_one) in [(2e-6, true), (3.5e-6, false)] {
            e.overlap = OverlapChoice::default();
            e.choose(&clock(1e-3, 1.2e-3, 0.3e-3), 250);
            assert_eq!(
                (e.overlap.sequential_left, e.overlap.sampling, e.overlap.measured),
                (SAMPLE_SPAN, true, false)
            );
            e.overlap.sequential_left = 0;
            e.overlap.sampling = false;
            e.overlap.sampled_each = Some(sample_each);
            e.choose(&clock(1e-3, 1.2e-3, 0.3e-3), 250); // 4 µs per update
            let want = if one_by_one {
                (SEQUENTIAL_SPAN, false)
            } else {
                (0, true)
            };
            assert_eq!((e.overlap.sequential_left, e.overlap.measured), want, "{sample_each}");
            assert_eq!(e.overlap.sampled_each, None);
        }
        // neither is a heavy run, nor a light one that its clock credits
        // with a large speed-up
        for (wall, matching) in [(1.0, 1.2), (1e-3, 4e-3)] {
            e.overlap = OverlapChoice::default();
            e.choose(&clock(wall, matching, 0.3 * wall), 256);
            assert_eq!((e.overlap.sequential_left, e.overlap.sampling), (0, false));
        }
    }

    /// A stream that alternates overlapped runs and one-by-one spans (forced
    /// after the first probe, then left to the engine) gives every update
    /// the result the one-thread engine gives it (which the oracle tests
    /// check).
    #[test]
    fn spans_one_by_one_give_the_same_results() {
        let pairs = rmat(9, 3_000, 0.57, 0.19, 0.19, 5);
        let g = graph_from_pairs(1 << 9, &pairs, vec![0; 1 << 9], None);
        let (g0, stream) = make_stream(&g, StreamAmount::Count(1_500), 0.5, 9);
        for name in ["triangle", "diamond"] {
            let q = QueryGraph::from_data(&standard_query(name).expect("standard")).expect("valid");
            let batch = |updates| Batch {
                updates,
                source: "test",
                strictness: Strictness::Strict,
            };
            let mut one = CpuEngine::new(1, Arc::new(GcsmOrder)).expect("pool");
            one.init(&g0, &q).expect("init");
            let mut want = Vec::new();
            one.process_each(batch(&stream), &mut want).expect("valid stream");

            let mut two = CpuEngine::new(2, Arc::new(GcsmOrder)).expect("pool");
            two.init(&g0, &q).expect("init");
            let mut got = Vec::new();
            let (head, tail) = stream.split_at(300);
            two.process_each(batch(head), &mut got).expect("valid stream");
            two.overlap.sequential_left = 700;
            two.process_each(batch(tail), &mut got).expect("valid stream");
            let pairs = |rs: &[BatchResult]| rs.iter().map(|r| (r.positive, r.negative)).collect::<Vec<_>>();
            assert_eq!(pairs(&got), pairs(&want), "{name}");
        }
    }
}
