//! [`GraphStats`]: the few data-graph statistics that order strategies use.

use std::collections::HashMap;

use csm_graph::{GraphView, Label, ABSENT};

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
        let mut label_freq = HashMap::new();
        let mut n = 0;
        for &l in g.labels() {
            if l == ABSENT {
                continue;
            }
            n += 1;
            *label_freq.entry(l).or_insert(0) += 1;
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
}
