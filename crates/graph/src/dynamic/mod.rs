//! [`DynamicGraph`]: the host-resident mutable graph of GCSM Sec. V-A / Fig. 5.
//!
//! Every vertex owns a contiguous, sorted neighbour array inside one arena,
//! with headroom: an append that overflows moves the list to the arena's end
//! with doubled capacity (amortised O(1) per insertion, as the paper's
//! doubling arrays). A batch is processed in two phases:
//!
//! 1. [`DynamicGraph::stage`] validates the whole batch against the sequential
//!    semantics (the graph stays untouched on error), then applies its net
//!    effect in place: deleted neighbours are *marked* (top bit, the paper's
//!    "-v"), inserted neighbours are *appended* behind the old list and sorted
//!    among themselves. While staged, [`GraphView::nbrs`] serves N (old),
//!    N ∩ N' (common) and N' (new) as windows on the same memory.
//! 2. [`DynamicGraph::commit`] reorganises every touched list (step 4 of
//!    Sec. V-A): marked entries are dropped and the appended part is merged in,
//!    linear in the list length.

mod degrees;
pub(crate) mod overlay;
pub(crate) mod parallel;
mod reorganise;
mod search;
mod stage_pool;

use std::collections::HashMap;

use foldhash::fast::FixedState;
use rayon::prelude::*;

use crate::csr::CsrGraph;
use crate::error::{ErrorKind, InputError};
use crate::slices::{csr_spans, sort_paired, windows_mut};
use crate::types::{Edge, GraphData, Label, LocatedUpdate, Update, VertexId, ABSENT};
use crate::view::{GraphView, Nbrs, Version, MARK};
use degrees::DegreeCounts;
use overlay::Overlay;
use reorganise::reorganise;

/// How [`DynamicGraph::stage`] treats an invalid update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strictness {
    /// The first invalid update aborts the batch with its error.
    #[default]
    Strict,
    /// Invalid updates are skipped and counted in [`BatchDelta::skipped`].
    Lenient,
}

/// The net effect of a staged batch: G_k → G_k+1.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchDelta {
    /// E' \ E (ΔE⁺), `u < v`.
    pub inserted: Vec<Edge>,
    /// E \ E' (ΔE⁻), `u < v`, with the label the edge had in G_k.
    pub deleted: Vec<Edge>,
    /// Vertices new in G_k+1, with their labels.
    pub added_vertices: Vec<(VertexId, Label)>,
    pub removed_vertices: Vec<VertexId>,
    /// Updates skipped in lenient mode.
    pub skipped: usize,
    /// The first few skipped updates' errors (lenient mode).
    pub skipped_errors: Vec<InputError>,
}

/// What [`DynamicGraph::stage_or_apply`] did.
#[derive(Debug)]
pub enum Staging {
    /// The batch is pending, as after [`DynamicGraph::stage`].
    Staged,
    /// The one edge change was applied at once; nothing is pending.
    Applied(BatchDelta),
}

impl BatchDelta {
    pub fn is_empty(&self) -> bool {
        self.inserted.is_empty() && self.deleted.is_empty()
    }

    /// Edges inserted or deleted.
    pub fn changes(&self) -> usize {
        self.inserted.len() + self.deleted.len()
    }
}

/// Mutable labelled graph with pending-batch views (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DynamicGraph {
    labels: Vec<Label>,
    /// Per vertex: start of its array in the arena, live length (the old
    /// part plus, while a batch is pending, the appended part), capacity.
    off: Vec<u64>,
    len: Vec<u32>,
    cap: Vec<u32>,
    /// Bit v: the pending batch changes v's list, whose old-part length and
    /// mark count are then in [`Pending::old`] (20 bytes a vertex in all,
    /// instead of 8 more for two arrays that matter only while a batch is
    /// pending and only for the lists it touches).
    touched_bits: Vec<u64>,
    ids: Vec<VertexId>,
    /// Parallel to `ids` when the graph has edge labels.
    elabels: Vec<Label>,
    edge_labelled: bool,
    num_edges: usize,
    /// Vertices per committed degree: the exact maximum degree.
    degrees: DegreeCounts,
    /// Arena slots abandoned by relocated lists.
    waste: usize,
    pending: Option<Pending>,
    /// See [`DynamicGraph::set_parallel_min_arena`] (None: the default).
    parallel_min_arena: Option<usize>,
}

/// One shard's validation: the edges' and vertices' states, the invalid
/// updates (by index in the batch) and the edges the shard changes.
struct Validated {
    overlay: Overlay,
    errors: Vec<(usize, ErrorKind)>,
    changed: Vec<ChangedEdge>,
}

/// An edge a batch changes: the index of the update that first touched it,
/// its key, its label before and after (None: absent).
type ChangedEdge = (u32, (VertexId, VertexId), Option<Label>, Option<Label>);

#[derive(Clone, Debug, Default)]
struct Pending {
    touched: Vec<VertexId>,
    /// Per touched vertex: its old (pre-batch) part.
    old: OldParts,
    /// Where the batch marked its deletions (see [`DynamicGraph::pending_marks`]).
    marks: Vec<(VertexId, u32)>,
    /// Per mark, the index of the list's mark before it in `marks` (or
    /// [`NO_MARK`]): each list's marks chained from [`OldPart::last_mark`].
    mark_before: Vec<u32>,
    delta: BatchDelta,
    /// Vertex slots before staging (abort truncates back to it).
    slots_before: usize,
}

impl Pending {
    /// Where `part`'s list is marked, last mark first.
    fn marks_of(&self, part: OldPart) -> impl Iterator<Item = u32> + '_ {
        let last = (part.last_mark != NO_MARK).then_some(part.last_mark);
        std::iter::successors(last, |&m| {
            let before = self.mark_before[m as usize];
            (before != NO_MARK).then_some(before)
        })
        .map(|m| self.marks[m as usize].1)
    }
}

/// A touched list's pre-batch part: its length, how many of its entries
/// the batch marked, and the index of its last mark in [`Pending::marks`]
/// (or [`NO_MARK`]).
#[derive(Clone, Copy, Debug)]
struct OldPart {
    len: u32,
    marked: u32,
    last_mark: u32,
}

/// See [`OldPart::last_mark`].
const NO_MARK: u32 = u32::MAX;

