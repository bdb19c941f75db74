//! Binary searches run side by side.
//!
//! Staging and committing a batch look up, per update, an edge or the place
//! of a new entry in a list that is usually far from the cache (an R-MAT's
//! hub lists hold most entries, and a batch touches 13 K lists of 19 M
//! entries on a 2 M-vertex R-MAT at 8,192 updates). One search at a time
//! waits for each of its cache misses in turn. [`lower_bounds`] steps
//! [`LANES`] independent searches together, so the processor has their
//! loads in flight at once.

use crate::types::VertexId;
use crate::view::MARK;

/// Searches stepped together.
pub(super) const LANES: usize = 16;

/// For each query `(list, key)` in order, pushes onto `out` the number of
/// entries of `list` (sorted by id, marks ignored: the id is the entry
/// without [`MARK`]) whose id is below `key`: `list.partition_point(|&y|
/// y & !MARK < key)`.
pub(super) fn lower_bounds(queries: &[(&[VertexId], VertexId)], out: &mut Vec<u32>) {
    out.reserve(queries.len());
    for group in queries.chunks(LANES) {
        let mut base = [0usize; LANES];
        let mut left = [0usize; LANES];
        for (n, (list, _)) in left.iter_mut().zip(group) {
            *n = list.len();
        }
        loop {
            let mut stepped = false;
            for ((b, n), &(list, key)) in base.iter_mut().zip(left.iter_mut()).zip(group) {
                if *n > 1 {
                    let half = *n / 2;
                    let mid = *b + half;
                    *b = if list[mid] & !MARK < key { mid } else { *b };
                    *n -= half;
                    stepped = true;
                }
            }
            if !stepped {
                break;
            }
        }
        for (&b, &(list, key)) in base.iter().zip(group) {
            let p = if list.is_empty() {
                0
            } else {
                b + usize::from(list[b] & !MARK < key)
            };
            out.push(p as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every answer is `partition_point`'s, for lists of every length
        /// (empty ones too), marked entries, and keys below, inside,
        /// between and above the entries, in groups of every size.
        #[test]
        fn lower_bounds_are_partition_points(
            lists in proptest::collection::vec(
                proptest::collection::btree_set(0u32..300, 0..80), 1..6),
            marks in proptest::collection::vec(any::<bool>(), 80),
            keys in proptest::collection::vec((0usize..6, 0u32..310), 0..50),
        ) {
            let lists: Vec<Vec<VertexId>> = lists
                .into_iter()
                .map(|s| s.into_iter().zip(&marks).map(|(x, &m)| if m { x | MARK } else { x }).collect())
                .collect();
            let queries: Vec<(&[VertexId], VertexId)> =
                keys.iter().map(|&(l, k)| (&lists[l % lists.len()][..], k)).collect();
            let mut got = vec![7];
            lower_bounds(&queries, &mut got);
            let want: Vec<u32> = std::iter::once(7)
                .chain(queries.iter().map(|(l, k)| l.partition_point(|&y| y & !MARK < *k) as u32))
                .collect();
            prop_assert_eq!(got, want);
        }
    }
}
