//! [`CsrByLabel`]: a [`CsrGraph`] whose neighbour lists can also be read one
//! vertex label at a time, as RapidFlow and the SubgraphMatching study's
//! engines index them.
//!
//! A matcher that extends a partial match to a query vertex of label `l`
//! needs only the neighbours labelled `l`. Reading whole lists, intersecting
//! them and then dropping the other labels costs a label lookup per surviving
//! candidate and merges entries that can never match; with many labels that
//! is most of the work. Here every list is also kept grouped by label (ids
//! ascending within a group), and [`GraphView::nbrs_with_label`] returns the
//! group of one label as a plain sorted slice, found by two binary searches
//! on the group order (no per-vertex directory).
//!
//! Memory: one more copy of the adjacency (and of its edge labels), built in
//! parallel in O(|E| log d). [`GraphView::nbrs`] still reads the id-sorted
//! snapshot, so every other reader is unaffected.

use rayon::prelude::*;

use crate::csr::CsrGraph;
use crate::slices::{csr_spans, sort_paired, windows_mut};
use crate::types::{Label, VertexId};
use crate::view::{GraphView, LabelGroup, Nbrs, Version};

/// A CSR snapshot plus its lists grouped by neighbour label.
#[derive(Debug)]
pub struct CsrByLabel<'g> {
    csr: &'g CsrGraph,
    /// Per vertex (at the CSR's offsets): neighbours sorted by (label, id).
    grouped: Vec<VertexId>,
    /// Edge labels parallel to `grouped`; empty without edge labels.
    grouped_elabels: Vec<Label>,
    /// The vertex label of each entry of `grouped`, when every label fits
    /// in 16 bits: a list's groups are then found by binary searches in its
    /// own (contiguous) keys instead of label lookups scattered over the graph.
    keys: Option<Vec<u16>>,
}

impl<'g> CsrByLabel<'g> {
    /// Groups every list of `csr` by neighbour label (on the current rayon pool).
    pub fn new(csr: &'g CsrGraph) -> Self {
        let labels = csr.labels();
        let offsets = csr.offsets();
        // (label, id) packed in one word per entry: a list sorts by it with
        // no label lookups in its comparisons
        let mut packed: Vec<u64> = csr
            .neighbor_array()
            .par_iter()
            .with_min_len(1 << 14)
            .map(|&x| (labels[x as usize] as u64) << 32 | x as u64)
            .collect();
        let mut grouped_elabels = csr.edge_label_array().to_vec();
        if csr.edge_labelled() {
            let lists = windows_mut(&mut packed, unsorted_spans(offsets));
            let els = windows_mut(&mut grouped_elabels, unsorted_spans(offsets));
            lists.into_par_iter().zip(els).with_min_len(256).for_each(|(list, el)| {
                if !list.is_sorted() {
                    sort_paired(list, el);
                }
            });
        } else {
            let lists = windows_mut(&mut packed, unsorted_spans(offsets));
            lists.into_par_iter().with_min_len(256).for_each(|list| {
                if !list.is_sorted() {
                    list.sort_unstable();
                }
            });
        }
        let grouped = packed
            .par_iter()
            .with_min_len(1 << 14)
            .map(|&p| p as VertexId)
            .collect();
        let small = labels.iter().all(|&l| l <= u16::MAX as Label || l == crate::ABSENT);
        let keys = small.then(|| {
            packed
                .par_iter()
                .with_min_len(1 << 14)
                .map(|&p| (p >> 32) as u16)
                .collect()
        });
        CsrByLabel {
            csr,
            grouped,
            grouped_elabels,
            keys,
        }
    }

    /// The snapshot this index groups.
    pub fn csr(&self) -> &'g CsrGraph {
        self.csr
    }

    /// Bytes held by the grouped copy (the snapshot's own arrays excluded).
    pub fn memory_bytes(&self) -> usize {
        (self.grouped.len() + self.grouped_elabels.len()) * 4 + self.keys.as_ref().map_or(0, |k| k.len() * 2)
    }
}

/// The spans of the lists of two or more entries (the others are sorted
/// already): on a graph whose lists are mostly empty, as a static count's
/// graph of kept edges is, this spares a window per vertex.
fn unsorted_spans(offsets: &[u64]) -> impl Iterator<Item = (usize, usize)> + '_ {
    csr_spans(offsets).filter(|&(s, e)| e - s > 1)
}