type OldParts = HashMap<VertexId, OldPart, FixedState>;

/// Updates per task when a large batch's edges are looked up on the rayon
/// pool.
const LOOKUP_BLOCK: usize = 512;

/// Lists per task when a commit finds where appended entries go on the
/// rayon pool.
const INSERTION_BLOCK: usize = 256;

/// Vertices per task when [`DynamicGraph::from_csr`] copies the lists.
const BUILD_BLOCK: usize = 256;

impl DynamicGraph {
    /// Builds the store from an edge list (validated as [`CsrGraph::from_data`]).
    pub fn from_data(g: &GraphData) -> Result<DynamicGraph, InputError> {
        Ok(Self::from_csr(&CsrGraph::from_data(g)?))
    }

    /// Builds the store from a snapshot: arrays laid out back to back, each
    /// with [`DynamicGraph::headroom`] free slots behind it. Copies the lists
    /// on the current rayon pool, blocks of vertices per task.
    pub fn from_csr(c: &CsrGraph) -> DynamicGraph {
        let n = c.num_vertices();
        let edge_labelled = c.edge_labelled();
        let len: Vec<u32> = (0..n)
            .into_par_iter()
            .with_min_len(BUILD_BLOCK)
            .map(|v| c.degree(v as VertexId) as u32)
            .collect();
        let caps: Vec<u32> = len
            .par_iter()
            .with_min_len(BUILD_BLOCK)
            .map(|&d| d + Self::headroom(d))
            .collect();
        let mut off = Vec::with_capacity(n);
        let mut total = 0u64;
        for &k in &caps {
            off.push(total);
            total += k as u64;
        }
        // zeroed (free slots stay 0), filled a block of vertices per task
        let mut ids: Vec<VertexId> = vec![0; total as usize];
        let mut elabels: Vec<Label> = vec![0; if edge_labelled { total as usize } else { 0 }];
        let starts: Vec<u64> = (0..n).step_by(BUILD_BLOCK).map(|v| off[v]).chain([total]).collect();
        let id_blocks = windows_mut(&mut ids, csr_spans(&starts));
        let label_blocks = if edge_labelled {
            windows_mut(&mut elabels, csr_spans(&starts))
        } else {
            (0..id_blocks.len()).map(|_| &mut [][..]).collect()
        };
        id_blocks
            .into_par_iter()
            .zip(label_blocks)
            .enumerate()
            .for_each(|(b, (ids, elabels))| {
                let first = b * BUILD_BLOCK;
                let base = off[first];
                let last = n.min(first + BUILD_BLOCK);
                for (v, &o) in off[first..last].iter().enumerate().map(|(i, o)| (first + i, o)) {
                    let list = c.neighbors(v as VertexId);
                    let s = (o - base) as usize;
                    ids[s..s + list.len()].copy_from_slice(list);
                    if edge_labelled {
                        elabels[s..s + list.len()].copy_from_slice(c.edge_labels(v as VertexId));
                    }
                }
            });
        let degrees = DegreeCounts::from_degrees(len.iter().map(|&d| d as usize));
        DynamicGraph {
            labels: c.labels().to_vec(),
            off,
            len,
            cap: caps,
            touched_bits: vec![0; n.div_ceil(64)],
            ids,
            elabels,
            edge_labelled,
            num_edges: c.num_edges(),
            degrees,
            waste: 0,
            pending: None,
            parallel_min_arena: None,
        }
    }

    /// Batches of at least this many updates are validated, staged and
    /// committed on the current rayon pool when [`DynamicGraph::stage`] and
    /// [`DynamicGraph::commit`] are called from inside a pool of 2 or more
    /// threads (e.g. in `pool.install`) and the arena holds at least
    /// [`DynamicGraph::PARALLEL_MIN_ARENA`] entries; otherwise on the calling
    /// thread. Either way the result is the same.
    pub const PARALLEL_MIN_UPDATES: usize = parallel::MIN_UPDATES;

    /// See [`DynamicGraph::PARALLEL_MIN_UPDATES`].
    pub const PARALLEL_MIN_ARENA: usize = parallel::MIN_ARENA;

    /// The arena is rewritten when abandoned slots exceed this part of it.
    /// 1/5 (was 1/4) with d/8 + 1 free slots (was d/8 + 2): over a stream
    /// of every edge of email-Enron (batches of 4,096) the store peaked at
    /// 2.13x the CSR of the graph of the moment instead of 2.32x (wiki-Vote
    /// 1.95x instead of 2.06x), at the same staging time.
    const COMPACT_WASTE_DIVISOR: usize = 5;

    /// Free slots a list of `d` entries gets when the store is built: d/8 + 1.
    /// Without them every list moves (and the arena grows) on its first
    /// insertion, which made the first batches of a stream 2-3x dearer to
    /// stage (email-Enron, batches of 4,096: 6.0 against 2.4 ms); with
    /// them the arena is about 1.2x the adjacency.
    pub fn headroom(d: u32) -> u32 {
        d / 8 + 1
    }

    pub fn num_edges(&self) -> usize {
        self.num_edges
    }

    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The staged batch's net effect, if one is pending.
    pub fn pending_delta(&self) -> Option<&BatchDelta> {
        self.pending.as_ref().map(|p| &p.delta)
    }

    /// Where the pending batch marked its deletions: `(v, q)` says that
    /// entry `q` of `v`'s old part (`nbrs(v, Version::New).base[q]`) carries
    /// [`MARK`]; two per deleted edge, one per endpoint, in no particular
    /// order. A device copy of a list can take its marks from here instead
    /// of searching the list again (the resident cache of csm-gpu does).
    pub fn pending_marks(&self) -> &[(VertexId, u32)] {
        self.pending.as_ref().map_or(&[], |p| &p.marks)
    }

    /// Vertices whose lists the pending batch changed.
    pub fn touched(&self) -> &[VertexId] {
        self.pending.as_ref().map_or(&[], |p| &p.touched)
    }

    fn exists(&self, v: VertexId) -> bool {
        (v as usize) < self.labels.len() && self.labels[v as usize] != ABSENT
    }

    fn slot(&self, v: VertexId) -> (usize, usize, usize) {
        let vi = v as usize;
        let len = self.len[vi] as usize;
        (self.off[vi] as usize, self.old_part(v, len).0, len)
    }

