//! The matching patterns of GENEVA Fig. 1 (as NOTES.md reads the missing
//! figure) and the per-embedding generation algorithms of Sec. 5.1–5.4:
//! DOUEXT (Alg. 4), OPTDOUEXT (Alg. 5) and NEXT (Alg. 6), with the defects
//! NOTES.md lists fixed:
//!
//! * candidates are filtered against the partial embedding *before* any
//!   pattern runs (Alg. 5 never checks `C[i] ∈ emb`; Alg. 3 lines 6–7 plus
//!   this filter are done by the caller, see `phases.rs`);
//! * P2's `C1[k] = C2[j]` check applies to every combination (Alg. 4's first
//!   loop skips it) and combinations read `tmp[k]` (lines 17/20 say `C1[k]`);
//! * OPTDOUEXT writes only the orders the restrictions allow (writing both
//!   `(C[i], C[j])` and `(C[j], C[i])` double-counts when u1, u2 share a
//!   restriction);
//! * NEXT removes `comb2` from the candidate copy when the two label groups
//!   share a label (Alg. 6 never does).
//!
//! Write positions: the GPU reserves output space with `atomicAdd`; on the
//! CPU each worker appends whole rows (embedding + new VIDs) to its own
//! buffer and the buffers are concatenated (the same reservation, done after
//! the fact), so embedding counts and word offsets cannot be mixed up (the
//! paper's write positions do) and invalid combinations are never written
//! and need no zero marker.

use csm_graph::{Label, VertexId};

/// A matching pattern (Fig. 1). Sources are matched query vertices, targets
/// the new ones; all edges of one pattern share one edge label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    /// One source → one target (single-vertex matching).
    P0,
    /// One source → two targets with one label.
    P1,
    /// Two sources → one target each, one label.
    P2,
    /// One source → two targets with different labels.
    P3,
    /// Two sources → one target each, different labels.
    P4,
    /// One source → n ≥ 3 targets with one label (a star).
    P5,
    /// One source → two label groups (≥ 3 targets).
    P6,
    /// Two sources → one group each (≥ 3 targets).
    P7,
}

impl Pattern {
    /// Sec. 5.5: 5 > 6 > 7 > 1 > 3 > 4 > 2 > 0 (smaller is preferred).
    pub fn priority(self) -> u8 {
        match self {
            Pattern::P5 => 0,
            Pattern::P6 => 1,
            Pattern::P7 => 2,
            Pattern::P1 => 3,
            Pattern::P3 => 4,
            Pattern::P4 => 5,
            Pattern::P2 => 6,
            Pattern::P0 => 7,
        }
    }

    /// Patterns allowed inside the query core (Sec. 6): at most two targets.
    pub fn core_allowed(self) -> bool {
        self <= Pattern::P4
    }

    /// Patterns that may open the search (one source).
    pub fn may_open(self) -> bool {
        matches!(self, Pattern::P0 | Pattern::P1 | Pattern::P3)
    }

    /// Classifies a phase's groups (see [`Group`]).
    pub fn classify(groups: &[Group]) -> Pattern {
        let total: usize = groups.iter().map(|g| g.targets.len()).sum();
        match groups {
            [g] if g.targets.len() == 1 => Pattern::P0,
            [g] if g.targets.len() == 2 => Pattern::P1,
            [_] => Pattern::P5,
            [a, b] => {
                let one_source = a.source == b.source;
                match (total, one_source) {
                    (2, true) => Pattern::P3,
                    (2, false) if a.label == b.label => Pattern::P2,
                    (2, false) => Pattern::P4,
                    (_, true) => Pattern::P6,
                    (_, false) => Pattern::P7,
                }
            }
            _ => panic!("a phase has one or two groups"),
        }
    }
}

/// Targets reached from one source through one vertex label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub source: usize,
    pub label: Label,
    pub targets: Vec<usize>,
}

/// What the generation algorithms need per partial embedding: filtered
/// candidates per group and, per target (phase order: the first group's
/// targets, then the second's), its group, its VID bounds `[lo, hi)` from
/// restrictions against matched vertices, the targets it must differ from
/// (same label) and the restrictions among targets (`new[i] < new[j]`).
pub struct Gen<'a> {
    pub cands: [&'a [VertexId]; 2],
    pub group: &'a [usize],
    pub lo: &'a [VertexId],
    pub hi: &'a [VertexId],
    pub same_label: &'a [u32],
    pub pairs: &'a [(usize, usize)],
}

