//! Staging and reorganisation spread over a rayon pool, with the results of
//! [`DynamicGraph::stage`] and [`DynamicGraph::commit`] (the same delta in
//! the same order, the same errors, the same lists).
//!
//! For batches of thousands of updates the graph work (validation, the
//! deletion marks and appends of Sec. V-A steps 1-2, the reorganisation of
//! step 4) costs more than matching a light query, so done serially it
//! bounds a batch's thread scaling. Two observations make it parallel:
//!
//! - **Validation by edge.** Without vertex updates, whether an edge update
//!   is valid depends only on the earlier updates *of the same edge* (and on
//!   its endpoints existing). So the batch is grouped by edge, each edge's
//!   updates are replayed in batch order on their own, and the first error in
//!   batch order is the error with the smallest index. Batches that add or
//!   remove vertices are validated sequentially.
//! - **Lists by vertex.** Every touched list owns a disjoint range of the
//!   arena, so the ranges are carved into `&mut` slices and worked on
//!   independently; only growing a list (which moves it to the arena's end)
//!   stays serial, and it is rare and amortised.

use rayon::prelude::*;

use super::{reorganise, BatchDelta, DynamicGraph, Pending, Strictness};
use crate::error::{ErrorKind, InputError};
use crate::types::{Edge, Label, LocatedUpdate, Update, VertexId};
use crate::view::MARK;

/// Batches with fewer updates (and commits with fewer touched lists) than
/// this are handled sequentially: the pool's wake-up would cost more.
pub const PARALLEL_MIN_UPDATES: usize = 512;

/// One list change: (vertex, neighbour, edge label, insertion?).
type Change = (VertexId, VertexId, Label, bool);

/// An edge update's packed key (`u << 32 | v`) and index in the batch.
type KeyedUpdate = (u64, u32);

/// An invalid update's index and error.
type IndexedError = (u32, ErrorKind);

/// What replaying one edge's updates found.
struct EdgeReplay {
    key: (VertexId, VertexId),
    before: Option<Label>,
    after: Option<Label>,
    /// The first valid update of this edge (orders the delta as the
    /// sequential overlay's first touch does).
    first_ok: Option<u32>,
    errors: Vec<IndexedError>,
}

fn worthwhile(n: usize) -> bool {
    n >= PARALLEL_MIN_UPDATES && rayon::current_num_threads() > 1
}

