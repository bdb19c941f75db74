//! [`GraphStats`]: the few data-graph statistics that order strategies use.

use std::collections::HashMap;

use csm_graph::{GraphView, Label, ABSENT};

/// Labels below this are counted in an array by [`GraphStats::of`].
const DENSE_LABELS: Label = 1 << 16;

/// Label frequencies and degree summary of a data graph.
#[derive(Clone, Debug, Default)]
pub struct GraphStats {
    /// Number of vertices per label present (labels are any u32, so a map).
    pub label_freq: HashMap<Label, usize>,
    pub num_vertices: usize,
    pub max_degree: usize,
}

impl GraphStats {
    pub fn of<G: GraphView + ?Sized>(g: &G) -> GraphStats {
        let labels = g.labels();
        let present = || labels.iter().copied().filter(|&l| l != ABSENT);
        let mut label_freq = HashMap::new();
        let mut n = 0;
        match present().max() {
            // small labels are counted in an array (a hash map entry per
            // vertex took 7 ms a million vertices)
            Some(max) if max < DENSE_LABELS => {
                let mut freq = vec![0usize; max as usize + 1];
                for l in present() {
                    freq[l as usize] += 1;
                }
                for (l, &f) in freq.iter().enumerate().filter(|(_, &f)| f > 0) {
                    label_freq.insert(l as Label, f);
                    n += f;
                }
            }
            _ => {
                for l in present() {
                    n += 1;
                    *label_freq.entry(l).or_insert(0) += 1;
                }
            }
        }
        GraphStats {
            label_freq,
            num_vertices: n,
            max_degree: g.max_degree(),
        }
    }

    /// These statistics with one more vertex for each of `labels` (vertices
    /// a batch is about to add: see [`crate::labels_plans_skip`]).
    pub fn with_vertex_labels(mut self, labels: &[Label]) -> GraphStats {
        for &l in labels {
            *self.label_freq.entry(l).or_insert(0) += 1;
            self.num_vertices += 1;
        }
        self
    }

    pub fn freq(&self, l: Label) -> usize {
        self.label_freq.get(&l).copied().unwrap_or(0)
    }

    /// True when every present vertex carries `l` (label checks can be skipped).
    pub fn only_label(&self, l: Label) -> bool {
        self.freq(l) == self.num_vertices
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csm_graph::{CsrGraph, Edge, GraphData};

    /// Labels near u32::MAX are counted, not used as table sizes.
    #[test]
    fn counts_labels_anywhere_in_u32() {
        let g = GraphData {
            labels: vec![4_000_000_000, 7, 4_000_000_000, ABSENT],
            edges: vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)],
            edge_labelled: false,
        };
        let s = GraphStats::of(&CsrGraph::from_data(&g).unwrap());
        assert_eq!(
            (s.freq(4_000_000_000), s.freq(7), s.freq(8), s.num_vertices),
            (2, 1, 0, 3)
        );
        assert!(!s.only_label(7));
    }

    /// Small labels (counted in an array) give the counts of a plain tally.
    #[test]
    fn counts_small_labels_like_a_tally() {
        let labels: Vec<Label> = (0..500u32)
            .map(|v| if v % 7 == 3 { ABSENT } else { v * v % 11 })
            .collect();
        let ids: Vec<u32> = (0..500u32).filter(|&v| labels[v as usize] != ABSENT).collect();
        let edges = ids.windows(2).map(|w| Edge::new(w[0], w[1], 0)).collect();
        let g = GraphData {
            labels: labels.clone(),
            edges,
            edge_labelled: false,
        };
        let s = GraphStats::of(&CsrGraph::from_data(&g).unwrap());
        let present: Vec<Label> = labels.into_iter().filter(|&l| l != ABSENT).collect();
        assert_eq!(s.num_vertices, present.len());
        for l in 0..12 {
            assert_eq!(s.freq(l), present.iter().filter(|&&x| x == l).count(), "label {l}");
        }
        let distinct: std::collections::BTreeSet<Label> = present.iter().copied().collect();
        assert_eq!(s.label_freq.len(), distinct.len());
    }
}
