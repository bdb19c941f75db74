//! [`DegreeCounts`]: how many vertices have each committed list length, so
//! that the maximum degree stays exact at O(1) amortised cost per change.
//!
//! A single-edge change moves one list's length by one, so the maximum moves
//! by at most one, and only when the last vertex at the maximum shrinks.
//! Recomputing it by a scan of every vertex's length instead costs O(n) each
//! time the largest hub loses an edge, which on a graph of millions of
//! vertices dwarfs the update itself.

/// Vertices per committed degree (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct DegreeCounts {
    /// `counts[d]`: vertices whose committed list has `d` entries.
    counts: Vec<u32>,
    max: usize,
}

impl DegreeCounts {
    pub(crate) fn from_degrees(degrees: impl IntoIterator<Item = usize>) -> Self {
        let mut c = DegreeCounts::default();
        for d in degrees {
            c.add(d);
        }
        c
    }

    /// The largest degree of a counted vertex (0 with none).
    #[inline]
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Counts one more vertex of degree `d`.
    #[inline]
    pub(crate) fn add(&mut self, d: usize) {
        if self.counts.len() <= d {
            self.counts.resize(d + 1, 0);
        }
        self.counts[d] += 1;
        self.max = self.max.max(d);
    }

    /// Counts one vertex of degree `d` less (it must be counted).
    #[inline]
    pub(crate) fn remove(&mut self, d: usize) {
        debug_assert!(self.counts[d] > 0, "no vertex of degree {d} to remove");
        self.counts[d] -= 1;
        while self.max > 0 && self.counts[self.max] == 0 {
            self.max -= 1;
        }
    }

    /// One vertex's degree goes from `from` to `to`.
    #[inline]
    pub(crate) fn change(&mut self, from: usize, to: usize) {
        if from != to {
            self.add(to);
            self.remove(from);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maximum_follows_every_change() {
        let mut c = DegreeCounts::from_degrees([3, 5, 5, 0]);
        assert_eq!(c.max(), 5);
        c.change(5, 4);
        assert_eq!(c.max(), 5, "another vertex still has 5");
        c.change(5, 4);
        assert_eq!(c.max(), 4);
        c.change(4, 2);
        c.change(4, 1);
        assert_eq!(c.max(), 3);
        c.change(3, 9);
        assert_eq!(c.max(), 9);
        c.remove(9);
        assert_eq!(c.max(), 2);
        c.add(0);
        c.remove(2);
        c.remove(1);
        assert_eq!(c.max(), 0);
    }
}
