//! Building [`GraphData`] from generated pairs.

use crate::types::{Edge, GraphData, Label, NO_EDGE_LABEL};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A [`GraphData`] with vertices `0..n` labelled by `labels` and one edge per
/// pair (normalised to `u < v`, in the given order). With
/// `edge_labels = Some((num_edge_labels, seed))` every edge gets a label
/// uniform in `0..num_edge_labels` (drawn in edge order, seeded) and the graph
/// is edge-labelled; with `None` every edge gets [`NO_EDGE_LABEL`].
///
/// # Panics
/// If `labels.len() != n`, a pair has an endpoint `>= n` or is a self-loop,
/// `num_edge_labels == 0`, or (in debug builds) a pair repeats.
pub fn graph_from_pairs(
    n: usize,
    pairs: &[(u32, u32)],
    labels: Vec<Label>,
    edge_labels: Option<(u32, u64)>,
) -> GraphData {
    assert_eq!(
        labels.len(),
        n,
        "graph_from_pairs: {} labels for {n} vertices",
        labels.len()
    );
    let mut rng = edge_labels.map(|(k, seed)| {
        assert!(k > 0, "graph_from_pairs: num_edge_labels must be at least 1");
        (k, ChaCha8Rng::seed_from_u64(seed))
    });
    let edges: Vec<Edge> = pairs
        .iter()
        .map(|&(u, v)| {
            assert!(
                (u as usize) < n && (v as usize) < n,
                "graph_from_pairs: pair ({u}, {v}) out of range 0..{n}"
            );
            assert!(u != v, "graph_from_pairs: self-loop on {u}");
            let label = rng.as_mut().map_or(NO_EDGE_LABEL, |(k, r)| r.random_range(0..*k));
            Edge::new(u, v, label).normalized()
        })
        .collect();
    #[cfg(debug_assertions)]
    {
        let mut keys: Vec<(u32, u32)> = edges.iter().map(Edge::key).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            panic!("graph_from_pairs: duplicate pair {:?}", w[0]);
        }
    }
    GraphData {
        labels,
        edges,
        edge_labelled: edge_labels.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_labels_edges() {
        let g = graph_from_pairs(3, &[(1, 0), (1, 2)], vec![5, 6, 7], None);
        assert_eq!(g.edges, vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)]);
        assert!(!g.edge_labelled);
        let g = graph_from_pairs(3, &[(1, 0), (1, 2)], vec![5, 6, 7], Some((3, 9)));
        assert!(g.edge_labelled && g.edges.iter().all(|e| e.label < 3));
        assert_eq!(g, graph_from_pairs(3, &[(1, 0), (1, 2)], vec![5, 6, 7], Some((3, 9))));
    }

    #[test]
    #[should_panic(expected = "self-loop")]
    fn rejects_loops() {
        graph_from_pairs(2, &[(1, 1)], vec![0, 0], None);
    }
}
