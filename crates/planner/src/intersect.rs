//! Sorted-set intersection over [`Nbrs`] windows: a merge for lists of
//! similar length, galloping for skewed ones, and a generic cursor path for
//! lists with marks, appended parts or edge labels. Nothing here allocates
//! beyond the caller's reusable output buffer.

use csm_graph::{Label, Nbrs, VertexId};

const MASK: u32 = !csm_graph::view::MARK;
/// Size ratio above which galloping beats merging.
const GALLOP_RATIO: usize = 24;

/// A list to intersect and the edge label its entries must carry.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    pub list: Nbrs<'a>,
    pub elabel: Option<Label>,
}

impl Operand<'_> {
    #[inline]
    fn plain(&self) -> bool {
        self.elabel.is_none() && self.list.is_plain()
    }
    /// Whether `x` is in the list with the right edge label.
    #[inline]
    pub fn contains(&self, x: VertexId) -> bool {
        match self.list.find(x) {
            Some(l) => self.elabel.is_none_or(|e| e == l),
            None => false,
        }
    }
}

/// First index `>= lo` whose (unmarked) value is `>= x`.
#[inline]
fn gallop(s: &[u32], lo: usize, x: u32) -> usize {
    let n = s.len();
    if lo >= n || s[lo] & MASK >= x {
        return lo;
    }
    let mut prev = lo;
    let mut step = 1;
    let mut hi = lo + 1;
    while hi < n && s[hi] & MASK < x {
        prev = hi;
        hi += step;
        step <<= 1;
    }
    let hi = hi.min(n);
    // invariant: s[prev] < x, answer in (prev, hi]
    let mut a = prev + 1;
    let mut b = hi;
    while a < b {
        let m = (a + b) / 2;
        if s[m] & MASK < x {
            a = m + 1;
        } else {
            b = m;
        }
    }
    a
}

/// Forward-only membership probe into one operand.
struct Cursor<'a> {
    op: Operand<'a>,
    i: usize,
    j: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn seek(&mut self, x: u32) -> bool {
        let l = &self.op.list;
        self.i = gallop(l.base, self.i, x);
        if let Some(&e) = l.base.get(self.i) {
            if e & MASK == x
                && !(l.skip_marked && e & !MASK != 0)
                && self.op.elabel.is_none_or(|w| w == l.base_label(self.i))
            {
                return true;
            }
        }
        if !l.delta.is_empty() {
            self.j = gallop(l.delta, self.j, x);
            if let Some(&e) = l.delta.get(self.j) {
                return e == x && self.op.elabel.is_none_or(|w| w == l.delta_label(self.j));
            }
        }
        false
    }
}

/// Appends a ∩ b to `out` by merging; AVX2 blocks of 8 where the CPU has
/// them, then [`merge_into_scalar`] for the rest.
#[inline]
fn merge_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if a.len() >= 8 && b.len() >= 8 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        let (i, j) = unsafe { simd::merge_into_avx2(a, b, out) };
        return merge_into_scalar(&a[i..], &b[j..], out);
    }
    merge_into_scalar(a, b, out)
}

#[inline]
fn merge_into_scalar(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    // branch-free: every step stores its candidate and keeps it only on a
    // match, into room reserved up front
    let start = out.len();
    out.reserve(a.len().min(b.len()));
    let spare = &mut out.spare_capacity_mut()[..a.len().min(b.len())];
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        // k counts matches so far, each of which consumed an entry of both
        // lists, so k < min(len) while both have entries left
        spare[k].write(x);
        k += (x == y) as usize;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    // SAFETY: the first k entries of the spare capacity were written above
    unsafe { out.set_len(start + k) };
}

