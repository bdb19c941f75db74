//! Erdős–Rényi G(n, m) graphs.

use super::pairs::{distinct_keys, key, unkey};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `m` distinct undirected pairs drawn uniformly from the `n (n - 1) / 2`
/// pairs over vertices `0..n` (G(n, m)), normalised (`u < v`) and sorted.
/// Deterministic for a given `seed`.
///
/// # Panics
/// If `m > n (n - 1) / 2` or `n > 2^31 - 1`.
pub fn erdos_renyi(n: usize, m: usize, seed: u64) -> Vec<(u32, u32)> {
    assert!(n < (1usize << 31), "G(n, m): n = {n} too large");
    let max_pairs = (n as u64) * (n as u64).saturating_sub(1) / 2;
    assert!(
        m as u64 <= max_pairs,
        "G(n, m) needs m <= n(n-1)/2 = {max_pairs}, got m = {m}"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    if 2 * m as u64 >= max_pairs {
        // Dense: enumerate every pair (at most 2m of them) and pick m.
        let mut all: Vec<(u32, u32)> = (0..n as u32)
            .flat_map(|u| (u + 1..n as u32).map(move |v| (u, v)))
            .collect();
        let (chosen, _) = all.partial_shuffle(&mut rng, m);
        let mut chosen = chosen.to_vec();
        chosen.sort_unstable();
        return chosen;
    }
    let n32 = n as u32;
    let keys = distinct_keys(m, &mut rng, |rng| {
        let u = rng.random_range(0..n32);
        let v = rng.random_range(0..n32);
        (u != v).then(|| key(u, v))
    });
    keys.into_iter().map(unkey).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_determinism() {
        for (n, m) in [(100, 300), (10, 45), (10, 30), (1000, 0), (0, 0), (2, 1)] {
            let e = erdos_renyi(n, m, 7);
            assert_eq!(e.len(), m);
            assert!(e.windows(2).all(|w| w[0] < w[1]));
            assert!(e.iter().all(|&(u, v)| u < v && (v as usize) < n));
            assert_eq!(e, erdos_renyi(n, m, 7));
        }
        assert_ne!(erdos_renyi(100, 300, 1), erdos_renyi(100, 300, 2));
    }

    #[test]
    #[should_panic(expected = "G(n, m) needs")]
    fn too_many_edges() {
        erdos_renyi(4, 7, 0);
    }
}
