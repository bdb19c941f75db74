//! The parts of staging and committing a batch that can run on a rayon
//! pool: edge lookups in G_k (read-only) and per-list sorting and merging
//! (each list owns its own window of the arena).
//!
//! They pay on graphs whose lists miss the cache: on a 2 M-edge R-MAT most
//! of a batch's graph work is edge lookups at several cache misses each
//! (binary searches in random lists), which threads overlap. On email-Enron
//! (a 2.5 MB arena) batches of 4,096 staged slower on 16 threads than on
//! one, so small arenas, small batches and callers outside a pool stay
//! sequential.

use rayon::prelude::*;

use crate::slices::windows_mut;

/// Batches of at least this many updates stage and commit in parallel...
pub(super) const MIN_UPDATES: usize = 2048;

/// ... in an arena of at least this many entries (4 MB), which misses the
/// cache.
pub(super) const MIN_ARENA: usize = 1 << 20;

/// Whether the caller runs inside a rayon pool (e.g. a matcher's
/// `pool.install`) of 2 or more threads: callers that never asked for
/// threads stay on theirs.
pub(crate) fn in_pool() -> bool {
    rayon::current_thread_index().is_some() && rayon::current_num_threads() > 1
}

/// `f(i, window_i, label_window_i)` for every span, in parallel; the label
/// windows are empty when `labels` is (a graph without edge labels).
pub(super) fn for_each_window<T: Send, L: Send, R: Send>(
    arena: &mut [T],
    labels: &mut [L],
    spans: &[(usize, usize)],
    f: impl Fn(usize, &mut [T], &mut [L]) -> R + Sync,
) -> Vec<R> {
    let ws = windows_mut(arena, spans.iter().copied());
    let ls = if labels.is_empty() {
        spans.iter().map(|_| <&mut [L]>::default()).collect()
    } else {
        windows_mut(labels, spans.iter().copied())
    };
    ws.into_par_iter()
        .zip(ls)
        .enumerate()
        .map(|(i, (w, l))| f(i, w, l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_window_is_changed_in_place() {
        let mut a: Vec<u32> = (0..10).rev().collect();
        let mut l: Vec<u8> = vec![0; 10];
        let spans = [(0, 4), (6, 10)];
        let lens = for_each_window(&mut a, &mut l, &spans, |i, w, lw| {
            w.sort_unstable();
            lw.fill(i as u8 + 1);
            w.len()
        });
        assert_eq!(lens, vec![4, 4]);
        assert_eq!(a, vec![6, 7, 8, 9, 5, 4, 0, 1, 2, 3]);
        assert_eq!(l, vec![1, 1, 1, 1, 0, 0, 2, 2, 2, 2]);
    }
}