/// |a ∩ b| by merging; AVX2 blocks of 8 where the CPU has them.
#[inline]
fn merge_count(a: &[u32], b: &[u32]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if a.len() >= 8 && b.len() >= 8 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { simd::merge_count_avx2(a, b) };
    }
    merge_count_scalar(a, b)
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    /// One step of the block merge at `a[i..]`, `b[j..]`: all-pairs
    /// comparison of the two blocks of 8 lanes, then the block with the
    /// smaller maximum advances (both on a tie). Returns `a`'s block, the
    /// mask of its lanes found in `b`'s block, and the next `(i, j)`.
    ///
    /// # Safety
    /// The CPU has AVX2, `i + 8 <= a.len()` and `j + 8 <= b.len()`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn block_step(a: &[u32], b: &[u32], i: usize, j: usize) -> (__m256i, u32, usize, usize) {
        let rot = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
        // SAFETY: the caller keeps both blocks in bounds; unaligned loads.
        let va = unsafe { _mm256_loadu_si256(a.as_ptr().add(i) as *const __m256i) };
        let mut vb = unsafe { _mm256_loadu_si256(b.as_ptr().add(j) as *const __m256i) };
        let mut m = _mm256_cmpeq_epi32(va, vb);
        for _ in 0..7 {
            vb = _mm256_permutevar8x32_epi32(vb, rot);
            m = _mm256_or_si256(m, _mm256_cmpeq_epi32(va, vb));
        }
        let mask = _mm256_movemask_ps(_mm256_castsi256_ps(m)) as u32;
        let (amax, bmax) = (a[i + 7], b[j + 7]);
        let i = i + if amax <= bmax { 8 } else { 0 };
        let j = j + if bmax <= amax { 8 } else { 0 };
        (va, mask, i, j)
    }

    /// Block merge ([`block_step`]). Each pair of blocks meets at most once
    /// and lists hold distinct values, so every common value counts once.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn merge_count_avx2(a: &[u32], b: &[u32]) -> u64 {
        let (mut i, mut j, mut c) = (0usize, 0usize, 0u64);
        while i + 8 <= a.len() && j + 8 <= b.len() {
            // SAFETY: AVX2 (this function's feature); blocks in bounds.
            let (_, mask, ni, nj) = unsafe { block_step(a, b, i, j) };
            c += mask.count_ones() as u64;
            (i, j) = (ni, nj);
        }
        c + super::merge_count_scalar(&a[i..], &b[j..])
    }

    /// Per 8-bit match mask, the lane indices of its set bits in order
    /// (padded with 0): the permutation that packs an 8-lane block's
    /// matches to its front.
    static COMPRESS: [[u32; 8]; 256] = {
        let mut t = [[0u32; 8]; 256];
        let mut mask = 0;
        while mask < 256 {
            let (mut lane, mut k) = (0, 0);
            while lane < 8 {
                if mask >> lane & 1 == 1 {
                    t[mask][k] = lane as u32;
                    k += 1;
                }
                lane += 1;
            }
            mask += 1;
        }
        t
    };

    /// The block merge ([`block_step`]) appending the matches to `out`:
    /// each block of `a` is compared with a block of `b`, its matching
    /// lanes packed by [`COMPRESS`] and stored whole (8 lanes) at the end of
    /// the output, which then grows by the number of matches. Blocks are
    /// visited in ascending order and each pair meets at most once, so the
    /// output is sorted and holds each common value once. Returns where in
    /// `a` and `b` the caller's scalar merge continues.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn merge_into_avx2(a: &[u32], b: &[u32], out: &mut Vec<u32>) -> (usize, usize) {
        let (mut i, mut j, mut k) = (0usize, 0usize, 0usize);
        let start = out.len();
        // at most min(len) matches, and the last store writes 8 lanes
        out.reserve(a.len().min(b.len()) + 8);
        let dst = out.spare_capacity_mut().as_mut_ptr() as *mut u32;
        while i + 8 <= a.len() && j + 8 <= b.len() {
            // SAFETY: AVX2 (this function's feature); blocks in bounds.
            let (va, mask, ni, nj) = unsafe { block_step(a, b, i, j) };
            // SAFETY: COMPRESS[mask] is 8 u32s; the store is within the
            // reserved room (k matches so far, k + 8 <= min(len) + 8).
            unsafe {
                let perm = _mm256_loadu_si256(COMPRESS[mask as usize].as_ptr() as *const __m256i);
                _mm256_storeu_si256(dst.add(k) as *mut __m256i, _mm256_permutevar8x32_epi32(va, perm));
            }
            k += mask.count_ones() as usize;
            (i, j) = (ni, nj);
        }
        // SAFETY: the first k entries of the spare capacity were written
        // (each store wrote 8 lanes starting at the matches so far)
        unsafe { out.set_len(start + k) };
        (i, j)
    }
}

#[inline]
fn merge_count_scalar(a: &[u32], b: &[u32]) -> u64 {
    let (mut i, mut j, mut c) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        c += (x == y) as u64;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    c
}

