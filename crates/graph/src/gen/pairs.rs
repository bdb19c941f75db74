//! Drawing a given number of distinct undirected pairs by sort + dedup +
//! top-up rounds (much faster than a hash set for tens of millions of edges).

use rand::RngCore;

/// Rounds in a row without a new pair after which sampling gives up (the
/// sampler cannot reach the remaining pairs, or almost never does).
const MAX_IDLE_ROUNDS: u32 = 32;
/// Below this many missing pairs a round over-draws and keeps the earliest
/// fresh draws (few rounds near saturation); above it a round draws exactly
/// the missing count, so nothing is ever truncated.
const SMALL_NEED: usize = 4096;

/// Key of the pair `{u, v}`, smaller id in the high half.
#[inline]
pub(crate) fn key(u: u32, v: u32) -> u64 {
    let (a, b) = if u <= v { (u, v) } else { (v, u) };
    (u64::from(a) << 32) | u64::from(b)
}

#[inline]
pub(crate) fn unkey(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// Drops from sorted `cand` every key in sorted `taken` (linear merge).
fn remove_taken(cand: &mut Vec<u64>, taken: &[u64]) {
    let mut j = 0;
    cand.retain(|&k| {
        while j < taken.len() && taken[j] < k {
            j += 1;
        }
        j == taken.len() || taken[j] != k
    });
}

/// Merges two sorted, disjoint key lists.
fn merge(a: Vec<u64>, b: &[u64]) -> Vec<u64> {
    if b.is_empty() {
        return a;
    }
    if a.is_empty() {
        return b.to_vec();
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The first `target` distinct keys that `draw` produces (`None` draws, e.g.
/// self-loops, are skipped), sorted. Each round draws a batch, sorts and
/// deduplicates it and drops keys already taken; a round never keeps more
/// than the missing count, and when it could (small top-ups) it keeps the
/// earliest-drawn fresh keys, so the result does not favour small keys.
/// Returns fewer than `target` keys only after [`MAX_IDLE_ROUNDS`] rounds in
/// a row found nothing new.
pub(crate) fn distinct_keys<R: RngCore>(
    target: usize,
    rng: &mut R,
    mut draw: impl FnMut(&mut R) -> Option<u64>,
) -> Vec<u64> {
    let mut taken: Vec<u64> = Vec::new();
    let mut fresh_rate = 1.0f64;
    let mut idle = 0;
    while taken.len() < target && idle < MAX_IDLE_ROUNDS {
        let need = target - taken.len();
        let fresh: Vec<u64> = if need >= SMALL_NEED {
            let mut cand: Vec<u64> = (0..need).filter_map(|_| draw(rng)).collect();
            cand.sort_unstable();
            cand.dedup();
            remove_taken(&mut cand, &taken);
            cand
        } else {
            let batch = ((need as f64 / fresh_rate) * 1.2 + 64.0).min(1e7) as usize;
            let mut cand: Vec<(u64, u32)> = (0..batch).filter_map(|i| draw(rng).map(|k| (k, i as u32))).collect();
            cand.sort_unstable();
            cand.dedup_by_key(|c| c.0); // keeps the earliest draw of each key
            cand.retain(|c| taken.binary_search(&c.0).is_err());
            fresh_rate = (cand.len() as f64 / batch as f64).max(1e-4);
            if cand.len() > need {
                cand.sort_unstable_by_key(|c| c.1);
                cand.truncate(need);
                cand.sort_unstable();
            }
            cand.into_iter().map(|c| c.0).collect()
        };
        idle = if fresh.is_empty() { idle + 1 } else { 0 };
        taken = merge(taken, &fresh);
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn merge_and_remove() {
        assert_eq!(merge(vec![1, 4, 9], &[2, 3, 10]), vec![1, 2, 3, 4, 9, 10]);
        let mut c = vec![1, 2, 3, 5, 8];
        remove_taken(&mut c, &[2, 5, 6, 9]);
        assert_eq!(c, vec![1, 3, 8]);
    }

    #[test]
    fn exact_distinct_counts() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        for target in [0, 1, 100, 5000, 20_000] {
            let k = distinct_keys(target, &mut rng, |r| Some(r.random_range(0..30_000u64)));
            assert_eq!(k.len(), target);
            assert!(k.windows(2).all(|w| w[0] < w[1]));
        }
        // Unreachable target: gives up with every reachable key.
        let k = distinct_keys(20, &mut rng, |r| Some(r.random_range(0..10u64)));
        assert_eq!(k, (0..10).collect::<Vec<_>>());
    }
}
