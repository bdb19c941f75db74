//! Slice helpers for neighbour lists: disjoint mutable windows of one slice
//! (each list's region of an arena or a CSR, so that lists can be worked on
//! in parallel), and sorting a list together with its edge labels.

/// `arena[s..e]` for every `(s, e)` of `spans`, which are sorted by start
/// and do not overlap.
pub(crate) fn windows_mut<T>(mut arena: &mut [T], spans: impl IntoIterator<Item = (usize, usize)>) -> Vec<&mut [T]> {
    let spans = spans.into_iter();
    let mut out = Vec::with_capacity(spans.size_hint().0);
    let mut at = 0;
    for (s, e) in spans {
        let (_, rest) = std::mem::take(&mut arena).split_at_mut(s - at);
        let (w, rest) = rest.split_at_mut(e - s);
        out.push(w);
        arena = rest;
        at = e;
    }
    out
}

/// Sorts `keys` and moves each entry of `vals` (same length, or empty) with
/// its key; entries compare by key, then value.
pub(crate) fn sort_paired<K: Ord + Copy, V: Ord + Copy>(keys: &mut [K], vals: &mut [V]) {
    sort_paired_in(keys, vals, &mut Vec::new());
}

/// [`sort_paired`] with `pairs` as its scratch buffer (callers that sort
/// many lists reuse one).
pub(crate) fn sort_paired_in<K: Ord + Copy, V: Ord + Copy>(keys: &mut [K], vals: &mut [V], pairs: &mut Vec<(K, V)>) {
    if vals.is_empty() {
        keys.sort_unstable();
        return;
    }
    pairs.clear();
    pairs.extend(keys.iter().copied().zip(vals.iter().copied()));
    pairs.sort_unstable();
    for (k, &(key, val)) in pairs.iter().enumerate() {
        keys[k] = key;
        vals[k] = val;
    }
}

/// The spans of the lists that CSR `offsets` delimit.
pub(crate) fn csr_spans(offsets: &[u64]) -> impl Iterator<Item = (usize, usize)> + '_ {
    offsets.windows(2).map(|w| (w[0] as usize, w[1] as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_the_spans() {
        let mut a: Vec<u32> = (0..20).collect();
        let spans = [(1, 3), (3, 3), (5, 9), (15, 20)];
        let ws = windows_mut(&mut a, spans);
        let got: Vec<Vec<u32>> = ws.iter().map(|w| w.to_vec()).collect();
        assert_eq!(
            got,
            vec![vec![1, 2], vec![], vec![5, 6, 7, 8], vec![15, 16, 17, 18, 19]]
        );
    }

    #[test]
    fn values_move_with_their_keys() {
        let (mut k, mut v) = (vec![3u32, 1, 2], vec![30u32, 10, 20]);
        sort_paired(&mut k, &mut v);
        assert_eq!((k, v), (vec![1, 2, 3], vec![10, 20, 30]));
        let mut alone = vec![2u64, 0, 1];
        sort_paired(&mut alone, &mut [0u32; 0]);
        assert_eq!(alone, vec![0, 1, 2]);
    }

    #[test]
    fn csr_offsets_cut_every_list() {
        let mut a: Vec<u32> = (0..6).collect();
        let ws = windows_mut(&mut a, csr_spans(&[0, 2, 2, 6]));
        let got: Vec<Vec<u32>> = ws.iter().map(|w| w.to_vec()).collect();
        assert_eq!(got, vec![vec![0, 1], vec![], vec![2, 3, 4, 5]]);
    }
}
