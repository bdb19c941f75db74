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

#[cfg(test)]
mod tests {
    use super::*;

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
