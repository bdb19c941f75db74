//! R-MAT power-law graphs (Chakrabarti, Zhan & Faloutsos, SDM 2004).

use super::pairs::{distinct_keys, key, unkey};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The usual R-MAT quadrant probabilities `(a, b, c)` (Graph500 uses these;
/// `d = 1 - a - b - c = 0.05`).
pub const RMAT_STANDARD: (f64, f64, f64) = (0.57, 0.19, 0.19);

/// `edges` distinct undirected R-MAT edges over vertices `0..2^scale`.
///
/// Each edge picks one quadrant per level of the adjacency matrix with
/// probabilities `a`, `b`, `c`, `d = 1 - a - b - c`. Self-loops and repeated
/// pairs are dropped and more edges drawn until exactly `edges` distinct
/// pairs exist; the count is capped at `2^scale (2^scale - 1) / 2`, and it can
/// fall short only when the remaining pairs are (nearly) unreachable, e.g. a
/// zero quadrant probability. Pairs come out normalised (`u < v`) and sorted.
/// Deterministic for a given `seed`. Vertex ids are not permuted, so low ids
/// have high degree. Quadrant probabilities are resolved to 2^-16.
///
/// # Panics
/// If `scale > 30` (ids must stay below [`MAX_VERTEX_ID`](crate::types::MAX_VERTEX_ID)),
/// or a probability is negative or `a + b + c > 1`.
pub fn rmat(scale: u32, edges: usize, a: f64, b: f64, c: f64, seed: u64) -> Vec<(u32, u32)> {
    assert!(scale <= 30, "R-MAT scale {scale} too large (at most 30)");
    assert!(
        a >= 0.0 && b >= 0.0 && c >= 0.0 && a + b + c <= 1.0 + 1e-9,
        "R-MAT probabilities must be >= 0 with a + b + c <= 1 (got {a}, {b}, {c})"
    );
    let n = 1u64 << scale;
    let max_pairs = n * (n - 1) / 2;
    let target = (edges as u64).min(max_pairs) as usize;
    // Quadrant thresholds on 16-bit draws (probabilities resolved to 2^-16):
    // one 64-bit draw decides four levels.
    let t16 = |p: f64| (p.clamp(0.0, 1.0) * 65_536.0).round() as u32;
    let (ta, tab, tabc) = (t16(a), t16(a + b), t16(a + b + c));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let keys = distinct_keys(target, &mut rng, |rng| {
        let (mut u, mut v) = (0u32, 0u32);
        let mut bits = 0u64;
        for level in 0..scale {
            if level % 4 == 0 {
                bits = rng.next_u64();
            }
            let r = (bits & 0xFFFF) as u32;
            bits >>= 16;
            // Quadrants: [0, a) -> (0, 0), [a, a+b) -> (0, 1),
            // [a+b, a+b+c) -> (1, 0), the rest -> (1, 1); branch-free.
            let du = u32::from(r >= tab);
            let dv = u32::from((r >= ta) & (r < tab)) | u32::from(r >= tabc);
            u = (u << 1) | du;
            v = (v << 1) | dv;
        }
        (u != v).then(|| key(u, v))
    });
    keys.into_iter().map(unkey).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_count_distinct_and_deterministic() {
        let (a, b, c) = RMAT_STANDARD;
        let e = rmat(10, 5000, a, b, c, 1);
        assert_eq!(e.len(), 5000);
        assert!(e.iter().all(|&(u, v)| u < v && v < 1024));
        assert!(e.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(e, rmat(10, 5000, a, b, c, 1));
        assert_ne!(e, rmat(10, 5000, a, b, c, 2));
    }

    #[test]
    fn power_law_skew() {
        let (a, b, c) = RMAT_STANDARD;
        let e = rmat(12, 20_000, a, b, c, 5);
        let mut deg = vec![0u32; 1 << 12];
        for &(u, v) in &e {
            deg[u as usize] += 1;
            deg[v as usize] += 1;
        }
        let max = *deg.iter().max().unwrap();
        assert!(max as f64 > 20.0 * (2.0 * 20_000.0 / 4096.0), "max degree {max}");
    }

    #[test]
    fn saturates_small_graphs() {
        // 8 vertices have 28 pairs: asking for more caps at 28.
        let e = rmat(3, 100, 0.25, 0.25, 0.25, 0);
        assert_eq!(e.len(), 28);
        assert!(rmat(0, 10, 0.25, 0.25, 0.25, 0).is_empty());
    }
}
