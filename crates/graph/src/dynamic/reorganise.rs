//! GCSM Sec. V-A step 4 for one list: the commit's reorganisation of a
//! staged list (old part with marked deletions, sorted appended part) into
//! one sorted list.
//!
//! The kept runs between marks move down as blocks; then the appended
//! entries are merged in from the back, the kept entries above each one's
//! place shifting up as one block. The marks' positions come from staging
//! (until the thirty-seventh session they were found by scanning each
//! list's tail, one more pass over it), and where the appended entries go
//! may be found beforehand, many searches side by side
//! ([`super::search::lower_bounds`]), for lists outside the cache. A list
//! with one change (most of a batch's) moves one block and needs no
//! scratch.

use std::cell::RefCell;

use crate::types::{Label, VertexId};
use crate::view::MARK;

/// Per-thread buffers of [`reorganise`] (commits call it once per touched
/// list, about 13 K lists for 8,192 updates on an R-MAT).
#[derive(Default)]
struct Scratch {
    /// The appended entries (id, edge label).
    appended: Vec<(VertexId, Label)>,
    /// The marked positions, ascending.
    marks: Vec<u32>,
    /// Where the appended entries go, when found here.
    at: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Reorganises one list: `ids` (and `labels`, parallel to it, or empty for
/// a graph without edge labels) hold the old part `[0, base)`, whose
/// entries at `marks` (distinct, below `base`, in any order) carry
/// [`MARK`],
/// then the sorted appended part `[base, ids.len())`; `at` says where each
/// appended entry goes: the number of old entries whose id (the entry
/// without the mark) is below it, as [`super::search::lower_bounds`] finds
/// it (None: found here, one search after another, for lists in the
/// cache). Afterwards `[0, returned length)` is the sorted list without the
/// marked entries and with the appended ones; entries past it are
/// unspecified.
pub(super) fn reorganise(
    ids: &mut [VertexId],
    labels: &mut [Label],
    base: usize,
    marks: impl Iterator<Item = u32>,
    at: Option<&[u32]>,
) -> usize {
    // most touched lists change once: one block moves
    let k = ids.len() - base;
    let mut marks = marks.peekable();
    let labelled = !labels.is_empty();
    match (k, marks.next()) {
        (0, None) => base,
        (0, Some(m)) if marks.peek().is_none() => {
            move_run(ids, labels, labelled, m as usize + 1..base, m as usize);
            base - 1
        }
        (1, None) => {
            let x = ids[base];
            let p = at.map_or_else(|| ids[..base].partition_point(|&y| y & !MARK < x), |at| at[0] as usize);
            let l = if labelled { labels[base] } else { 0 };
            move_run(ids, labels, labelled, p..base, p + 1);
            ids[p] = x;
            if labelled {
                labels[p] = l;
            }
            base + 1
        }
        (_, first) => SCRATCH.with(|s| reorganise_scratch(ids, labels, base, first.into_iter().chain(marks), at, s)),
    }
}

/// [`reorganise`] with the thread's scratch.
fn reorganise_scratch(
    ids: &mut [VertexId],
    labels: &mut [Label],
    base: usize,
    marks: impl Iterator<Item = u32>,
    at: Option<&[u32]>,
    s: &RefCell<Scratch>,
) -> usize {
    let s = &mut *s.borrow_mut();
    let mut m = std::mem::take(&mut s.marks);
    m.clear();
    m.extend(marks);
    m.sort_unstable();
    let mut found = std::mem::take(&mut s.at);
    let at = at.unwrap_or_else(|| {
        found.clear();
        let mut lo = 0;
        for &x in &ids[base..] {
            lo += ids[lo..base].partition_point(|&y| y & !MARK < x);
            found.push(lo as u32);
        }
        &found
    });
    let n = reorganise_with(ids, labels, base, &m, at, s);
    s.marks = m;
    s.at = found;
    n
}

fn reorganise_with(
    ids: &mut [VertexId],
    labels: &mut [Label],
    base: usize,
    marks: &[u32],
    at: &[u32],
    s: &mut Scratch,
) -> usize {
    let labelled = !labels.is_empty();
    let k = ids.len() - base;
    debug_assert_eq!(at.len(), k, "a place for each appended entry");
    if k == 0 && marks.is_empty() {
        return base;
    }
    // drop the marks: the kept runs between them move down as blocks
    let mut w = marks.first().map_or(base, |&m| m as usize);
    for (i, &m) in marks.iter().enumerate() {
        let end = marks.get(i + 1).map_or(base, |&n| n as usize);
        let run = m as usize + 1..end;
        let n = run.len();
        move_run(ids, labels, labelled, run, w);
        w += n;
    }
    // merge the appended entries in from the back: the kept entries above
    // each one's place shift up as one block
    s.appended.clear();
    s.appended
        .extend((base..ids.len()).map(|i| (ids[i], if labelled { labels[i] } else { 0 })));
    let mut i = w; // one past the last kept old entry not yet moved
    let mut b = marks.len(); // marks below the place looked at
    for (j, (&(x, l), &p)) in s.appended.iter().zip(at).enumerate().rev() {
        while b > 0 && marks[b - 1] >= p {
            b -= 1;
        }
        // the place among the kept entries
        let p = p as usize - b;
        move_run(ids, labels, labelled, p..i, p + j + 1);
        ids[p + j] = x;
        if labelled {
            labels[p + j] = l;
        }
        i = p;
    }
    w + k
}

/// Moves entries `from` (ids and, when `labelled`, labels) to start at `to`
/// (`copy_within`: the ranges may overlap).
#[inline]
fn move_run(ids: &mut [VertexId], labels: &mut [Label], labelled: bool, from: std::ops::Range<usize>, to: usize) {
    if from.is_empty() || from.start == to {
        return;
    }
    ids.copy_within(from.clone(), to);
    if labelled {
        labels.copy_within(from, to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// Old entries (id, label, marked) and appended ones (id, label).
    type Staged = (Vec<(VertexId, Label, bool)>, Vec<(VertexId, Label)>);

    /// A staged list: distinct old ids (some marked) and distinct appended
    /// ids that no kept old id equals (an appended id may equal a marked
    /// one: an edge deleted and inserted again with another label).
    fn staged() -> impl Strategy<Value = Staged> {
        (
            proptest::collection::btree_map(0u32..400, (0u32..5, proptest::bool::weighted(0.3)), 0..60),
            proptest::collection::btree_map(0u32..400, 0u32..5, 0..30),
        )
            .prop_map(|(old, app): (BTreeMap<u32, (u32, bool)>, BTreeMap<u32, u32>)| {
                let app: Vec<(u32, u32)> = app
                    .into_iter()
                    .filter(|(x, _)| !matches!(old.get(x), Some(&(_, false))))
                    .collect();
                (old.into_iter().map(|(x, (l, m))| (x, l, m)).collect(), app)
            })
    }

    proptest! {
        /// The result is the sorted union of the kept and appended
        /// entries with their labels (the oracle: filter, concatenate,
        /// sort), with and without edge labels, and with a scratch that
        /// earlier lists left dirty.
        #[test]
        fn reorganised_lists_are_the_sorted_kept_and_appended_entries(
            (old, app) in staged(),
            labelled in any::<bool>(),
            dirty in any::<bool>(),
        ) {
            let mut ids: Vec<VertexId> = old.iter().map(|&(x, _, m)| if m { x | MARK } else { x }).collect();
            ids.extend(app.iter().map(|&(x, _)| x));
            let mut labels: Vec<Label> = if labelled {
                old.iter().map(|&(_, l, _)| l).chain(app.iter().map(|&(_, l)| l)).collect()
            } else {
                Vec::new()
            };
            let marks: Vec<u32> = old.iter().enumerate().filter(|(_, e)| e.2).map(|(i, _)| i as u32).collect();
            let mut want: Vec<(VertexId, Label)> = old
                .iter()
                .filter(|e| !e.2)
                .map(|&(x, l, _)| (x, l))
                .chain(app.iter().copied())
                .collect();
            want.sort_unstable();
            let at: Vec<u32> = app
                .iter()
                .map(|&(x, _)| ids[..old.len()].partition_point(|&y| y & !MARK < x) as u32)
                .collect();
            let mut s = Scratch::default();
            if dirty {
                s.appended.extend([(7, 7); 9]);
            }
            let n = reorganise_with(&mut ids, &mut labels, old.len(), &marks, &at, &mut s);
            prop_assert_eq!(n, want.len());
            let got: Vec<(VertexId, Label)> =
                (0..n).map(|i| (ids[i], if labelled { labels[i] } else { want[i].1 })).collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn a_list_without_changes_is_left_alone() {
        let mut ids = vec![1, 5, 9];
        assert_eq!(reorganise(&mut ids, &mut [], 3, std::iter::empty(), None), 3);
        assert_eq!(ids, vec![1, 5, 9]);
    }

    #[test]
    fn marks_and_inserts_at_the_same_place() {
        // 5 deleted and 5 inserted again (another label), 7 deleted, 8 and
        // 12 inserted, 1 kept before everything
        let mut ids = vec![1, 5 | MARK, 7 | MARK, 9, 11, 5, 8, 12];
        let mut labels = vec![0, 1, 1, 0, 0, 2, 3, 4];
        // 5 goes before old entry 1, 8 before 3, 12 after the old part
        let n = reorganise(&mut ids, &mut labels, 5, [2, 1].into_iter(), Some(&[1, 3, 5]));
        assert_eq!(n, 6);
        assert_eq!(&ids[..n], &[1, 5, 8, 9, 11, 12]);
        assert_eq!(&labels[..n], &[0, 2, 3, 0, 0, 4]);
    }
}