    #[inline]
    fn is_touched(&self, v: VertexId) -> bool {
        let v = v as usize;
        self.touched_bits.get(v >> 6).is_some_and(|&w| w >> (v & 63) & 1 == 1)
    }

    fn set_touched(&mut self, v: VertexId, on: bool) {
        let (w, b) = (v as usize >> 6, v & 63);
        if on {
            self.touched_bits[w] |= 1 << b;
        } else {
            self.touched_bits[w] &= !(1 << b);
        }
    }

    /// Length of `v`'s old part and its marked entries, given the live
    /// length `len`: (len, 0) unless the pending batch touches `v`.
    #[inline]
    fn old_part(&self, v: VertexId, len: usize) -> (usize, u32) {
        if !self.is_touched(v) {
            return (len, 0);
        }
        match self.pending.as_ref().and_then(|p| p.old.get(&v)) {
            Some(o) => (o.len as usize, o.marked),
            None => (len, 0),
        }
    }

    /// Label of edge `(u, v)` in the committed graph (or G_k while pending).
    pub fn edge_label(&self, u: VertexId, v: VertexId) -> Option<Label> {
        let (a, b) = self.edge_lookup(u, v)?;
        self.nbrs(a, Version::Old).find(b)
    }

    /// Where edge `(u, v)` is looked up: `(a, b)`, `b` searched for in
    /// `a`'s list, the shorter of the two (both hold the edge, with the
    /// same label); None when an endpoint does not exist.
    fn edge_lookup(&self, u: VertexId, v: VertexId) -> Option<(VertexId, VertexId)> {
        if !self.exists(u) || !self.exists(v) {
            return None;
        }
        Some(if self.len[u as usize] <= self.len[v as usize] {
            (u, v)
        } else {
            (v, u)
        })
    }