#[inline]
fn gallop_into(small: &[u32], large: &[u32], out: &mut Vec<u32>) {
    let mut p = 0;
    for &x in small {
        p = gallop(large, p, x);
        if p == large.len() {
            break;
        }
        if large[p] == x {
            out.push(x);
        }
    }
}

#[inline]
fn gallop_count(small: &[u32], large: &[u32]) -> u64 {
    let (mut p, mut c) = (0, 0u64);
    for &x in small {
        p = gallop(large, p, x);
        if p == large.len() {
            break;
        }
        c += (large[p] == x) as u64;
    }
    c
}

/// Keeps the entries of `out` that `op` contains (plain `op`).
#[inline]
fn filter_plain(out: &mut Vec<u32>, s: &[u32]) {
    narrow(out, s, |_| true);
}

/// Keeps the entries of `out` found in `s` at an index `j` with `keep(j)`:
/// galloping through `s` when it is much longer, else merging.
#[inline]
fn narrow(out: &mut Vec<u32>, s: &[u32], keep: impl Fn(usize) -> bool) {
    if s.len() > GALLOP_RATIO * out.len() {
        let mut p = 0;
        out.retain(|&x| {
            p = gallop(s, p, x);
            p < s.len() && s[p] == x && keep(p)
        });
        return;
    }
    narrow_by_merge(out, s, keep);
}

