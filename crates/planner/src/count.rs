//! Embedding counts past 64 bits.
//!
//! Counting without listing (products of independent parts, candidate-set
//! sizes, an independent tail's pairs) reaches numbers no listing could:
//! a star of 16 leaves of distinct labels on a dense 2,000-vertex graph
//! has about 10^22 embeddings, counted in milliseconds. Plain `u64`
//! arithmetic wrapped there and printed a wrong count.
//!
//! Counts therefore *saturate*: [`SATURATED`] (`u64::MAX`) stands for
//! "2^64 − 1 or more", and every operation with a saturated operand gives
//! [`SATURATED`] again (also a difference, whose true value is unknown), so
//! a saturated part never turns into a wrong finite total. Callers report a
//! saturated count as an overflow, never as a number.

/// The saturated count: 2^64 − 1 embeddings or more.
pub const SATURATED: u64 = u64::MAX;

/// Whether `n` is [`SATURATED`].
#[inline]
pub fn saturated(n: u64) -> bool {
    n == SATURATED
}

/// `a + b`, saturating.
#[inline]
pub fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

/// `a · b`, saturating (0 when either is 0: exact whatever the other).
#[inline]
pub fn mul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// `a − b` where `b ≤ a` is known to hold of the true counts: [`SATURATED`]
/// when either is saturated (the true difference is unknown).
#[inline]
pub fn sub(a: u64, b: u64) -> u64 {
    if saturated(a) || saturated(b) {
        SATURATED
    } else {
        a - b
    }
}

/// A count held in 128 bits, as a count: [`SATURATED`] from 2^64 − 1 on.
#[inline]
pub fn from_wide(n: u128) -> u64 {
    u64::try_from(n).unwrap_or(SATURATED)
}

/// n·(n − 1)···(n − k + 1), the injective k-tuples of an n-set, in 128
/// bits, saturating (0 when k > n).
#[inline]
pub fn falling(n: u128, k: u128) -> u128 {
    (0..k).fold(1u128, |p, i| p.saturating_mul(n.saturating_sub(i)))
}

/// The injective tuples of `a` values from a set A of `na` elements
/// followed by `b` values from a set B of `nb`, where |A ∩ B| = `c`: by
/// how many (j) of the A-values lie in A ∩ B,
/// Σ_j C(a, j)·P(c, j)·P(na − c, a − j)·P(nb − j, b) (P(n, k) the falling
/// factorial), saturating (a sum of non-negative terms: a saturated sum
/// is 2^128 − 1 or more). Two classes of twins in a wide tail: a delta
/// plan's same-label leaves that read a center's old list and its new one.
pub fn two_classes(na: u128, a: usize, nb: u128, b: usize, c: u128) -> u128 {
    let mut total = 0u128;
    let mut choose = 1u128; // C(a, j)
    for j in 0..=a {
        if j > 0 {
            choose = choose * (a - j + 1) as u128 / j as u128;
        }
        let term = choose
            .saturating_mul(falling(c, j as u128))
            .saturating_mul(falling(na.saturating_sub(c), (a - j) as u128))
            .saturating_mul(falling(nb.saturating_sub(j as u128), b as u128));
        total = total.saturating_add(term);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `two_classes` against listing the tuples, on every pair of subsets
    /// of a 7-set drawn at random, up to three values from each.
    #[test]
    fn two_classes_equal_listing() {
        fn list(sa: &[u32], a: usize, sb: &[u32], b: usize, used: &mut Vec<u32>) -> u128 {
            if used.len() == a + b {
                return 1;
            }
            let from = if used.len() < a { sa } else { sb };
            let mut n = 0;
            for &x in from {
                if !used.contains(&x) {
                    used.push(x);
                    n += list(sa, a, sb, b, used);
                    used.pop();
                }
            }
            n
        }
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for _ in 0..400 {
            let (ma, mb) = (next() & 127, next() & 127);
            let sa: Vec<u32> = (0..7).filter(|i| ma >> i & 1 == 1).collect();
            let sb: Vec<u32> = (0..7).filter(|i| mb >> i & 1 == 1).collect();
            let (a, b) = (next() as usize % 4, next() as usize % 4);
            let c = sa.iter().filter(|x| sb.contains(x)).count() as u128;
            let want = list(&sa, a, &sb, b, &mut Vec::new());
            let got = two_classes(sa.len() as u128, a, sb.len() as u128, b, c);
            assert_eq!(got, want, "A {sa:?} x{a}, B {sb:?} x{b}");
        }
        assert_eq!(falling(5, 3), 60);
        assert_eq!(falling(2, 3), 0);
        assert_eq!(two_classes(u128::MAX, 4, 9, 1, 3), u128::MAX);
    }

    #[test]
    fn a_saturated_operand_stays_saturated() {
        assert_eq!(add(SATURATED - 1, 2), SATURATED);
        assert_eq!(mul(1 << 40, 1 << 30), SATURATED);
        assert_eq!(mul(SATURATED, 0), 0);
        assert_eq!(sub(SATURATED, 5), SATURATED);
        assert_eq!(sub(10, 4), 6);
        assert_eq!(from_wide(1 << 70), SATURATED);
        assert_eq!(from_wide(u128::from(SATURATED) - 1), SATURATED - 1);
    }
}