impl DynamicGraph {
    /// [`DynamicGraph::stage`] on the rayon pool the caller runs in (install
    /// a pool to bound its threads). Same delta, errors and lists; batches
    /// below [`PARALLEL_MIN_UPDATES`] or a one-thread pool run sequentially.
    pub fn stage_parallel(
        &mut self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Result<&BatchDelta, InputError> {
        if !worthwhile(updates.len()) {
            return self.stage(updates, source, strictness);
        }
        assert!(
            self.pending.is_none(),
            "stage_parallel() called while a batch is pending; commit() first"
        );
        let mut delta = match self.validate_by_edge(updates, source, strictness) {
            Some(validated) => validated?,
            None => self.validate(updates, source, strictness)?,
        };
        self.apply_delta_parallel(&mut delta);
        Ok(&self.pending.as_ref().expect("just staged").delta)
    }

    /// [`DynamicGraph::check`] on the caller's rayon pool (see
    /// [`DynamicGraph::stage_parallel`]).
    pub fn check_parallel(&self, updates: &[LocatedUpdate], source: &str) -> Result<(), InputError> {
        if !worthwhile(updates.len()) {
            return self.check(updates, source);
        }
        match self.validate_by_edge(updates, source, Strictness::Strict) {
            Some(validated) => validated.map(drop),
            None => self.check(updates, source),
        }
    }

    /// [`DynamicGraph::commit`] with the touched lists reorganised in
    /// parallel on the caller's rayon pool.
    pub fn commit_parallel(&mut self) -> BatchDelta {
        let Some(p) = self.pending.take() else {
            return BatchDelta::default();
        };
        if !worthwhile(p.touched.len()) {
            self.pending = Some(p);
            return self.commit();
        }
        // (index in touched, arena start, base, len), by arena start
        let mut jobs: Vec<(usize, usize, usize, usize)> = p
            .touched
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                let (s, base, len) = self.slot(v);
                (k, s, base, len)
            })
            .collect();
        jobs.sort_unstable_by_key(|j| j.1);
        let labelled = self.edge_labelled;
        let ids = carve(&mut self.ids, jobs.iter().map(|j| (j.1, j.3)));
        let els = carve_labels(&mut self.elabels, labelled, jobs.iter().map(|j| (j.1, j.3)));
        let mut sized: Vec<(usize, u32)> = jobs
            .par_iter()
            .zip(ids.into_par_iter().zip(els.into_par_iter()))
            .map_init(Vec::new, |scratch, (job, (ids, els))| {
                (job.0, reorganise(ids, els, job.2, scratch) as u32)
            })
            .collect();
        sized.sort_unstable_by_key(|s| s.0);
        let new_lens: Vec<u32> = sized.into_iter().map(|s| s.1).collect();
        self.finish_commit(p, &new_lens)
    }

    /// Validation grouped by edge (module docs); `None` when the batch has
    /// vertex updates.
    fn validate_by_edge(
        &self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Option<Result<BatchDelta, InputError>> {
        let edge_of = |u: &Update| match *u {
            Update::AddEdge(e) | Update::RemoveEdge(e) => Some(e),
            _ => None,
        };
        if updates.iter().any(|lu| edge_of(&lu.update).is_none()) {
            return None;
        }
        // every update's (edge key, index); updates with invalid endpoints
        // get the key u64::MAX (no valid key: vertex ids are below 2^31)
        // and sort to the end, where their errors are taken out
        let mut keyed: Vec<KeyedUpdate> = updates
            .par_iter()
            .enumerate()
            .map(|(i, lu)| {
                let e = edge_of(&lu.update).expect("edge updates only");
                let key = self
                    .check_edge_endpoints(e)
                    .map_or(u64::MAX, |(a, b)| ((a as u64) << 32) | b as u64);
                (key, i as u32)
            })
            .collect();
        keyed.par_sort_unstable();
        let valid = keyed.partition_point(|k| k.0 != u64::MAX);
        let mut errors: Vec<IndexedError> = keyed[valid..]
            .iter()
            .map(|&(_, i)| {
                let e = edge_of(&updates[i as usize].update).expect("edge updates only");
                (i, self.check_edge_endpoints(e).expect_err("sorted as invalid"))
            })
            .collect();
        keyed.truncate(valid);
        let mut runs: Vec<&[KeyedUpdate]> = Vec::new();
        let mut lo = 0;
        for hi in 1..=keyed.len() {
            if hi == keyed.len() || keyed[hi].0 != keyed[lo].0 {
                runs.push(&keyed[lo..hi]);
                lo = hi;
            }
        }
        let strict = strictness == Strictness::Strict;
        let mut replays: Vec<EdgeReplay> = runs
            .par_iter()
            .map(|run| self.replay_edge(updates, run, strict))
            .collect();
        for r in &mut replays {
            errors.append(&mut r.errors);
        }
        let mut out = BatchDelta::default();
        if !errors.is_empty() {
            errors.sort_unstable_by_key(|e| e.0);
            let located = |(i, kind): IndexedError| InputError::new(source, updates[i as usize].line, kind);
            if strict {
                let first = errors.swap_remove(0);
                return Some(Err(located(first)));
            }
            out.skipped = errors.len();
            out.skipped_errors = errors.into_iter().take(10).map(located).collect();
        }
        replays.retain(|r| r.before != r.after);
        replays.sort_unstable_by_key(|r| r.first_ok);
        for r in replays {
            if let Some(l) = r.before {
                out.deleted.push(Edge::new(r.key.0, r.key.1, l));
            }
            if let Some(l) = r.after {
                out.inserted.push(Edge::new(r.key.0, r.key.1, l));
            }
        }
        Some(Ok(out))
    }

    /// The endpoint checks of an edge update (as the sequential overlay's,
    /// for a batch without vertex updates): its key, or why it is invalid.
    fn check_edge_endpoints(&self, e: Edge) -> Result<(VertexId, VertexId), ErrorKind> {
        if e.u == e.v {
            return Err(ErrorKind::SelfLoop(e.u));
        }
        for x in [e.u, e.v] {
            if !self.exists(x) {
                return Err(ErrorKind::UnknownVertex(x));
            }
        }
        Ok(e.key())
    }

    /// Replays one edge's updates (`run`: its (key, index) pairs in batch
    /// order) from its state in the graph. Strict replays stop at the first
    /// error; lenient ones skip invalid updates.
    fn replay_edge(&self, updates: &[LocatedUpdate], run: &[KeyedUpdate], strict: bool) -> EdgeReplay {
        let key = ((run[0].0 >> 32) as VertexId, run[0].0 as VertexId);
        let before = self.edge_label(key.0, key.1);
        let mut r = EdgeReplay {
            key,
            before,
            after: before,
            first_ok: None,
            errors: Vec::new(),
        };
        for &(_, i) in run {
            let outcome = match updates[i as usize].update {
                Update::AddEdge(e) if r.after.is_none() => {
                    r.after = Some(if self.edge_labelled { e.label } else { 0 });
                    Ok(())
                }
                Update::AddEdge(_) => Err(ErrorKind::DuplicateEdge(key.0, key.1)),
                Update::RemoveEdge(_) if r.after.is_some() => {
                    r.after = None;
                    Ok(())
                }
                _ => Err(ErrorKind::MissingEdge(key.0, key.1)),
            };
            match outcome {
                Ok(()) => {
                    r.first_ok.get_or_insert(i);
                }
                Err(kind) => {
                    r.errors.push((i, kind));
                    if strict {
                        break;
                    }
                }
            }
        }
        r
    }

    /// Steps 1-2 of Sec. V-A by vertex: lists that must grow are moved first
    /// (serially), then every touched list gets its marks and appends, and
    /// has its appended part sorted, in parallel.
    fn apply_delta_parallel(&mut self, delta: &mut BatchDelta) {
        let slots_before = self.labels.len();
        for &(v, l) in &delta.added_vertices {
            self.ensure_slot(v);
            self.labels[v as usize] = l;
        }
        let mut changes: Vec<Change> = Vec::with_capacity(2 * (delta.deleted.len() + delta.inserted.len()));
        for (edges, insert) in [(&delta.deleted, false), (&delta.inserted, true)] {
            for e in edges {
                changes.push((e.u, e.v, e.label, insert));
                changes.push((e.v, e.u, e.label, insert));
            }
        }
        changes.par_sort_unstable_by_key(|c| c.0);
        // per touched vertex: its changes and how many of them are appends
        let mut groups: Vec<(&[Change], usize)> = Vec::new();
        let mut lo = 0;
        for hi in 1..=changes.len() {
            if hi == changes.len() || changes[hi].0 != changes[lo].0 {
                let run = &changes[lo..hi];
                groups.push((run, run.iter().filter(|c| c.3).count()));
                lo = hi;
            }
        }
        for &(run, appends) in &groups {
            self.reserve_list(run[0].0, appends);
        }
        // (group, arena start, base, len, appends), by arena start
        let mut jobs: Vec<(usize, usize, usize, usize, usize)> = groups
            .iter()
            .enumerate()
            .map(|(k, &(run, appends))| {
                let (s, base, len) = self.slot(run[0].0);
                (k, s, base, len, appends)
            })
            .collect();
        jobs.sort_unstable_by_key(|j| j.1);
        let labelled = self.edge_labelled;
        let span = |j: &(usize, usize, usize, usize, usize)| (j.1, j.3 + j.4);
        let ids = carve(&mut self.ids, jobs.iter().map(span));
        let els = carve_labels(&mut self.elabels, labelled, jobs.iter().map(span));
        let marks: Vec<(usize, u32)> = jobs
            .par_iter()
            .zip(ids.into_par_iter().zip(els.into_par_iter()))
            .map(|(&(k, _, base, len, _), (ids, els))| (k, change_list(ids, els, base, len, groups[k].0)))
            .collect();
        for (k, marked) in marks {
            let (run, appends) = groups[k];
            let vi = run[0].0 as usize;
            self.marked[vi] += marked;
            self.len[vi] += appends as u32;
        }
        let touched: Vec<VertexId> = groups.iter().map(|g| g.0[0].0).collect();
        self.pending = Some(Pending {
            touched,
            delta: std::mem::take(delta),
            slots_before,
        });
    }
}