/// Keeps the entries of `out` found in `s` at an index `j` with `keep(j)`,
/// by a branch-free merge that compacts `out` in place (k ≤ i throughout).
#[inline]
fn narrow_by_merge(out: &mut Vec<u32>, s: &[u32], keep: impl Fn(usize) -> bool) {
    let (mut i, mut j, mut k) = (0, 0, 0);
    let n = out.len();
    while i < n && j < s.len() {
        let (x, y) = (out[i], s[j]);
        out[k] = x;
        k += (x == y && keep(j)) as usize;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    out.truncate(k);
}

/// Appends the entries of `ids` whose edge label is `w` (a list without
/// labels has label 0 throughout).
fn keep_labelled(ids: &[u32], labels: &[Label], w: Label, out: &mut Vec<u32>) {
    if labels.is_empty() {
        if w == 0 {
            out.extend_from_slice(ids);
        }
        return;
    }
    out.extend(ids.iter().zip(labels).filter(|&(_, &l)| l == w).map(|(&x, _)| x));
}

/// Keeps the entries of `out` found in `s` with edge label `w`.
fn filter_labelled(out: &mut Vec<u32>, s: &[u32], labels: &[Label], w: Label) {
    if labels.is_empty() {
        if w == 0 {
            filter_plain(out, s);
        } else {
            out.clear();
        }
        return;
    }
    narrow(out, s, |j| labels[j] == w);
}

/// Writes the sorted intersection of `ops` into `out` (cleared first).
/// Reorders `ops` (smallest first).
pub fn intersect_into(ops: &mut [Operand<'_>], out: &mut Vec<u32>) {
    out.clear();
    if ops.is_empty() {
        return;
    }
    ops.sort_unstable_by_key(|o| o.list.len());
    let first = ops[0];
    if first.list.is_empty() {
        return;
    }
    if ops.iter().all(Operand::plain) {
        let a = first.list.base;
        if ops.len() == 1 {
            out.extend_from_slice(a);
            return;
        }
        let b = ops[1].list.base;
        out.reserve(a.len());
        if b.len() > GALLOP_RATIO * a.len() {
            gallop_into(a, b, out);
        } else {
            merge_into(a, b, out);
        }
        for o in &ops[2..] {
            if out.is_empty() {
                return;
            }
            filter_plain(out, o.list.base);
        }
        return;
    }
    if ops.iter().all(|o| o.list.is_plain()) {
        // clean lists, some with an edge label to match: the smallest
        // filtered by label, then narrowed by each other list in turn (the
        // generic cursors below cost several times as much per entry)
        match first.elabel {
            None => out.extend_from_slice(first.list.base),
            Some(w) => keep_labelled(first.list.base, first.list.base_labels, w, out),
        }
        for o in &ops[1..] {
            if out.is_empty() {
                return;
            }
            match o.elabel {
                None => filter_plain(out, o.list.base),
                Some(w) => filter_labelled(out, o.list.base, o.list.base_labels, w),
            }
        }
        return;
    }
    let mut cursors: [Option<Cursor<'_>>; 32] = [const { None }; 32];
    for (k, o) in ops[1..].iter().enumerate() {
        cursors[k] = Some(Cursor { op: *o, i: 0, j: 0 });
    }
    let rest = &mut cursors[..ops.len() - 1];
    for (x, l) in first.list.iter() {
        if first.elabel.is_some_and(|w| w != l) {
            continue;
        }
        if rest.iter_mut().all(|c| c.as_mut().expect("filled").seek(x)) {
            out.push(x);
        }
    }
}

/// a ∩ b of two sorted plain slices into `out` (appended; merge or
/// galloping by their sizes).
pub fn sorted_intersection_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if b.len() > GALLOP_RATIO * a.len() {
        gallop_into(a, b, out);
    } else {
        merge_into(a, b, out);
    }
}

/// |a ∩ b| of two sorted plain slices (merge or galloping by their sizes).
pub fn sorted_overlap(a: &[u32], b: &[u32]) -> u64 {
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if b.len() > GALLOP_RATIO * a.len() {
        gallop_count(a, b)
    } else {
        merge_count(a, b)
    }
}

/// Size of the intersection of `ops`; `tmp` is scratch space.
pub fn intersect_len(ops: &mut [Operand<'_>], tmp: &mut Vec<u32>) -> u64 {
    match ops {
        [] => 0,
        [o] if o.elabel.is_none() => o.list.len() as u64,
        [a, b] if a.plain() && b.plain() => sorted_overlap(a.list.base, b.list.base),
        _ => {
            intersect_into(ops, tmp);
            tmp.len() as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csm_graph::view::MARK;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn sorted(v: Vec<u32>) -> Vec<u32> {
        v.into_iter().collect::<BTreeSet<_>>().into_iter().collect()
    }

    proptest! {
        #[test]
        fn plain_intersections_match_sets(lists in prop::collection::vec(prop::collection::vec(0u32..200, 0..120), 1..5)) {
            let lists: Vec<Vec<u32>> = lists.into_iter().map(sorted).collect();
            let mut ops: Vec<Operand> = lists.iter().map(|l| Operand { list: Nbrs::plain(l, &[]), elabel: None }).collect();
            let mut out = Vec::new();
            intersect_into(&mut ops, &mut out);
            let mut expect: BTreeSet<u32> = lists[0].iter().copied().collect();
            for l in &lists[1..] { expect = expect.intersection(&l.iter().copied().collect()).copied().collect(); }
            prop_assert_eq!(&out, &expect.iter().copied().collect::<Vec<_>>());
            let mut tmp = Vec::new();
            prop_assert_eq!(intersect_len(&mut ops, &mut tmp), expect.len() as u64);
        }

        /// Long lists take the AVX2 block merge (on CPUs that have it)
        /// over many blocks, then the scalar tail; sparse and dense overlaps.
        #[test]
        fn long_two_list_merges_match_sets(a in prop::collection::vec(0u32..3000, 0..700),
                                           b in prop::collection::vec(0u32..3000, 0..700),
                                           prefix in prop::collection::vec(0u32..5, 0..3)) {
            let (a, b) = (sorted(a), sorted(b));
            let expect: Vec<u32> = a.iter().copied().filter(|x| b.binary_search(x).is_ok()).collect();
            // appends after what `out` holds
            let mut out = prefix.clone();
            merge_into(&a, &b, &mut out);
            prop_assert_eq!(&out[..prefix.len()], &prefix[..]);
            prop_assert_eq!(&out[prefix.len()..], &expect[..]);
            prop_assert_eq!(merge_count(&a, &b), expect.len() as u64);
        }

        #[test]
        fn split_lists_follow_their_version(base in prop::collection::vec((0u32..300, any::<bool>()), 0..80),
                                            delta in prop::collection::vec(300u32..400, 0..20),
                                            other in prop::collection::vec(0u32..400, 0..150),
                                            skip in any::<bool>()) {
            let mut base: Vec<(u32, bool)> = base; base.sort(); base.dedup_by_key(|p| p.0);
            let raw: Vec<u32> = base.iter().map(|&(x, m)| if m { x | MARK } else { x }).collect();
            let delta = sorted(delta);
            let other = sorted(other);
            let marked = base.iter().filter(|p| p.1).count() as u32;
            let list = Nbrs { base: &raw, base_labels: &[], delta: if skip { &delta } else { &[] }, delta_labels: &[], skip_marked: skip, marked };
            let members: BTreeSet<u32> = base.iter().filter(|p| !(skip && p.1)).map(|p| p.0)
                .chain(if skip { delta.clone() } else { vec![] }).collect();
            prop_assert_eq!(list.len(), members.len());
            let mut ops = vec![Operand { list, elabel: None }, Operand { list: Nbrs::plain(&other, &[]), elabel: None }];
            let mut out = Vec::new();
            intersect_into(&mut ops, &mut out);
            let expect: Vec<u32> = members.intersection(&other.iter().copied().collect()).copied().collect();
            prop_assert_eq!(out, expect);
        }
    }

    proptest! {
        /// Lists with edge labels (some operands asking for a label, some
        /// lists without labels, read as label 0), clean or with an
        /// appended part (the generic path), against sets of (id, label).
        #[test]
        fn labelled_intersections_match_sets(
            lists in prop::collection::vec(prop::collection::vec((0u32..120, 0u32..3), 0..80), 1..5),
            wants in prop::collection::vec(prop::option::of(0u32..3), 5),
            unlabelled in prop::collection::vec(any::<bool>(), 5),
            split in any::<bool>(),
        ) {
            let lists: Vec<Vec<(u32, u32)>> = lists.into_iter().map(|mut l| {
                l.sort_unstable_by_key(|p| p.0);
                l.dedup_by_key(|p| p.0);
                l
            }).collect();
            let ids: Vec<Vec<u32>> = lists.iter().map(|l| l.iter().map(|p| p.0).collect()).collect();
            let labels: Vec<Vec<u32>> = lists.iter().enumerate()
                .map(|(k, l)| if unlabelled[k] { vec![] } else { l.iter().map(|p| p.1).collect() })
                .collect();
            let label_of = |k: usize, i: usize| labels[k].get(i).copied().unwrap_or(0);
            // the first list split into a clean part and an appended part
            let cut = ids[0].len() / 2;
            let mut ops: Vec<Operand> = (0..lists.len()).map(|k| Operand {
                list: if k == 0 && split && !unlabelled[0] {
                    let (b, d) = ids[0].split_at(cut);
                    let (bl, dl) = labels[0].split_at(cut);
                    // the upper half as the appended part (sorted on its own)
                    Nbrs { base: b, base_labels: bl, delta: d, delta_labels: dl, skip_marked: true, marked: 0 }
                } else {
                    Nbrs::plain(&ids[k], &labels[k])
                },
                elabel: wants[k],
            }).collect();
            let mut out = Vec::new();
            intersect_into(&mut ops, &mut out);
            let member = |k: usize| -> BTreeSet<u32> {
                (0..ids[k].len()).filter(|&i| wants[k].is_none_or(|w| w == label_of(k, i))).map(|i| ids[k][i]).collect()
            };
            let mut expect = member(0);
            for k in 1..lists.len() { expect = expect.intersection(&member(k)).copied().collect(); }
            prop_assert_eq!(out, expect.into_iter().collect::<Vec<_>>());
        }
    }

    proptest! {
        #[test]
        fn block_merge_counts_like_sets(a in prop::collection::vec(0u32..3000, 0..400),
                                        b in prop::collection::vec(0u32..3000, 0..400)) {
            let (a, b) = (sorted(a), sorted(b));
            let expect = a.iter().filter(|x| b.binary_search(x).is_ok()).count() as u64;
            prop_assert_eq!(merge_count(&a, &b), expect);
            prop_assert_eq!(merge_count_scalar(&a, &b), expect);
            prop_assert_eq!(sorted_overlap(&a, &b), expect);
        }
    }

    #[test]
    fn edge_labels_filter_entries() {
        let a = [1u32, 2, 3, 4];
        let al = [7u32, 8, 7, 8];
        let b = [2u32, 3, 4];
        let mut ops = [
            Operand {
                list: Nbrs::plain(&a, &al),
                elabel: Some(7),
            },
            Operand {
                list: Nbrs::plain(&b, &[]),
                elabel: None,
            },
        ];
        let mut out = Vec::new();
        intersect_into(&mut ops, &mut out);
        assert_eq!(out, vec![3]);
    }
}
