//! Stars whose embeddings have a closed form: centers joined to labelled
//! leaves, the query a star over some of those labels.

use csm_engine::{Batch, ContinuousMatcher};
use csm_graph::{Edge, GraphData, Strictness, Update, VertexId};
use csm_planner::QueryGraph;

/// Centers `0..c` (label 0), then `m[l - 1]` leaves of each label `l ≥ 1`,
/// every leaf joined to every center, then `h` handles of the next label,
/// each joined to every center.
pub fn stars(c: u32, m: &[u32], h: u32) -> GraphData {
    let mut labels = vec![0; c as usize];
    let mut edges = Vec::new();
    let counts = m.iter().chain(std::iter::once(&h));
    for (i, &n) in counts.enumerate() {
        for _ in 0..n {
            let leaf = labels.len() as VertexId;
            labels.push(i as u32 + 1);
            edges.extend((0..c).map(|x| Edge::new(x, leaf, 0)));
        }
    }
    GraphData {
        labels,
        edges,
        edge_labelled: false,
    }
}

/// A star: a center of label 0 and one leaf per entry of `leaves` (labels),
/// and with `handle`, one more leaf of that label (matched by the handles:
/// counts then sum the stars of several centers below one binding).
pub fn star_query(leaves: &[u32], handle: Option<u32>) -> QueryGraph {
    let labels: Vec<_> = std::iter::once(0).chain(leaves.iter().copied()).chain(handle).collect();
    let edges: Vec<_> = (1..labels.len()).map(|i| (0, i, 0)).collect();
    QueryGraph::new(labels, &edges, false).expect("a star is a valid query")
}

/// Embeddings of the star at one center: leaves of each label map
/// injectively to that label's leaves (a falling factorial per label),
/// saturating at `u128::MAX` (60^24 needs 142 bits): callers multiply it
/// saturating too.
pub fn per_center(m: &[u32], leaves: &[u32]) -> u128 {
    let mut total = 1u128;
    for (i, &n) in m.iter().enumerate() {
        let k = leaves.iter().filter(|&&l| l == i as u32 + 1).count() as u128;
        for j in 0..k {
            total = total.saturating_mul(u128::from(n).saturating_sub(j));
        }
    }
    total
}

/// Takes center 0's edges to its leaves of label 1 out of `g` and returns
/// them: the joins the tests' batches add and remove again.
pub fn take_joins(g: &mut GraphData) -> Vec<Edge> {
    let joins: Vec<Edge> = (g.edges.iter())
        .filter(|e| e.u == 0 && g.labels[e.v as usize] == 1)
        .copied()
        .collect();
    g.edges.retain(|e| !joins.contains(e));
    joins
}

/// `joins` added (`insert`) or removed as one batch on `eng`: its
/// (positive, negative).
pub fn process_joins(eng: &mut dyn ContinuousMatcher, joins: &[Edge], insert: bool) -> (u64, u64) {
    let batch = super::located(joins.iter().map(|&e| {
        if insert {
            Update::AddEdge(e)
        } else {
            Update::RemoveEdge(e)
        }
    }));
    let r = eng
        .process(Batch {
            updates: &batch,
            source: "joins",
            strictness: Strictness::Strict,
        })
        .expect("valid joins");
    (r.positive, r.negative)
}