/// The range of `items` (ordered by `key`) whose key is `label`: the group
/// of one label in a list grouped by label.
#[inline]
pub(crate) fn label_range<T: Copy>(items: &[T], key: impl Fn(T) -> Label, label: Label) -> (usize, usize) {
    let n = items.len();
    match (items.first().map(|&x| key(x)), items.last().map(|&x| key(x))) {
        (None, _) | (_, None) => (0, 0),
        // a list of one label (every list, when a static count keeps only
        // the edges of its query's label pairs), or none of this one
        (Some(a), Some(b)) if a == label && b == label => (0, n),
        (Some(a), Some(b)) if a > label || b < label => (n, n),
        _ => {
            let lo = items.partition_point(|&x| key(x) < label);
            (lo, lo + items[lo..].partition_point(|&x| key(x) == label))
        }
    }
}

impl GraphView for CsrByLabel<'_> {
    forward_whole_lists!(csr);
    fn has_label_groups(&self) -> bool {
        true
    }
    #[inline]
    fn nbrs_with_label(
        &self,
        v: VertexId,
        _ver: Version,
        label: Label,
        _elabel: Option<Label>,
    ) -> Option<LabelGroup<'_>> {
        let off = self.csr.offsets();
        let (s, t) = (off[v as usize] as usize, off[v as usize + 1] as usize);
        let list = &self.grouped[s..t];
        let (lo, hi) = match &self.keys {
            Some(keys) => label_range(&keys[s..t], |k| k as Label, label),
            None => {
                let labels = self.csr.labels();
                label_range(list, |x| labels[x as usize], label)
            }
        };
        let el = if self.grouped_elabels.is_empty() {
            &[][..]
        } else {
            &self.grouped_elabels[s + lo..s + hi]
        };
        Some(LabelGroup::by_vertex_label(Nbrs::plain(&list[lo..hi], el)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{assign_labels, erdos_renyi, graph_from_pairs, Labeller};
    use crate::types::GraphData;

    fn er(n: usize, m: usize, num_labels: u32, edge_labels: Option<u32>, seed: u64) -> GraphData {
        let labels = assign_labels(n, &Labeller::Uniform { num_labels, seed });
        graph_from_pairs(n, &erdos_renyi(n, m, seed), labels, edge_labels.map(|k| (k, seed)))
    }

    /// Every label group equals the id-sorted list filtered by that label
    /// (an independent filter of the snapshot), edge labels included.
    fn check(g: &GraphData) {
        let csr = CsrGraph::from_data(g).unwrap();
        let idx = CsrByLabel::new(&csr);
        let max_label = g.labels.iter().copied().max().unwrap_or(0);
        for v in 0..csr.num_vertices() as VertexId {
            let present = (0..=max_label.min(300) + 1).chain(g.labels.iter().copied().take(20));
            for l in present {
                let want: Vec<(VertexId, Label)> = csr
                    .nbrs(v, Version::New)
                    .iter()
                    .filter(|&(x, _)| csr.labels()[x as usize] == l)
                    .collect();
                let got = idx.nbrs_with_label(v, Version::New, l, None).unwrap().list.to_vec();
                assert_eq!(got, want, "vertex {v}, label {l}");
            }
        }
    }

    #[test]
    fn groups_equal_filtered_lists() {
        for (labels, seed) in [(1, 1), (3, 2), (16, 3), (200, 4)] {
            check(&er(300, 2_000, labels, None, seed));
        }
    }

    #[test]
    fn groups_of_labels_beyond_16_bits() {
        let mut g = er(200, 1_500, 5, None, 9);
        for l in &mut g.labels {
            *l = *l * 70_000 + 3;
        }
        check(&g);
        let csr = CsrGraph::from_data(&g).unwrap();
        let idx = CsrByLabel::new(&csr);
        assert!(idx.keys.is_none());
        assert_eq!(idx.nbrs_with_label(0, Version::New, 17, None).unwrap().list.len(), 0);
    }

    #[test]
    fn groups_carry_edge_labels() {
        check(&er(100, 600, 4, Some(5), 7));
    }
}