    /// Validates `updates` in order against the current graph, then stages
    /// their net effect (see the module docs). Nothing changes on error.
    ///
    /// Errors name `source` and each update's line. Edge labels are ignored
    /// (stored as 0) when the graph has no edge labels; a deletion removes the
    /// edge whatever label it names.
    pub fn stage(
        &mut self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Result<&BatchDelta, InputError> {
        assert!(
            self.pending.is_none(),
            "stage() called while a batch is pending; commit() first"
        );
        let mut delta = self.validate(updates, source, strictness)?;
        self.apply_delta(&mut delta);
        Ok(&self.pending.as_ref().expect("just staged").delta)
    }

    /// Validates `updates` as [`DynamicGraph::stage`] does; then, when they
    /// come to one edge insertion or deletion and `now` says so (given the
    /// graph and the validated change), applies it at once, in place
    /// (`Applied`: nothing is pending; the list entries above the change
    /// move by one, as a sorted array insert or removal); otherwise stages
    /// them (`Staged`: [`DynamicGraph::commit`] follows). Either way the
    /// graph ends as `stage` plus `commit` would leave it; nothing changes
    /// on error. For updates a matcher need not match (no query edge's
    /// labels): one update at a time skips the pending views.
    pub fn stage_or_apply(
        &mut self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
        now: impl FnOnce(&DynamicGraph, &BatchDelta) -> bool,
    ) -> Result<Staging, InputError> {
        assert!(
            self.pending.is_none(),
            "stage_or_apply() called while a batch is pending; commit() first"
        );
        let mut delta = self.validate(updates, source, strictness)?;
        let one_edge = delta.added_vertices.is_empty() && delta.removed_vertices.is_empty() && delta.changes() == 1;
        if one_edge && now(self, &delta) {
            for e in &delta.inserted {
                self.insert_sorted(e.u, e.v, e.label);
                self.insert_sorted(e.v, e.u, e.label);
                self.num_edges += 1;
            }
            for e in &delta.deleted {
                self.remove_sorted(e.u, e.v);
                self.remove_sorted(e.v, e.u);
                self.num_edges -= 1;
            }
            self.compact_if_wasteful();
            return Ok(Staging::Applied(delta));
        }
        self.apply_delta(&mut delta);
        Ok(Staging::Staged)
    }

    /// Compacts the arena once relocated lists left too much of it unused.
    fn compact_if_wasteful(&mut self) {
        if self.waste > self.ids.len() / Self::COMPACT_WASTE_DIVISOR {
            self.compact();
        }
    }

    /// Inserts `b` into `a`'s committed list at its sorted place.
    fn insert_sorted(&mut self, a: VertexId, b: VertexId, label: Label) {
        self.reserve_list(a);
        let ai = a as usize;
        let (s, l) = (self.off[ai] as usize, self.len[ai] as usize);
        let p = s + self.ids[s..s + l].partition_point(|&x| x < b);
        self.ids.copy_within(p..s + l, p + 1);
        self.ids[p] = b;
        if self.edge_labelled {
            self.elabels.copy_within(p..s + l, p + 1);
            self.elabels[p] = label;
        }
        self.len[ai] += 1;
        self.degrees.change(l, l + 1);
    }

    /// Removes `b` from `a`'s committed list (where it is).
    fn remove_sorted(&mut self, a: VertexId, b: VertexId) {
        let ai = a as usize;
        let (s, l) = (self.off[ai] as usize, self.len[ai] as usize);
        let p = s + self.ids[s..s + l].partition_point(|&x| x < b);
        debug_assert_eq!(self.ids[p], b, "a validated deletion's entry exists");
        self.ids.copy_within(p + 1..s + l, p);
        if self.edge_labelled {
            self.elabels.copy_within(p + 1..s + l, p);
        }
        self.len[ai] -= 1;
        self.degrees.change(l, l - 1);
    }

    /// Validates `updates` as [`DynamicGraph::stage`] does in strict mode,
    /// without staging them: `Ok` exactly when `stage` would succeed, else
    /// the error it would return.
    pub fn check(&self, updates: &[LocatedUpdate], source: &str) -> Result<(), InputError> {
        self.validate(updates, source, Strictness::Strict).map(drop)
    }

    /// [`DynamicGraph::stage`] followed by [`DynamicGraph::commit`].
    pub fn apply(
        &mut self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Result<BatchDelta, InputError> {
        self.stage(updates, source, strictness)?;
        Ok(self.commit())
    }

    /// [`DynamicGraph::apply`] for any valid batch, also one that re-adds a
    /// vertex under another label, which `stage` rejects: that one is
    /// applied as its two phases ([`crate::phases`]). Returns the updates
    /// skipped (lenient mode). Nothing changes on error.
    pub fn apply_phased(
        &mut self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Result<usize, InputError> {
        if !crate::phases::relabels(self, updates) {
            return Ok(self.apply(updates, source, strictness)?.skipped);
        }
        let phases = crate::phases::split_relabels(self, updates, source, strictness)?;
        for part in [&phases.removal, &phases.addition] {
            self.apply(part, source, Strictness::Strict)?;
        }
        Ok(phases.skipped)
    }

    /// Validates a batch against the graph (see [`DynamicGraph::stage`]);
    /// a batch of one edge update skips the overlay
    /// ([`Self::validate_one_edge`]).
    fn validate(
        &self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Result<BatchDelta, InputError> {
        if let [lu] = updates {
            if let Update::AddEdge(e) | Update::RemoveEdge(e) = lu.update {
                return self.validate_one_edge(lu, e, source, strictness);
            }
        }
        self.validate_batch(updates, source, strictness)
    }

    /// [`Self::validate_batch`] of a batch holding one edge update, without
    /// its overlay, maps and vectors (a fifth of each update's time in a
    /// one-at-a-time run on an edge-labelled R-MAT): the same checks in the
    /// same order (self-loop, unknown endpoint, duplicate insertion,
    /// deletion of a missing edge) and the same delta.
    fn validate_one_edge(
        &self,
        lu: &LocatedUpdate,
        e: Edge,
        source: &str,
        strictness: Strictness,
    ) -> Result<BatchDelta, InputError> {
        let insert = matches!(lu.update, Update::AddEdge(_));
        let mut before = None;
        let checked = overlay::edge_update(
            e,
            insert,
            self.edge_labelled,
            |x| self.exists(x),
            |(a, b)| {
                before = self.edge_label(a, b);
                before
            },
        )
        // a valid insertion had no edge before, a valid deletion none after
        .map(|((a, b), now)| BatchDelta {
            inserted: now.map(|l| Edge::new(a, b, l)).into_iter().collect(),
            deleted: before.map(|l| Edge::new(a, b, l)).into_iter().collect(),
            ..BatchDelta::default()
        });
        checked.or_else(|kind| {
            let err = InputError::new(source, lu.line, kind);
            match strictness {
                Strictness::Strict => Err(err),
                Strictness::Lenient => Ok(BatchDelta {
                    skipped: 1,
                    skipped_errors: vec![err],
                    ..BatchDelta::default()
                }),
            }
        })
    }

    /// Sequential validation on an overlay of touched edges and vertices.
    fn validate_batch(
        &self,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Result<BatchDelta, InputError> {
        let edges_only = updates
            .iter()
            .all(|lu| matches!(lu.update, Update::AddEdge(_) | Update::RemoveEdge(_)));
        let known = self.edge_labels_before(updates);
        let parts: Vec<Validated> = if edges_only && self.parallel(updates.len()) {
            // an edge's updates depend only on each other: one shard of
            // the edges per thread, each in batch order
            let shards = rayon::current_num_threads();
            (0..shards)
                .into_par_iter()
                .map(|s| self.validate_shard(updates, strictness, (s, shards), &known))
                .collect()
        } else {
            vec![self.validate_shard(updates, strictness, (0, 1), &known)]
        };
        let mut out = BatchDelta::default();
        // errors in batch order: the first one fails a strict batch
        let mut errors: Vec<(usize, ErrorKind)> = parts.iter().flat_map(|p| p.errors.iter().cloned()).collect();
        errors.sort_by_key(|e| e.0);
        let error = |(i, kind): (usize, ErrorKind)| InputError::new(source, updates[i].line, kind);
        match strictness {
            Strictness::Strict => {
                if let Some(first) = errors.into_iter().next() {
                    return Err(error(first));
                }
            }
            Strictness::Lenient => {
                out.skipped = errors.len();
                out.skipped_errors = errors.into_iter().take(10).map(error).collect();
            }
        }
        // changed edges in the order first touched (as one sequential pass):
        // each shard's are in that order, so a scatter by first index merges
        let changed: Vec<&[ChangedEdge]> = parts.iter().map(|p| &p.changed[..]).collect();
        let mut push = |&(_, key, before, after): &ChangedEdge| {
            if let Some(l) = before {
                out.deleted.push(Edge::new(key.0, key.1, l));
            }
            if let Some(l) = after {
                out.inserted.push(Edge::new(key.0, key.1, l));
            }
        };
        if let [one] = changed[..] {
            one.iter().for_each(&mut push);
        } else {
            let mut by_first: Vec<Option<&ChangedEdge>> = vec![None; updates.len()];
            for e in changed.iter().flat_map(|c| c.iter()) {
                by_first[e.0 as usize] = Some(e);
            }
            by_first.into_iter().flatten().for_each(&mut push);
        }
        let ov = &parts[0].overlay;
        for &v in &ov.vertex_order {
            match (self.exists(v), ov.vertices[&v]) {
                (false, Some(l)) => out.added_vertices.push((v, l)),
                (true, None) => out.removed_vertices.push(v),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Validates, in order, the updates of `updates` whose edge falls in
    /// shard `s` of `n` (all of them when `n` is 1; vertex updates only
    /// then). Strict mode stops at the first invalid update; lenient mode
    /// skips each. `known`: edge labels in G_k looked up beforehand, or
    /// empty.
    fn validate_shard(
        &self,
        updates: &[LocatedUpdate],
        strictness: Strictness,
        (s, n): (usize, usize),
        known: &[Option<Option<Label>>],
    ) -> Validated {
        let mut overlay = Overlay::with_capacity(updates.len() / n + 1);
        let mut errors = Vec::new();
        for (i, lu) in updates.iter().enumerate() {
            if n > 1 {
                let (Update::AddEdge(e) | Update::RemoveEdge(e)) = lu.update else {
                    unreachable!("sharded batches hold edge updates only")
                };
                let (a, b) = e.key();
                // a cheap mix of the key: shards of about equal size
                let h = (u64::from(a) << 32 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                if (h >> 32) as usize % n != s {
                    continue;
                }
            }
            overlay.at = i as u32;
            if let Err(kind) = overlay.step(self, lu.update, known.get(i).copied().flatten()) {
                errors.push((i, kind));
                if strictness == Strictness::Strict {
                    break;
                }
            }
        }
        let changed = overlay
            .edge_order
            .iter()
            .map(|&(key, at)| {
                let st = overlay.edges[&key];
                (at, key, st.before, st.now)
            })
            .filter(|e| e.2 != e.3)
            .collect();
        Validated {
            overlay,
            errors,
            changed,
        }
    }

    /// Per update, the label in G_k of the edge it inserts or deletes, for
    /// batches of [`parallel::MIN_UPDATES`] or more: looked up in a pass of
    /// its own, [`search::lower_bounds`]'s many searches at once (and on
    /// the rayon pool when [`DynamicGraph::parallel`] says so). Empty for
    /// smaller batches, whose validation looks edges up as it goes.
    fn edge_labels_before(&self, updates: &[LocatedUpdate]) -> Vec<Option<Option<Label>>> {
        if self.parallel(updates.len()) {
            updates
                .par_chunks(LOOKUP_BLOCK)
                .flat_map_iter(|c| self.edge_labels_of(c))
                .collect()
        } else if updates.len() < parallel::MIN_UPDATES {
            Vec::new()
        } else if self.large_arena() {
            self.edge_labels_of(updates)
        } else {
            let label = |lu: &LocatedUpdate| match lu.update {
                Update::AddEdge(e) | Update::RemoveEdge(e) if e.u != e.v => Some(self.edge_label(e.u, e.v)),
                _ => None,
            };
            updates.iter().map(label).collect()
        }
    }

    /// [`Self::edge_labels_before`] of `updates`, on the calling thread:
    /// as [`Self::edge_label`] (the shorter list searched), with the
    /// searches side by side.
    fn edge_labels_of(&self, updates: &[LocatedUpdate]) -> Vec<Option<Option<Label>>> {
        // (update index, list start, list length, the key searched for)
        let mut looked: Vec<(usize, usize, usize, VertexId)> = Vec::with_capacity(updates.len());
        for (i, lu) in updates.iter().enumerate() {
            if let Update::AddEdge(e) | Update::RemoveEdge(e) = lu.update {
                if let Some((a, b)) = (e.u != e.v).then(|| self.edge_lookup(e.u, e.v)).flatten() {
                    let (s, base, _) = self.slot(a);
                    looked.push((i, s, base, b));
                }
            }
        }
        let queries: Vec<(&[VertexId], VertexId)> =
            looked.iter().map(|&(_, s, n, b)| (&self.ids[s..s + n], b)).collect();
        let mut at = Vec::with_capacity(queries.len());
        search::lower_bounds(&queries, &mut at);
        let mut out: Vec<Option<Option<Label>>> = updates
            .iter()
            .map(|lu| match lu.update {
                Update::AddEdge(e) | Update::RemoveEdge(e) if e.u != e.v => Some(None),
                _ => None,
            })
            .collect();
        for (&(i, s, n, b), &p) in looked.iter().zip(&at) {
            let p = p as usize;
            if p < n && self.ids[s + p] & !MARK == b {
                out[i] = Some(Some(if self.edge_labelled { self.elabels[s + p] } else { 0 }));
            }
        }
        out
    }

    /// Where each deleted edge sits in both endpoint lists: (endpoint,
    /// arena position), two per edge; in a large arena
    /// [`search::lower_bounds`]'s many searches at once, on the rayon pool
    /// for batches of many `changes`.
    fn deletion_slots(&self, deleted: &[Edge], changes: usize) -> Vec<(VertexId, usize)> {
        if !self.large_arena() {
            let find = |a: VertexId, b: VertexId| {
                let i = self
                    .list(a)
                    .binary_search_by(|&x| (x & !MARK).cmp(&b))
                    .expect("validated deletion");
                (a, self.off[a as usize] as usize + i)
            };
            return deleted.iter().flat_map(|e| [find(e.u, e.v), find(e.v, e.u)]).collect();
        }
        let find = |deleted: &[Edge]| {
            let ends: Vec<(VertexId, VertexId)> = deleted.iter().flat_map(|e| [(e.u, e.v), (e.v, e.u)]).collect();
            let queries: Vec<(&[VertexId], VertexId)> = ends.iter().map(|&(a, b)| (self.list(a), b)).collect();
            let mut at = Vec::with_capacity(queries.len());
            search::lower_bounds(&queries, &mut at);
            ends.iter()
                .zip(at)
                .map(|(&(a, b), p)| {
                    let s = self.off[a as usize] as usize;
                    debug_assert_eq!(self.ids[s + p as usize] & !MARK, b, "validated deletion");
                    (a, s + p as usize)
                })
                .collect::<Vec<_>>()
        };
        if self.parallel(changes) {
            deleted.par_chunks(LOOKUP_BLOCK / 2).flat_map_iter(find).collect()
        } else {
            find(deleted)
        }
    }

    /// The arena's ids and edge labels (empty without edge labels).
    fn arena_mut(&mut self) -> (&mut [VertexId], &mut [Label]) {
        let labels: &mut [Label] = if self.edge_labelled { &mut self.elabels } else { &mut [] };
        (&mut self.ids, labels)
    }

    /// Entries `[a, b)` of the arena: ids and edge labels (empty without).
    fn window_mut(&mut self, a: usize, b: usize) -> (&mut [VertexId], &mut [Label]) {
        let (ids, labels) = self.arena_mut();
        let labels = if labels.is_empty() { labels } else { &mut labels[a..b] };
        (&mut ids[a..b], labels)
    }

    /// `v`'s live list in the arena (ids; marked entries included).
    fn list(&self, v: VertexId) -> &[VertexId] {
        let s = self.off[v as usize] as usize;
        &self.ids[s..s + self.len[v as usize] as usize]
    }

    /// `v`'s live list in the arena: ids and edge labels (empty without).
    fn list_mut(&mut self, v: VertexId) -> (&mut [VertexId], &mut [Label]) {
        let s = self.off[v as usize] as usize;
        self.window_mut(s, s + self.len[v as usize] as usize)
    }

    /// Arena windows `[off, off + len)` of `vs`' lists, sorted by offset,
    /// with the vertex each belongs to.
    fn list_spans(&self, vs: &[VertexId]) -> (Vec<VertexId>, Vec<(usize, usize)>) {
        let mut by_off: Vec<(usize, usize, VertexId)> = vs
            .iter()
            .map(|&v| {
                let (s, l) = (self.off[v as usize] as usize, self.len[v as usize] as usize);
                (s, s + l, v)
            })
            .collect();
        by_off.sort_unstable();
        by_off.into_iter().map(|(s, e, v)| (v, (s, e))).unzip()
    }

    fn apply_delta(&mut self, delta: &mut BatchDelta) {
        let mut touched: Vec<VertexId> = Vec::new();
        let slots_before = self.labels.len();
        for &(v, l) in &delta.added_vertices {
            self.ensure_slot(v);
            self.labels[v as usize] = l;
        }
        if self.parallel(delta.changes()) {
            let st = self.stage_lists_on_pool(delta);
            self.pending = Some(Pending {
                touched: st.touched,
                old: st.old,
                marks: st.marks,
                mark_before: st.mark_before,
                delta: std::mem::take(delta),
                slots_before,
            });
            return;
        }
        // each touched list's old part, before anything is appended
        let ends = 2 * (delta.deleted.len() + delta.inserted.len());
        let mut old: OldParts = HashMap::with_capacity_and_hasher(ends, FixedState::default());
        touched.reserve(ends);
        fn touch<'m>(
            g: &mut DynamicGraph,
            old: &'m mut OldParts,
            touched: &mut Vec<VertexId>,
            a: VertexId,
        ) -> &'m mut OldPart {
            old.entry(a).or_insert_with(|| {
                g.set_touched(a, true);
                touched.push(a);
                let len = g.len[a as usize];
                OldPart {
                    len,
                    marked: 0,
                    last_mark: NO_MARK,
                }
            })
        }
        let slots = self.deletion_slots(&delta.deleted, delta.changes());
        let mut marks = Vec::with_capacity(slots.len());
        let mut mark_before = Vec::with_capacity(slots.len());
        for (a, at) in slots {
            self.ids[at] |= MARK;
            let q = (at - self.off[a as usize] as usize) as u32;
            let part = touch(self, &mut old, &mut touched, a);
            part.marked += 1;
            mark_before.push(part.last_mark);
            part.last_mark = marks.len() as u32;
            marks.push((a, q));
        }
        for e in &delta.inserted {
            for (a, b) in [(e.u, e.v), (e.v, e.u)] {
                touch(self, &mut old, &mut touched, a);
                self.push(a, b, e.label);
            }
        }
        touched.sort_unstable();
        self.sort_deltas(&touched, &old);
        self.pending = Some(Pending {
            touched,
            old,
            marks,
            mark_before,
            delta: std::mem::take(delta),
            slots_before,
        });
    }

    fn ensure_slot(&mut self, v: VertexId) {
        let need = v as usize + 1;
        if self.labels.len() < need {
            let end = self.ids.len() as u64;
            self.labels.resize(need, ABSENT);
            self.off.resize(need, end);
            for _ in self.len.len()..need {
                self.degrees.add(0);
            }
            self.len.resize(need, 0);
            self.cap.resize(need, 0);
            self.touched_bits.resize(need.div_ceil(64), 0);
        }
    }

    /// Makes room for one more entry in `v`'s list: a full list moves to
    /// the arena's end with its capacity grown by half (amortised O(1) per
    /// appended entry, less slack than doubling).
    fn reserve_list(&mut self, v: VertexId) {
        self.reserve_room(v, 1);
    }

    /// Makes room for `n` more entries in `v`'s list: a list without it
    /// moves to the arena's end with its capacity grown by half (or to
    /// hold the `n`).
    fn reserve_room(&mut self, v: VertexId, n: usize) {
        let vi = v as usize;
        let (s, l) = (self.off[vi] as usize, self.len[vi] as usize);
        if l + n <= self.cap[vi] as usize {
            return;
        }
        let new_cap = (l + l / 2).max(l + n).max(4);
        self.reserve_arena(new_cap);
        let new_off = self.ids.len();
        self.ids.extend_from_within(s..s + l);
        self.ids.resize(new_off + new_cap, 0);
        if self.edge_labelled {
            self.elabels.extend_from_within(s..s + l);
            self.elabels.resize(new_off + new_cap, 0);
        }
        self.waste += self.cap[vi] as usize;
        self.off[vi] = new_off as u64;
        self.cap[vi] = new_cap as u32;
    }

    /// Room for `n` more arena slots. The arena grows by a quarter at a
    /// time rather than doubling (still amortised O(1)), so its unused
    /// capacity stays within 25% of what it holds.
    fn reserve_arena(&mut self, n: usize) {
        if self.ids.len() + n > self.ids.capacity() {
            let more = n.max(self.ids.len() / 4);
            self.ids.reserve_exact(more);
            if self.edge_labelled {
                self.elabels.reserve_exact(more);
            }
        }
    }

    fn push(&mut self, a: VertexId, b: VertexId, label: Label) {
        self.reserve_list(a);
        let ai = a as usize;
        let p = self.off[ai] as usize + self.len[ai] as usize;
        self.ids[p] = b;
        if self.edge_labelled {
            self.elabels[p] = label;
        }
        self.len[ai] += 1;
    }

    /// Sorts the appended part of each of `touched`'s lists (whose old
    /// parts' lengths are in `old`), with its edge labels (one update at
    /// a time; [`Self::stage_lists_on_pool`] appends in order).
    fn sort_deltas(&mut self, touched: &[VertexId], old: &OldParts) {
        for &v in touched {
            let (s, len) = (self.off[v as usize] as usize, self.len[v as usize] as usize);
            let base = old[&v].len as usize;
            if len - base >= 2 {
                let (ids, labels) = self.window_mut(s + base, s + len);
                sort_paired(ids, labels);
            }
        }
    }

    /// Reorganises every touched list (GCSM Sec. V-A step 4) and makes the
    /// staged batch the committed graph. Returns the batch's net effect.
    pub fn commit(&mut self) -> BatchDelta {
        let Some(p) = self.pending.take() else {
            return BatchDelta::default();
        };
        let new_lens = self.reorganise_lists(&p, p.delta.changes());
        // `base`: the list's live length before the batch
        for (v, base, new_len) in new_lens {
            let vi = v as usize;
            self.set_touched(v, false);
            self.len[vi] = new_len as u32;
            self.degrees.change(base, new_len);
        }
        for &v in &p.delta.removed_vertices {
            self.labels[v as usize] = ABSENT;
        }
        self.num_edges = self.num_edges + p.delta.inserted.len() - p.delta.deleted.len();
        self.compact_if_wasteful();
        p.delta
    }

    /// [`reorganise`]s every list the pending batch `p` touched, on the
    /// rayon pool for batches of many `changes`; returns each list's
    /// vertex, length before the batch and new length.
    fn reorganise_lists(&mut self, p: &Pending, changes: usize) -> Vec<(VertexId, usize, usize)> {
        let parallel = self.parallel(changes);
        if !parallel && !self.large_arena() {
            // in the cache: one pass in the map's order (no lookups), each
            // list's places found as it is reorganised
            return p
                .old
                .iter()
                .map(|(&v, &part)| {
                    let (ids, labels) = self.list_mut(v);
                    let n = reorganise(ids, labels, part.len as usize, p.marks_of(part), None);
                    (v, part.len as usize, n)
                })
                .collect();
        }
        // the lists in the order they are reorganised, with their old
        // parts: by arena offset on the pool (each thread a run of
        // windows), else in the map's order
        let (vs, parts, spans): (Vec<VertexId>, Vec<OldPart>, _) = if parallel {
            let (vs, spans) = self.list_spans(&p.touched);
            let parts = vs.par_iter().map(|v| p.old[v]).collect();
            (vs, parts, spans)
        } else {
            let (vs, parts) = p.old.iter().map(|(&v, &part)| (v, part)).unzip();
            (vs, parts, Vec::new())
        };
        // where the appended entries go, found side by side beforehand
        let (at, starts) = self.insertion_points(&vs, &parts, parallel);
        let one = |i: usize, ids: &mut [VertexId], labels: &mut [Label]| {
            let part = parts[i];
            let at = &at[starts[i]..starts[i + 1]];
            (
                part.len as usize,
                reorganise(ids, labels, part.len as usize, p.marks_of(part), Some(at)),
            )
        };
        let lens = if parallel {
            let (ids, labels) = self.arena_mut();
            parallel::for_each_window(ids, labels, &spans, |i, ids, labels| one(i, ids, labels))
        } else {
            vs.iter()
                .enumerate()
                .map(|(i, &v)| {
                    let (ids, labels) = self.list_mut(v);
                    one(i, ids, labels)
                })
                .collect()
        };
        vs.into_iter()
            .zip(lens)
            .map(|(v, (before, after))| (v, before, after))
            .collect()
    }

    /// Where the appended entries of `vs`' staged lists (old parts in
    /// `parts`, in `vs` order) go in their old parts ([`reorganise`]'s
    /// `at`), all lists' in `vs` order, and where each list's begin
    /// (`vs.len() + 1` offsets): found by [`search::lower_bounds`], many at
    /// once, on the rayon pool when `parallel`.
    fn insertion_points(&self, vs: &[VertexId], parts: &[OldPart], parallel: bool) -> (Vec<u32>, Vec<usize>) {
        let mut starts = Vec::with_capacity(vs.len() + 1);
        starts.push(0);
        for (&v, part) in vs.iter().zip(parts) {
            starts.push(starts[starts.len() - 1] + (self.len[v as usize] - part.len) as usize);
        }
        // (the old part, the appended part)
        let split = |v: VertexId, part: &OldPart| {
            let (s, base, len) = (
                self.off[v as usize] as usize,
                part.len as usize,
                self.len[v as usize] as usize,
            );
            (&self.ids[s..s + base], &self.ids[s + base..s + len])
        };
        let find = |(vs, parts): (&[VertexId], &[OldPart])| {
            let mut queries: Vec<(&[VertexId], VertexId)> = Vec::new();
            for (&v, part) in vs.iter().zip(parts) {
                let (list, appended) = split(v, part);
                queries.extend(appended.iter().map(|&x| (list, x)));
            }
            let mut at = Vec::with_capacity(queries.len());
            search::lower_bounds(&queries, &mut at);
            at
        };
        let at = if parallel {
            vs.par_chunks(INSERTION_BLOCK)
                .zip(parts.par_chunks(INSERTION_BLOCK))
                .flat_map_iter(find)
                .collect()
        } else {
            find((vs, parts))
        };
        (at, starts)
    }

    /// Whether the arena is too large for the cache (as
    /// [`DynamicGraph::wants_pool`] counts it): its lookups then miss, and
    /// [`search::lower_bounds`] overlaps them; a small one's are searched
    /// one at a time (an early exit where a lookup finds its entry, and no
    /// query lists).
    fn large_arena(&self) -> bool {
        self.ids.len() >= self.parallel_min_arena.unwrap_or(Self::PARALLEL_MIN_ARENA)
    }

    /// Whether a batch of `n` updates (or changes) is worth spreading over
    /// threads: [`DynamicGraph::PARALLEL_MIN_UPDATES`] or more of them, in
    /// an arena too large for the cache, where threads overlap the lookups'
    /// misses (on email-Enron, 2.5 MB, staging on 16 threads was slower than
    /// on one). Callers with a pool run `stage` and `commit` inside it when
    /// this holds.
    pub fn wants_pool(&self, n: usize) -> bool {
        n >= Self::PARALLEL_MIN_UPDATES && self.ids.len() >= self.parallel_min_arena.unwrap_or(Self::PARALLEL_MIN_ARENA)
    }

    /// Whether graph work over `n` updates or changes goes to the rayon
    /// pool: [`DynamicGraph::wants_pool`], and called inside a pool.
    fn parallel(&self, n: usize) -> bool {
        self.wants_pool(n) && parallel::in_pool()
    }

    /// Sets the arena size (entries) from which large batches go to the
    /// rayon pool (default [`DynamicGraph::PARALLEL_MIN_ARENA`]; 0: always),
    /// for tests and experiments.
    pub fn set_parallel_min_arena(&mut self, entries: usize) {
        self.parallel_min_arena = Some(entries);
    }

    /// Drops a staged batch, restoring G_k exactly (appended entries removed,
    /// marks cleared, added vertices absent again).
    pub fn abort(&mut self) {
        let Some(p) = self.pending.take() else {
            return;
        };
        for &(v, q) in &p.marks {
            self.ids[self.off[v as usize] as usize + q as usize] &= !MARK;
        }
        for &v in &p.touched {
            self.set_touched(v, false);
            self.len[v as usize] = p.old[&v].len;
        }
        for &(v, _) in &p.delta.added_vertices {
            self.labels[v as usize] = ABSENT;
        }
        let n = p.slots_before;
        // slots added by the batch: committed degree 0 (restored above)
        for &l in &self.len[n.min(self.len.len())..] {
            self.degrees.remove(l as usize);
        }
        self.labels.truncate(n);
        self.off.truncate(n);
        self.len.truncate(n);
        self.cap.truncate(n);
        self.touched_bits.truncate(n.div_ceil(64));
    }

    /// Rewrites the arena without abandoned slots; a list keeps at most
    /// [`DynamicGraph::headroom`] free slots (a list that grew gives the
    /// rest back). Only between batches.
    fn compact(&mut self) {
        let mut ids = Vec::with_capacity(self.ids.len() - self.waste);
        let mut el = Vec::new();
        for v in 0..self.labels.len() {
            let (s, l) = (self.off[v] as usize, self.len[v] as usize);
            let c = (self.cap[v] as usize).min(l + Self::headroom(l as u32) as usize);
            self.off[v] = ids.len() as u64;
            self.cap[v] = c as u32;
            ids.extend_from_slice(&self.ids[s..s + c]);
            if self.edge_labelled {
                el.extend_from_slice(&self.elabels[s..s + c]);
            }
        }
        self.ids = ids;
        self.elabels = el;
        self.waste = 0;
    }

    /// The committed graph (G_k while a batch is pending) as an edge list.
    pub fn to_data(&self) -> GraphData {
        self.to_csr(Version::Old).to_data()
    }

    /// A snapshot of one version.
    pub fn to_csr(&self, ver: Version) -> CsrGraph {
        CsrGraph::from_view(self, ver)
    }

    /// Bytes held by the store, headroom and abandoned slots included.
    pub fn memory_bytes(&self) -> usize {
        // a pending batch's per-touched-vertex state: about 20 bytes a map
        // entry (key, value, control byte, load) and 4 in `touched`
        let pending = self
            .pending
            .as_ref()
            .map_or(0, |p| p.old.capacity() * 20 + p.touched.capacity() * 4);
        self.labels.len() * (4 + 8 + 4 + 4)
            + self.touched_bits.len() * 8
            + self.ids.capacity() * 4
            + self.elabels.capacity() * 4
            + pending
    }

    /// The raw layout of `v`'s list: (old part with marks, appended part).
    /// GPU stores mirror this (GCSM Fig. 5).
    pub fn raw_list(&self, v: VertexId) -> (&[VertexId], &[VertexId]) {
        if v as usize >= self.labels.len() {
            return (&[], &[]);
        }
        let (s, base, len) = self.slot(v);
        (&self.ids[s..s + base], &self.ids[s + base..s + len])
    }
}

impl GraphView for DynamicGraph {
    fn num_vertices(&self) -> usize {
        self.labels.len()
    }
    fn labels(&self) -> &[Label] {
        &self.labels
    }
    #[inline]
    fn nbrs(&self, v: VertexId, ver: Version) -> Nbrs<'_> {
        let vi = v as usize;
        if vi >= self.labels.len() {
            return Nbrs::EMPTY;
        }
        let s = self.off[vi] as usize;
        let live = self.len[vi] as usize;
        let (base, marked) = self.old_part(v, live);
        let len = if ver == Version::New { live } else { base };
        let (bl, dl): (&[Label], &[Label]) = if self.edge_labelled {
            (&self.elabels[s..s + base], &self.elabels[s + base..s + len])
        } else {
            (&[], &[])
        };
        Nbrs {
            base: &self.ids[s..s + base],
            base_labels: bl,
            delta: &self.ids[s + base..s + len],
            delta_labels: dl,
            skip_marked: ver != Version::Old,
            marked,
        }
    }
    fn edge_labelled(&self) -> bool {
        self.edge_labelled
    }
    fn max_degree(&self) -> usize {
        // while pending, appended entries can exceed the committed maximum
        match &self.pending {
            None => self.degrees.max(),
            Some(p) => p
                .touched
                .iter()
                .map(|&v| self.len[v as usize] as usize)
                .fold(self.degrees.max(), usize::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// One edge update validates to what the general (overlay) path
        /// gives: the same delta, the same error, in both modes.
        #[test]
        fn one_edge_validation_equals_the_batch_path(
            n in 2u32..9,
            pairs in prop::collection::vec((0u32..10, 0u32..10, 0u32..3), 0..20),
            labelled in any::<bool>(),
            (u, v, l) in (0u32..11, 0u32..11, 0u32..3),
            insert in any::<bool>(),
            lenient in any::<bool>(),
        ) {
            let mut edges: Vec<Edge> = pairs
                .iter()
                .filter(|&&(a, b, _)| a != b && a < n && b < n)
                .map(|&(a, b, el)| Edge::new(a.min(b), a.max(b), if labelled { el } else { 0 }))
                .collect();
            edges.sort_by_key(|e| e.key());
            edges.dedup_by_key(|e| e.key());
            let data = GraphData {
                labels: (0..n).map(|x| x % 2).collect(),
                edges,
                edge_labelled: labelled,
            };
            let g = DynamicGraph::from_data(&data).expect("valid");
            let e = Edge::new(u, v, l);
            let lu = LocatedUpdate {
                line: 7,
                update: if insert { Update::AddEdge(e) } else { Update::RemoveEdge(e) },
            };
            let mode = if lenient { Strictness::Lenient } else { Strictness::Strict };
            prop_assert_eq!(
                g.validate_one_edge(&lu, e, "s", mode),
                g.validate_batch(std::slice::from_ref(&lu), "s", mode)
            );
        }
    }
}
