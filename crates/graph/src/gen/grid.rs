//! Road-like noisy 2-D grids (a stand-in for the RoadNet graphs of GCSM
//! Table I: low, nearly uniform degree and a large diameter).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A `rows x cols` grid over vertices `r * cols + c`: every horizontal and
/// vertical grid edge is kept with probability `1 - noise / 2`, and each grid
/// cell gets one random diagonal (either direction) with probability
/// `noise / 2`. Pairs are normalised (`u < v`), distinct, in a fixed order;
/// deterministic for a given `seed`.
///
/// # Panics
/// If `noise` is not in `[0, 1]` or the grid has more than `2^31 - 1` vertices.
pub fn grid(rows: usize, cols: usize, noise: f64, seed: u64) -> Vec<(u32, u32)> {
    assert!(
        (0.0..=1.0).contains(&noise),
        "grid noise must be in [0, 1], got {noise}"
    );
    let n = rows.checked_mul(cols).expect("grid size overflows");
    assert!(n < (1usize << 31), "grid with {n} vertices is too large");
    let p = noise / 2.0;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let id = |r: usize, c: usize| (r * cols + c) as u32;
    let mut out = Vec::with_capacity(2 * n);
    for r in 0..rows {
        for c in 0..cols {
            if c + 1 < cols && !rng.random_bool(p) {
                out.push((id(r, c), id(r, c + 1)));
            }
            if r + 1 < rows && !rng.random_bool(p) {
                out.push((id(r, c), id(r + 1, c)));
            }
            if r + 1 < rows && c + 1 < cols && rng.random_bool(p) {
                if rng.random_bool(0.5) {
                    out.push((id(r, c), id(r + 1, c + 1)));
                } else {
                    out.push((id(r, c + 1), id(r + 1, c)));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn clean_grid_has_all_edges() {
        let e = grid(3, 4, 0.0, 0);
        assert_eq!(e.len(), 3 * 3 + 2 * 4);
        assert!(e.iter().all(|&(u, v)| u < v && v < 12));
    }

    #[test]
    fn noisy_grid_is_deterministic_and_simple() {
        let e = grid(50, 60, 0.2, 3);
        assert_eq!(e, grid(50, 60, 0.2, 3));
        assert_ne!(e, grid(50, 60, 0.2, 4));
        let set: HashSet<_> = e.iter().copied().collect();
        assert_eq!(set.len(), e.len());
        assert!(e.iter().all(|&(u, v)| u < v && v < 3000));
        let full = 50 * 59 + 49 * 60;
        let diag = 49 * 59;
        // Expected ~ 0.9 * full + 0.1 * diag.
        let expect = 0.9 * full as f64 + 0.1 * diag as f64;
        assert!(
            (e.len() as f64 - expect).abs() < 0.05 * expect,
            "{} vs {expect}",
            e.len()
        );
        let mut deg = vec![0u32; 3000];
        for &(u, v) in &e {
            deg[u as usize] += 1;
            deg[v as usize] += 1;
        }
        assert!(*deg.iter().max().unwrap() <= 8);
    }
}
