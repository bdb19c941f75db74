//! A named set of small, unlabelled standard query patterns.
//!
//! GCSM Fig. 7 (six queries of 5 to 7 vertices) did not survive text
//! extraction, so this set covers the usual small patterns of the subgraph
//! matching literature plus three 6/7-vertex ones. All vertices have label 0
//! (use [`with_labels`] to relabel) and no edge is labelled.

use crate::types::{Edge, GraphData, Label, NO_EDGE_LABEL};

/// Names accepted by [`standard_query`] (`4-cycle` is also accepted as an
/// alias of `square`).
pub const STANDARD_QUERIES: &[&str] = &[
    "triangle",
    "square",
    "diamond",
    "4-clique",
    "house",
    "5-cycle",
    "prism",
    "hexagon-2chords",
    "7-wheel",
];

/// `(vertex count, edge list)` of a standard pattern.
fn pattern(name: &str) -> Option<(usize, &'static [(u32, u32)])> {
    Some(match name {
        // 3 vertices, 3 edges.
        "triangle" => (3, &[(0, 1), (1, 2), (0, 2)]),
        // 4-cycle 0-1-2-3-0: 4 edges.
        "square" | "4-cycle" => (4, &[(0, 1), (1, 2), (2, 3), (0, 3)]),
        // Square plus the chord 0-2: 5 edges (two triangles sharing 0-2).
        "diamond" => (4, &[(0, 1), (1, 2), (2, 3), (0, 3), (0, 2)]),
        // Complete graph on 4 vertices: 6 edges.
        "4-clique" => (4, &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]),
        // Square 0-1-2-3-0 plus roof vertex 4 on the adjacent pair 0, 1: 6 edges.
        "house" => (5, &[(0, 1), (1, 2), (2, 3), (0, 3), (0, 4), (1, 4)]),
        // 5-cycle 0-1-2-3-4-0: 5 edges.
        "5-cycle" => (5, &[(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]),
        // Triangular prism: triangles 0-1-2 and 3-4-5 joined by 0-3, 1-4, 2-5: 9 edges.
        "prism" => (
            6,
            &[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (0, 3), (1, 4), (2, 5)],
        ),
        // Hexagon 0-1-2-3-4-5-0 plus the chords 0-2 and 3-5 (two triangles at
        // opposite ends of a 4-cycle 0-2-3-5): 8 edges.
        "hexagon-2chords" => (6, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 5), (0, 2), (3, 5)]),
        // Wheel: rim 0-1-2-3-4-5-0 plus hub 6 joined to every rim vertex: 12 edges.
        "7-wheel" => (
            7,
            &[
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 4),
                (4, 5),
                (0, 5),
                (0, 6),
                (1, 6),
                (2, 6),
                (3, 6),
                (4, 6),
                (5, 6),
            ],
        ),
        _ => return None,
    })
}

/// The standard pattern `name` (see [`STANDARD_QUERIES`] and the edge lists
/// documented in this module's source), unlabelled, or `None` for an
/// unknown name.
///
/// | name | vertices | edges |
/// |---|---|---|
/// | `triangle` | 3 | 0-1, 1-2, 0-2 |
/// | `square` (`4-cycle`) | 4 | 0-1, 1-2, 2-3, 0-3 |
/// | `diamond` | 4 | square + 0-2 |
/// | `4-clique` | 4 | all 6 pairs |
/// | `house` | 5 | square + 0-4, 1-4 |
/// | `5-cycle` | 5 | 0-1, 1-2, 2-3, 3-4, 0-4 |
/// | `prism` | 6 | 0-1, 1-2, 0-2, 3-4, 4-5, 3-5, 0-3, 1-4, 2-5 |
/// | `hexagon-2chords` | 6 | 6-cycle 0..5 + 0-2, 3-5 |
/// | `7-wheel` | 7 | 6-cycle 0..5 + i-6 for i in 0..6 |
pub fn standard_query(name: &str) -> Option<GraphData> {
    let (n, edges) = pattern(name)?;
    Some(GraphData {
        labels: vec![0; n],
        edges: edges.iter().map(|&(u, v)| Edge::new(u, v, NO_EDGE_LABEL)).collect(),
        edge_labelled: false,
    })
}

/// `q` with vertex `i` relabelled `labels[i]`.
///
/// # Panics
/// If `labels.len()` differs from `q`'s vertex count.
pub fn with_labels(q: &GraphData, labels: &[Label]) -> GraphData {
    assert_eq!(
        labels.len(),
        q.labels.len(),
        "with_labels: {} labels for {} vertices",
        labels.len(),
        q.labels.len()
    );
    GraphData {
        labels: labels.to_vec(),
        ..q.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::query::tests::connected;

    #[test]
    fn documented_sizes_and_connected() {
        let want = [
            ("triangle", 3, 3),
            ("square", 4, 4),
            ("diamond", 4, 5),
            ("4-clique", 4, 6),
            ("house", 5, 6),
            ("5-cycle", 5, 5),
            ("prism", 6, 9),
            ("hexagon-2chords", 6, 8),
            ("7-wheel", 7, 12),
        ];
        assert_eq!(STANDARD_QUERIES.len(), want.len());
        for (&name, &(wname, n, m)) in STANDARD_QUERIES.iter().zip(&want) {
            assert_eq!(name, wname);
            let q = standard_query(name).unwrap();
            assert_eq!((q.labels.len(), q.edges.len()), (n, m), "{name}");
            assert!(connected(&q), "{name}");
            let mut keys: Vec<_> = q.edges.iter().map(Edge::key).collect();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), m, "{name} has a repeated edge");
            assert!(q.edges.iter().all(|e| e.u != e.v && (e.v as usize) < n));
            assert!(q.labels.iter().all(|&l| l == 0));
        }
        assert_eq!(standard_query("4-cycle"), standard_query("square"));
        assert!(standard_query("nonagon").is_none());
    }

    #[test]
    fn degrees_match_the_shapes() {
        let deg = |name: &str| {
            let q = standard_query(name).unwrap();
            let mut d = vec![0; q.labels.len()];
            for e in &q.edges {
                d[e.u as usize] += 1;
                d[e.v as usize] += 1;
            }
            d
        };
        assert_eq!(deg("prism"), vec![3; 6]);
        assert_eq!(deg("7-wheel"), vec![3, 3, 3, 3, 3, 3, 6]);
        assert_eq!(deg("house"), vec![3, 3, 2, 2, 2]);
    }

    #[test]
    fn relabels() {
        let q = with_labels(&standard_query("triangle").unwrap(), &[1, 2, 3]);
        assert_eq!(q.labels, vec![1, 2, 3]);
        assert_eq!(q.edges.len(), 3);
    }
}