impl Gen<'_> {
    #[inline]
    fn in_bounds(&self, t: usize, c: VertexId) -> bool {
        self.lo[t] <= c && c < self.hi[t]
    }

    /// Whether target `t` may take `c` given the targets in `set` (bit mask)
    /// already hold `vals`.
    #[inline]
    fn ok(&self, t: usize, c: VertexId, vals: &[VertexId], set: u32) -> bool {
        if !self.in_bounds(t, c) {
            return false;
        }
        let mut m = self.same_label[t] & set;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            if vals[j] == c {
                return false;
            }
            m &= m - 1;
        }
        self.pairs.iter().all(|&(i, j)| {
            if i == t && set >> j & 1 == 1 {
                c < vals[j]
            } else if j == t && set >> i & 1 == 1 {
                vals[i] < c
            } else {
                true
            }
        })
    }

    /// P0: the plain single-vertex extension.
    pub fn single(&self, emit: &mut impl FnMut(&[VertexId])) {
        for &c in self.cands[self.group[0]] {
            if self.in_bounds(0, c) {
                emit(&[c]);
            }
        }
    }

    /// OPTDOUEXT (Alg. 5) for targets `a`, `b` of one group: every pair
    /// `i < j` of `C` is generated once and written in each order the
    /// bounds and restrictions allow. `vals`/`set` carry targets fixed by an
    /// enclosing NEXT, whose values are skipped (the `C / comb` copy).
    /// `flags` is scratch: per candidate, whether it fits `a` (bit 0) and
    /// `b` (bit 1) given the fixed targets, so the pair loop only checks the
    /// restriction between `a` and `b` (C is sorted, so `C[i] < C[j]`).
    pub fn opt_dou_ext(
        &self,
        a: usize,
        b: usize,
        vals: &mut [VertexId],
        set: u32,
        flags: &mut Vec<u8>,
        emit: &mut impl FnMut(&[VertexId]),
    ) {
        let c = self.cands[self.group[a]];
        flags.clear();
        flags.extend(
            c.iter()
                .map(|&x| self.ok(a, x, vals, set) as u8 | (self.ok(b, x, vals, set) as u8) << 1),
        );
        let a_lt_b = self.pairs.contains(&(a, b));
        let b_lt_a = self.pairs.contains(&(b, a));
        for i in 0..c.len() {
            let (x, fx) = (c[i], flags[i]); // the paper keeps C[i] in a register
            if fx == 0 {
                continue;
            }
            for j in i + 1..c.len() {
                let (y, fy) = (c[j], flags[j]);
                // (C[i], C[j]) and (C[j], C[i]) from the same loads
                if fx & 1 != 0 && fy & 2 != 0 && !b_lt_a {
                    vals[a] = x;
                    vals[b] = y;
                    emit(vals);
                }
                if fx & 2 != 0 && fy & 1 != 0 && !a_lt_b {
                    vals[a] = y;
                    vals[b] = x;
                    emit(vals);
                }
            }
        }
    }

    /// DOUEXT (Alg. 4) for P2–P4: every combination of `C1 × C2`; for P2
    /// (one label) equal candidates are skipped. `flags` is scratch (C2's
    /// bound checks, done once).
    pub fn dou_ext(&self, flags: &mut Vec<u8>, emit: &mut impl FnMut(&[VertexId])) {
        let (c1, c2) = (self.cands[self.group[0]], self.cands[self.group[1]]);
        flags.clear();
        flags.extend(c2.iter().map(|&y| self.in_bounds(1, y) as u8));
        let same = self.same_label[1] & 1 != 0;
        let lt01 = self.pairs.contains(&(0, 1));
        let lt10 = self.pairs.contains(&(1, 0));
        let mut vals = [0 as VertexId; 2];
        for &x in c1 {
            if !self.in_bounds(0, x) {
                continue;
            }
            vals[0] = x;
            for (&y, &fy) in c2.iter().zip(flags.iter()) {
                if fy == 0 || (same && x == y) || (lt01 && x >= y) || (lt10 && y >= x) {
                    continue;
                }
                vals[1] = y;
                emit(&vals);
            }
        }
    }

    /// NEXT (Alg. 6) for P5–P7: `n` targets in the first group (n ≥ 2), the
    /// rest in the second. Every combination of the second group's targets
    /// (comb2) and of the first group's first n − 2 (comb1) is enumerated,
    /// then OPTDOUEXT matches the last two from the remaining candidates.
    pub fn n_ext(&self, n: usize, total: usize, flags: &mut Vec<u8>, emit: &mut impl FnMut(&[VertexId])) {
        let mut outer: Vec<usize> = (n..total).collect();
        outer.extend(0..n - 2);
        let mut vals = vec![0 as VertexId; total];
        self.n_ext_rec(&outer, 0, n, &mut vals, flags, emit);
    }

    /// Binds `outer[k..]` given `outer[..k]`, then runs OPTDOUEXT.
    fn n_ext_rec(
        &self,
        outer: &[usize],
        k: usize,
        n: usize,
        vals: &mut [VertexId],
        flags: &mut Vec<u8>,
        emit: &mut impl FnMut(&[VertexId]),
    ) {
        let set = outer[..k].iter().fold(0u32, |m, &t| m | 1 << t);
        if k == outer.len() {
            self.opt_dou_ext(n - 2, n - 1, vals, set, flags, emit);
            return;
        }
        let t = outer[k];
        for &c in self.cands[self.group[t]] {
            if self.ok(t, c, vals, set) {
                vals[t] = c;
                self.n_ext_rec(outer, k + 1, n, vals, flags, emit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(source: usize, label: Label, targets: &[usize]) -> Group {
        Group {
            source,
            label,
            targets: targets.to_vec(),
        }
    }

    #[test]
    fn classification() {
        assert_eq!(Pattern::classify(&[g(0, 1, &[1])]), Pattern::P0);
        assert_eq!(Pattern::classify(&[g(0, 1, &[1, 2])]), Pattern::P1);
        assert_eq!(Pattern::classify(&[g(0, 1, &[1]), g(3, 1, &[2])]), Pattern::P2);
        assert_eq!(Pattern::classify(&[g(0, 1, &[1]), g(0, 2, &[2])]), Pattern::P3);
        assert_eq!(Pattern::classify(&[g(0, 1, &[1]), g(3, 2, &[2])]), Pattern::P4);
        assert_eq!(Pattern::classify(&[g(0, 1, &[1, 2, 3])]), Pattern::P5);
        assert_eq!(Pattern::classify(&[g(0, 1, &[1, 2]), g(0, 2, &[3])]), Pattern::P6);
        assert_eq!(Pattern::classify(&[g(0, 1, &[1, 2]), g(4, 2, &[3])]), Pattern::P7);
    }

    /// Brute force over all injective assignments, for comparison.
    fn brute(gen: &Gen, total: usize) -> Vec<Vec<VertexId>> {
        let mut out = Vec::new();
        let mut vals = vec![0; total];
        fn rec(gen: &Gen, t: usize, total: usize, vals: &mut Vec<VertexId>, out: &mut Vec<Vec<VertexId>>) {
            if t == total {
                out.push(vals.clone());
                return;
            }
            for &c in gen.cands[gen.group[t]] {
                if gen.ok(t, c, vals, (1u32 << t) - 1) {
                    vals[t] = c;
                    rec(gen, t + 1, total, vals, out);
                }
            }
        }
        rec(gen, 0, total, &mut vals, &mut out);
        out.sort();
        out
    }

    #[test]
    fn algorithms_equal_brute_force() {
        let c1: Vec<VertexId> = vec![1, 3, 4, 7, 9];
        let c2: Vec<VertexId> = vec![2, 3, 7, 8];
        let hi = [u32::MAX; 4];
        for pairs in [vec![], vec![(0, 1)], vec![(1, 0)], vec![(0, 1), (1, 2)]] {
            for lo in [[0, 0, 0, 0], [3, 0, 4, 0]] {
                type Driver<'a> = &'a dyn Fn(&mut dyn FnMut(&[VertexId]));
                let collect = |f: Driver| {
                    let mut v = Vec::new();
                    f(&mut |x: &[VertexId]| v.push(x.to_vec()));
                    v.sort();
                    v
                };
                // P1: one group, same label
                let gen = Gen {
                    cands: [&c1, &c1],
                    group: &[0, 0],
                    lo: &lo,
                    hi: &hi,
                    same_label: &[2, 1],
                    pairs: &pairs[..pairs.len().min(1)],
                };
                let got = collect(&|e| {
                    let mut vals = [0; 2];
                    gen.opt_dou_ext(0, 1, &mut vals, 0, &mut Vec::new(), &mut |x| e(x))
                });
                assert_eq!(got, brute(&gen, 2));
                // P2: two groups sharing a label
                let gen = Gen {
                    cands: [&c1, &c2],
                    group: &[0, 1],
                    lo: &lo,
                    hi: &hi,
                    same_label: &[2, 1],
                    pairs: &pairs[..pairs.len().min(1)],
                };
                let got = collect(&|e| gen.dou_ext(&mut Vec::new(), &mut |x| e(x)));
                assert_eq!(got, brute(&gen, 2));
                // P5 / P7: three targets
                for (group, same) in [
                    ([0usize, 0, 0], [6u32, 5, 3]),
                    ([0, 0, 1], [6, 5, 3]),
                    ([0, 0, 1], [2, 1, 0]),
                ] {
                    let gen = Gen {
                        cands: [&c1, &c2],
                        group: &group,
                        lo: &lo,
                        hi: &hi,
                        same_label: &same,
                        pairs: &pairs,
                    };
                    let n = group.iter().filter(|&&x| x == 0).count();
                    let got = collect(&|e| gen.n_ext(n, 3, &mut Vec::new(), &mut |x| e(x)));
                    assert_eq!(got, brute(&gen, 3), "{group:?} {pairs:?}");
                }
            }
        }
    }
}