/// One list's changes (its slice `ids` of live length `len` and old part
/// `base`, with room for the appends; `labels` empty when the graph has no
/// edge labels): marks the deleted neighbours, appends the inserted ones and
/// sorts the appended part. Returns the number of marks set.
fn change_list(ids: &mut [VertexId], labels: &mut [Label], base: usize, len: usize, run: &[Change]) -> u32 {
    let labelled = !labels.is_empty();
    let mut marked = 0;
    let mut end = len;
    for &(_, b, label, insert) in run {
        if insert {
            ids[end] = b;
            if labelled {
                labels[end] = label;
            }
            end += 1;
        } else {
            let i = ids[..base]
                .binary_search_by(|&x| (x & !MARK).cmp(&b))
                .expect("validated deletion");
            ids[i] |= MARK;
            marked += 1;
        }
    }
    if labelled {
        let mut pairs: Vec<(VertexId, Label)> = (base..end).map(|i| (ids[i], labels[i])).collect();
        pairs.sort_unstable();
        for (k, (x, l)) in pairs.into_iter().enumerate() {
            ids[base + k] = x;
            labels[base + k] = l;
        }
    } else {
        ids[base..end].sort_unstable();
    }
    marked
}

/// Splits `arena` into `&mut` slices at the disjoint `(start, len)` ranges,
/// given in increasing order of start.
fn carve<T>(mut arena: &mut [T], ranges: impl Iterator<Item = (usize, usize)>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    let mut pos = 0;
    for (start, len) in ranges {
        let rest = std::mem::take(&mut arena);
        let (_, tail) = rest.split_at_mut(start - pos);
        let (mine, tail) = tail.split_at_mut(len);
        out.push(mine);
        arena = tail;
        pos = start + len;
    }
    out
}

/// [`carve`] for the edge-label arena, or empty slices when the graph has
/// no edge labels.
fn carve_labels(
    arena: &mut [Label],
    labelled: bool,
    ranges: impl Iterator<Item = (usize, usize)>,
) -> Vec<&mut [Label]> {
    if labelled {
        carve(arena, ranges)
    } else {
        ranges.map(|_| <&mut [Label]>::default()).collect()
    }
}
