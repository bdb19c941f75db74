//! [`Freq`]: a per-vertex accumulator of access counts or estimates, dense
//! (`Vec<f64>`, one slot per vertex) or sparse (hash map of the touched
//! vertices only), and the [`AccessSink`] trait through which the exact
//! counter and the random walks report every list read.
//!
//! Values are `f64` for both exact counts (integers, exact below 2^53) and
//! estimates, so that one type serves the counter, the estimators and the
//! metrics.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use csm_graph::VertexId;

/// Receives one weighted list read: `v`'s list was read at paper level
/// `level` (1 = a root node, i.e. executor depth 2) with weight `weight`
/// (1 for the exact counter, `B · R · D^(level-1)` for the merged walk).
///
/// Implement it to collect other statistics from the same traversals, e.g.
/// per-level counts, or (in tests) deliberately mis-weighted estimators.
pub trait AccessSink {
    fn access(&mut self, v: VertexId, level: usize, weight: f64);
}

/// A multiplicative hasher for vertex ids (ids are already well spread;
/// SipHash would dominate sparse accumulation).
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.0 = (u64::from(x) ^ 0x5555_5555).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Hash map keyed by vertex id with [`IdHasher`].
pub type IdMap<V> = HashMap<VertexId, V, BuildHasherDefault<IdHasher>>;

/// Vertices below this count always get a dense accumulator.
const DENSE_ALWAYS: usize = 1 << 16;

/// Per-vertex values, dense or sparse (see the module docs).
#[derive(Clone, Debug)]
pub enum Freq {
    /// `values[v]` for every vertex slot.
    Dense(Vec<f64>),
    /// Only vertices with a non-zero value.
    Sparse(IdMap<f64>),
}

impl Freq {
    /// A dense accumulator over `num_vertices` slots.
    pub fn dense(num_vertices: usize) -> Freq {
        Freq::Dense(vec![0.0; num_vertices])
    }

    /// An empty sparse accumulator.
    pub fn sparse() -> Freq {
        Freq::Sparse(IdMap::default())
    }

    /// Dense when at least 1/16 of the `num_vertices` slots may be touched
    /// (`expected_touched`) or the graph is small, sparse otherwise:
    /// O(min(|V|, touched)) space either way.
    pub fn for_size(num_vertices: usize, expected_touched: usize) -> Freq {
        if num_vertices <= DENSE_ALWAYS || expected_touched.saturating_mul(16) >= num_vertices {
            Freq::dense(num_vertices)
        } else {
            Freq::sparse()
        }
    }

    pub fn is_dense(&self) -> bool {
        matches!(self, Freq::Dense(_))
    }

    #[inline]
    pub fn add(&mut self, v: VertexId, w: f64) {
        match self {
            Freq::Dense(d) => {
                let i = v as usize;
                if i >= d.len() {
                    d.resize(i + 1, 0.0);
                }
                d[i] += w;
            }
            Freq::Sparse(m) => *m.entry(v).or_insert(0.0) += w,
        }
    }

    /// The value of `v` (0 when never touched).
    #[inline]
    pub fn get(&self, v: VertexId) -> f64 {
        match self {
            Freq::Dense(d) => d.get(v as usize).copied().unwrap_or(0.0),
            Freq::Sparse(m) => m.get(&v).copied().unwrap_or(0.0),
        }
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: Freq) {
        match (self, other) {
            (Freq::Dense(a), Freq::Dense(b)) => {
                if a.len() < b.len() {
                    a.resize(b.len(), 0.0);
                }
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
            }
            (me, other) => other.for_each_nonzero(|v, c| me.add(v, c)),
        }
    }

    /// Multiplies every value by `f`.
    pub fn scale(&mut self, f: f64) {
        match self {
            Freq::Dense(d) => d.iter_mut().for_each(|x| *x *= f),
            Freq::Sparse(m) => m.values_mut().for_each(|x| *x *= f),
        }
    }

    /// Calls `f(v, value)` for every vertex with a non-zero value
    /// (ascending id for dense, arbitrary order for sparse).
    pub fn for_each_nonzero(&self, mut f: impl FnMut(VertexId, f64)) {
        match self {
            Freq::Dense(d) => {
                for (v, &c) in d.iter().enumerate() {
                    if c != 0.0 {
                        f(v as VertexId, c);
                    }
                }
            }
            Freq::Sparse(m) => {
                for (&v, &c) in m {
                    if c != 0.0 {
                        f(v, c);
                    }
                }
            }
        }
    }

    /// Number of vertices with a non-zero value.
    pub fn nonzero_count(&self) -> usize {
        let mut n = 0;
        self.for_each_nonzero(|_, _| n += 1);
        n
    }

    /// Sum of all values.
    pub fn total(&self) -> f64 {
        let mut t = 0.0;
        self.for_each_nonzero(|_, c| t += c);
        t
    }

    /// The non-zero entries, highest value first, ties by ascending id
    /// (a deterministic ranking).
    pub fn ranked(&self) -> Vec<(VertexId, f64)> {
        let mut out = Vec::new();
        self.for_each_nonzero(|v, c| out.push((v, c)));
        out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// A sparse copy (for reporting or comparing).
    pub fn to_map(&self) -> IdMap<f64> {
        let mut m = IdMap::default();
        self.for_each_nonzero(|v, c| {
            m.insert(v, c);
        });
        m
    }
}

impl AccessSink for Freq {
    #[inline]
    fn access(&mut self, v: VertexId, _level: usize, weight: f64) {
        self.add(v, weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_agree() {
        let mut d = Freq::dense(10);
        let mut s = Freq::sparse();
        for (v, w) in [(3, 1.0), (7, 2.5), (3, 4.0), (9, 0.5)] {
            d.add(v, w);
            s.add(v, w);
        }
        assert_eq!(d.ranked(), s.ranked());
        assert_eq!(d.ranked()[0], (3, 5.0));
        assert_eq!(d.nonzero_count(), 3);
        d.merge(s.clone());
        assert_eq!(d.get(3), 10.0);
        s.merge(Freq::Dense(vec![1.0; 2]));
        assert_eq!(s.get(1), 1.0);
        s.scale(2.0);
        assert_eq!(s.get(7), 5.0);
        assert_eq!(s.total(), 2.0 * (5.0 + 2.5 + 0.5 + 2.0));
    }

    #[test]
    fn size_rule() {
        assert!(Freq::for_size(1000, 1).is_dense());
        assert!(!Freq::for_size(1 << 24, 100).is_dense());
        assert!(Freq::for_size(1 << 24, 1 << 21).is_dense());
    }
}
