//! Disjoint mutable windows of one slice (each list's region of an arena or
//! a CSR), so that lists can be worked on in parallel.

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
    fn csr_offsets_cut_every_list() {
        let mut a: Vec<u32> = (0..6).collect();
        let ws = windows_mut(&mut a, csr_spans(&[0, 2, 2, 6]));
        let got: Vec<Vec<u32>> = ws.iter().map(|w| w.to_vec()).collect();
        assert_eq!(got, vec![vec![0, 1], vec![], vec![2, 3, 4, 5]]);
    }
}
