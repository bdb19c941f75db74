//! Staging a large batch's lists on the rayon pool (GCSM Sec. V-A steps
//! 1-3: deleted entries marked, inserted ones appended behind the old
//! lists).
//!
//! One update at a time, staging records a list's old part in a hash map,
//! marks or appends, and moves a full list: a few cache misses per list
//! end, one after another (about 3 ms of an 8,192-update batch on the H200
//! host's 134 M-edge R-MAT, with validation and the lookups already on the
//! pool). Here the marks and the appended entries are sorted by list
//! first, on the pool; the old parts are read, the marks set and the
//! appended entries written on the pool, each list's together; only the
//! hash map's inserts and the moves of lists that run out of room stay on
//! one thread.

use std::sync::atomic::{AtomicU32, Ordering};

use foldhash::fast::FixedState;
use rayon::prelude::*;

use super::{parallel, BatchDelta, DynamicGraph, OldPart, OldParts, NO_MARK};
use crate::types::{Label, VertexId};
use crate::view::MARK;

/// What [`DynamicGraph::stage_lists_on_pool`] leaves for the pending batch.
pub(super) struct Staged {
    pub touched: Vec<VertexId>,
    pub old: OldParts,
    pub marks: Vec<(VertexId, u32)>,
    pub mark_before: Vec<u32>,
}

/// One touched list: its vertex, its marks (a range of the sorted marks)
/// and its appended entries (a range of the sorted appends).
struct Group {
    v: VertexId,
    marks: (usize, usize),
    appends: (usize, usize),
}

impl Group {
    /// Entries the batch appends to the list.
    fn appended(&self) -> usize {
        self.appends.1 - self.appends.0
    }
}

impl DynamicGraph {
    /// Marks `delta`'s deletions and appends its insertions (each list's
    /// appended part sorted), on the rayon pool: the same graph and
    /// pending state as the one-at-a-time loop of `apply_delta`, with each
    /// list's marks chained in ascending order.
    pub(super) fn stage_lists_on_pool(&mut self, delta: &BatchDelta) -> Staged {
        // marks (list, arena position) and appends (list, neighbour,
        // label), each grouped by list and ascending within it
        let mut slots = self.deletion_slots(&delta.deleted, delta.changes());
        slots.par_sort_unstable();
        let mut appends: Vec<(VertexId, VertexId, Label)> = delta
            .inserted
            .par_iter()
            .flat_map_iter(|e| [(e.u, e.v, e.label), (e.v, e.u, e.label)])
            .collect();
        appends.par_sort_unstable();
        let groups = group(&slots, &appends);
        // old parts and the marks' positions in their lists, read on the pool
        let parts: Vec<OldPart> = groups
            .par_iter()
            .map(|g| OldPart {
                len: self.len[g.v as usize],
                marked: (g.marks.1 - g.marks.0) as u32,
                last_mark: if g.marks.1 > g.marks.0 {
                    g.marks.1 as u32 - 1
                } else {
                    NO_MARK
                },
            })
            .collect();
        let marks: Vec<(VertexId, u32)> = slots
            .par_iter()
            .map(|&(a, at)| (a, (at - self.off[a as usize] as usize) as u32))
            .collect();
        let mark_before: Vec<u32> = (0..slots.len())
            .into_par_iter()
            .map(|i| {
                if i > 0 && slots[i - 1].0 == slots[i].0 {
                    i as u32 - 1
                } else {
                    NO_MARK
                }
            })
            .collect();
        // the marks, set at distinct positions
        {
            // SAFETY: `AtomicU32` has the size, alignment and bit validity of
            // `u32`, and the exclusive borrow of `ids` is held for the view's
            // lifetime, so every access to these entries goes through it.
            let ids: &[AtomicU32] = unsafe { &*(self.ids.as_mut_slice() as *mut [u32] as *const [AtomicU32]) };
            slots.par_iter().for_each(|&(_, at)| {
                ids[at].fetch_or(MARK, Ordering::Relaxed);
            });
        }
        // lists without room for their appends move first (one thread:
        // they grow the arena), then every list's appends are written
        let short: Vec<(VertexId, u32)> = groups
            .par_iter()
            .zip(&parts)
            .filter(|(g, part)| part.len as usize + g.appended() > self.cap[g.v as usize] as usize)
            .map(|(g, _)| (g.v, g.appended() as u32))
            .collect();
        for (v, n) in short {
            self.reserve_room(v, n as usize);
        }
        let mut spans: Vec<(usize, usize, usize)> = groups
            .iter()
            .zip(&parts)
            .filter(|(g, _)| g.appended() > 0)
            .map(|(g, part)| {
                let s = self.off[g.v as usize] as usize + part.len as usize;
                (s, s + g.appended(), g.appends.0)
            })
            .collect();
        spans.par_sort_unstable();
        let windows: Vec<(usize, usize)> = spans.iter().map(|&(s, e, _)| (s, e)).collect();
        let labelled = self.edge_labelled;
        let (ids, labels) = self.arena_mut();
        parallel::for_each_window(ids, labels, &windows, |i, ids, labels| {
            let from = spans[i].2;
            for (j, &(_, b, l)) in appends[from..from + ids.len()].iter().enumerate() {
                ids[j] = b;
                if labelled {
                    labels[j] = l;
                }
            }
        });
        let mut old: OldParts = OldParts::with_capacity_and_hasher(groups.len(), FixedState::default());
        let mut touched = Vec::with_capacity(groups.len());
        for (g, part) in groups.iter().zip(parts) {
            self.len[g.v as usize] += g.appended() as u32;
            self.set_touched(g.v, true);
            old.insert(g.v, part);
            touched.push(g.v);
        }
        Staged {
            touched,
            old,
            marks,
            mark_before,
        }
    }
}

/// The touched lists, ascending: the vertices of `slots` and of `appends`
/// (both sorted by vertex), each with its ranges in both.
fn group(slots: &[(VertexId, usize)], appends: &[(VertexId, VertexId, Label)]) -> Vec<Group> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < slots.len() || j < appends.len() {
        let v = match (slots.get(i), appends.get(j)) {
            (Some(s), Some(a)) => s.0.min(a.0),
            (Some(s), None) => s.0,
            (None, Some(a)) => a.0,
            (None, None) => unreachable!("one of them is left"),
        };
        let (i0, j0) = (i, j);
        while i < slots.len() && slots[i].0 == v {
            i += 1;
        }
        while j < appends.len() && appends[j].0 == v {
            j += 1;
        }
        out.push(Group {
            v,
            marks: (i0, i),
            appends: (j0, j),
        });
    }
    out
}
