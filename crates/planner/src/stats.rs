//! [`GraphStats`]: the few data-graph statistics that order strategies use.

use csm_graph::{GraphView, Label, ABSENT};

/// Label frequencies and degree summary of a data graph.
#[derive(Clone, Debug, Default)]
pub struct GraphStats {
    /// `label_freq[l]` = number of vertices with label `l`.
    pub label_freq: Vec<usize>,
    pub num_vertices: usize,
    pub max_degree: usize,
}

impl GraphStats {
    pub fn of<G: GraphView + ?Sized>(g: &G) -> GraphStats {
        let mut label_freq = Vec::new();
        let mut n = 0;
        for &l in g.labels() {
            if l == ABSENT {
                continue;
            }
            n += 1;
            if label_freq.len() <= l as usize {
                label_freq.resize(l as usize + 1, 0);
            }
            label_freq[l as usize] += 1;
        }
        GraphStats {
            label_freq,
            num_vertices: n,
            max_degree: g.max_degree(),
        }
    }

    pub fn freq(&self, l: Label) -> usize {
        self.label_freq.get(l as usize).copied().unwrap_or(0)
    }

    /// True when every present vertex carries `l` (label checks can be skipped).
    pub fn only_label(&self, l: Label) -> bool {
        self.freq(l) == self.num_vertices
    }
}
