//! Random connected queries taken from the data graph by random walks.

use crate::types::{Edge, GraphData, Label, VertexId, ABSENT};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};

/// Sparse queries keep each non-tree induced edge with this probability.
pub const EXTRA_EDGE_PROB: f64 = 0.25;
/// Random start vertices tried before scanning for a large enough component.
const RANDOM_STARTS: usize = 64;
/// Random jumps back into the visited set before the walk switches to
/// choosing frontier edges directly.
const MAX_RESTARTS: usize = 64;

/// A compact adjacency (CSR) of a [`GraphData`], both directions.
pub(crate) struct Adjacency {
    offsets: Vec<usize>,
    nbrs: Vec<(VertexId, Label)>,
}

impl Adjacency {
    pub(crate) fn new(g: &GraphData) -> Self {
        let n = g.labels.len();
        // Count degrees, prefix-sum to end positions, then fill backwards so
        // that `offsets[v]` ends at the start of `v`'s list.
        let mut offsets = vec![0usize; n + 1];
        for e in &g.edges {
            offsets[e.u as usize] += 1;
            offsets[e.v as usize] += 1;
        }
        for i in 1..=n {
            offsets[i] += offsets[i - 1];
        }
        let mut nbrs = vec![(0, 0); offsets[n]];
        for e in &g.edges {
            offsets[e.u as usize] -= 1;
            nbrs[offsets[e.u as usize]] = (e.v, e.label);
            offsets[e.v as usize] -= 1;
            nbrs[offsets[e.v as usize]] = (e.u, e.label);
        }
        Adjacency { offsets, nbrs }
    }

    pub(crate) fn nbrs(&self, v: VertexId) -> &[(VertexId, Label)] {
        &self.nbrs[self.offsets[v as usize]..self.offsets[v as usize + 1]]
    }
}

/// Whether `start`'s component has at least `k` vertices (bounded BFS).
fn component_at_least(adj: &Adjacency, start: VertexId, k: usize) -> bool {
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &(x, _) in adj.nbrs(v) {
            if seen.insert(x) {
                if seen.len() >= k {
                    return true;
                }
                queue.push_back(x);
            }
        }
    }
    seen.len() >= k
}

/// Every vertex whose component has at least `k` vertices (full scan).
fn in_large_components(adj: &Adjacency, candidates: &[VertexId], n: usize, k: usize) -> Vec<VertexId> {
    let mut comp = vec![u32::MAX; n];
    let mut sizes = Vec::new();
    for &s in candidates {
        if comp[s as usize] != u32::MAX {
            continue;
        }
        let id = sizes.len() as u32;
        comp[s as usize] = id;
        let mut stack = vec![s];
        let mut size = 0usize;
        while let Some(v) = stack.pop() {
            size += 1;
            for &(x, _) in adj.nbrs(v) {
                if comp[x as usize] == u32::MAX {
                    comp[x as usize] = id;
                    stack.push(x);
                }
            }
        }
        sizes.push(size);
    }
    candidates
        .iter()
        .copied()
        .filter(|&v| sizes[comp[v as usize] as usize] >= k)
        .collect()
}

/// Draws random connected queries from one data graph (see
/// [`random_walk_query`]); builds the adjacency once, so drawing many queries
/// from a large graph is cheap.
pub struct QuerySampler<'a> {
    g: &'a GraphData,
    adj: Adjacency,
    /// Present vertices with at least one edge.
    with_edges: Vec<VertexId>,
}

impl<'a> QuerySampler<'a> {
    pub fn new(g: &'a GraphData) -> Self {
        let adj = Adjacency::new(g);
        let with_edges = (0..g.labels.len() as VertexId)
            .filter(|&v| g.labels[v as usize] != ABSENT && !adj.nbrs(v).is_empty())
            .collect();
        QuerySampler { g, adj, with_edges }
    }

    /// One query; same contract and same result as [`random_walk_query`].
    pub fn sample(&self, num_vertices: usize, seed: u64, dense: bool) -> Option<GraphData> {
        let k = num_vertices;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        if k == 0 {
            return None;
        }
        if k == 1 {
            let present: Vec<VertexId> = (0..self.g.labels.len() as VertexId)
                .filter(|&v| self.g.labels[v as usize] != ABSENT)
                .collect();
            let v = *present.get(rng.random_range(0..present.len().max(1)))?;
            let label = self.g.labels[v as usize];
            return Some(GraphData {
                labels: vec![label],
                edges: Vec::new(),
                edge_labelled: self.g.edge_labelled,
            });
        }
        let cands = &self.with_edges;
        if cands.is_empty() {
            return None;
        }
        let mut start = None;
        for _ in 0..RANDOM_STARTS {
            let s = cands[rng.random_range(0..cands.len())];
            if component_at_least(&self.adj, s, k) {
                start = Some(s);
                break;
            }
        }
        let start = match start {
            Some(s) => s,
            None => {
                let ok = in_large_components(&self.adj, cands, self.g.labels.len(), k);
                if ok.is_empty() {
                    return None;
                }
                ok[rng.random_range(0..ok.len())]
            }
        };
        let (order, tree) = walk(&self.adj, start, k, &mut rng);
        Some(build_query(self.g, &self.adj, &order, &tree, dense, &mut rng))
    }
}

/// A random connected query with `num_vertices` vertices taken from `g`.
///
/// A random walk starts at a random vertex (one with an edge when
/// `num_vertices > 1`, in a component large enough) and moves to random
/// neighbours until it has visited `num_vertices` distinct vertices; when it
/// stops finding new vertices it restarts from a random visited vertex (and,
/// after many restarts, extends the visited set through a random frontier
/// edge). Query vertex `i` is the `i`-th vertex discovered and keeps its data
/// label. With `dense`, the query has every data edge among the chosen
/// vertices (the induced subgraph); otherwise the walk's tree edges plus each
/// other induced edge with probability [`EXTRA_EDGE_PROB`]. Edge labels are
/// the data edge labels; edges are normalised (`u < v`) and sorted.
/// Deterministic for a given `seed`; `None` if `num_vertices == 0` or no
/// component of `g` is large enough. Builds an adjacency of `g` on every
/// call: use [`QuerySampler`] to draw many queries from a large graph.
pub fn random_walk_query(g: &GraphData, num_vertices: usize, seed: u64, dense: bool) -> Option<GraphData> {
    QuerySampler::new(g).sample(num_vertices, seed, dense)
}

/// The walk: discovered vertices in order and tree edges as query-id pairs.
fn walk(adj: &Adjacency, start: VertexId, k: usize, rng: &mut ChaCha8Rng) -> (Vec<VertexId>, Vec<(u32, u32)>) {
    let mut qid: HashMap<VertexId, u32> = HashMap::from([(start, 0)]);
    let mut order = vec![start];
    let mut tree = Vec::with_capacity(k.saturating_sub(1));
    let stall_limit = 16 + 4 * k;
    let (mut cur, mut stall, mut restarts) = (start, 0usize, 0usize);
    while order.len() < k {
        if stall > stall_limit {
            stall = 0;
            if restarts < MAX_RESTARTS {
                restarts += 1;
                cur = order[rng.random_range(0..order.len())];
                continue;
            }
            // Frontier step: a random edge leaving the visited set.
            let frontier: Vec<(VertexId, VertexId)> = order
                .iter()
                .flat_map(|&v| adj.nbrs(v).iter().map(move |&(x, _)| (v, x)))
                .filter(|(_, x)| !qid.contains_key(x))
                .collect();
            let (from, x) = frontier[rng.random_range(0..frontier.len())];
            qid.insert(x, order.len() as u32);
            tree.push((qid[&from], order.len() as u32));
            order.push(x);
            cur = x;
            continue;
        }
        let nb = adj.nbrs(cur);
        let (x, _) = nb[rng.random_range(0..nb.len())];
        if let std::collections::hash_map::Entry::Vacant(slot) = qid.entry(x) {
            slot.insert(order.len() as u32);
            tree.push((qid[&cur], order.len() as u32));
            order.push(x);
            stall = 0;
        } else {
            stall += 1;
        }
        cur = x;
    }
    (order, tree)
}

fn build_query(
    g: &GraphData,
    adj: &Adjacency,
    order: &[VertexId],
    tree: &[(u32, u32)],
    dense: bool,
    rng: &mut ChaCha8Rng,
) -> GraphData {
    let qid: HashMap<VertexId, u32> = order.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
    let mut induced: Vec<Edge> = Vec::new();
    for (i, &v) in order.iter().enumerate() {
        for &(x, label) in adj.nbrs(v) {
            if let Some(&j) = qid.get(&x) {
                if (i as u32) < j {
                    induced.push(Edge::new(i as u32, j, label));
                }
            }
        }
    }
    induced.sort_unstable();
    let edges = if dense {
        induced
    } else {
        let mut tree_keys: Vec<(u32, u32)> = tree.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        tree_keys.sort_unstable();
        induced
            .into_iter()
            .filter(|e| tree_keys.binary_search(&(e.u, e.v)).is_ok() || rng.random_bool(EXTRA_EDGE_PROB))
            .collect()
    };
    let labels = order.iter().map(|&v| g.labels[v as usize]).collect();
    GraphData {
        labels,
        edges,
        edge_labelled: g.edge_labelled,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::gen::{assign_labels, graph_from_pairs, grid, rmat, Labeller, RMAT_STANDARD};

    /// Whether `q` (vertices `0..n`) is connected.
    pub(crate) fn connected(q: &GraphData) -> bool {
        let n = q.labels.len();
        if n == 0 {
            return true;
        }
        let adj = Adjacency::new(q);
        let mut seen = vec![false; n];
        seen[0] = true;
        let mut stack = vec![0u32];
        let mut count = 1;
        while let Some(v) = stack.pop() {
            for &(x, _) in adj.nbrs(v) {
                if !seen[x as usize] {
                    seen[x as usize] = true;
                    count += 1;
                    stack.push(x);
                }
            }
        }
        count == n
    }

    fn data() -> GraphData {
        let (a, b, c) = RMAT_STANDARD;
        let pairs = rmat(10, 4000, a, b, c, 3);
        let labels = assign_labels(1024, &Labeller::Uniform { num_labels: 4, seed: 1 });
        graph_from_pairs(1024, &pairs, labels, Some((2, 5)))
    }

    fn is_data_edge(g: &GraphData, u: VertexId, v: VertexId, label: Label) -> bool {
        g.edges
            .iter()
            .any(|e| e.key() == (u.min(v), u.max(v)) && e.label == label)
    }

    #[test]
    fn queries_are_connected_subgraphs() {
        let g = data();
        let sampler = QuerySampler::new(&g);
        for seed in 0..20 {
            for k in [1, 3, 5, 8] {
                for dense in [false, true] {
                    let q = random_walk_query(&g, k, seed, dense).unwrap();
                    assert_eq!(q.labels.len(), k);
                    assert!(connected(&q), "seed {seed} k {k}");
                    assert!(q.edges.len() >= k - 1);
                    assert!(q.edges.iter().all(|e| e.u < e.v));
                    assert!(q.edge_labelled);
                    assert_eq!(q, random_walk_query(&g, k, seed, dense).unwrap());
                    assert_eq!(Some(q), sampler.sample(k, seed, dense));
                }
            }
        }
    }

    #[test]
    fn dense_query_is_induced() {
        let g = data();
        let sparse = random_walk_query(&g, 6, 9, false).unwrap();
        let dense = random_walk_query(&g, 6, 9, true).unwrap();
        // The same walk: same labels, and sparse edges are a subset.
        assert_eq!(sparse.labels, dense.labels);
        assert!(sparse.edges.iter().all(|e| dense.edges.contains(e)));
        assert!(dense.edges.len() >= sparse.edges.len());
    }

    #[test]
    fn embeds_into_data() {
        // Rebuild the walk's vertex map to check every query edge is a data edge.
        let g = data();
        let adj = Adjacency::new(&g);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (order, tree) = walk(&adj, g.edges[0].u, 7, &mut rng);
        let q = build_query(&g, &adj, &order, &tree, true, &mut rng);
        for e in &q.edges {
            assert!(is_data_edge(&g, order[e.u as usize], order[e.v as usize], e.label));
        }
        for (i, &v) in order.iter().enumerate() {
            assert_eq!(q.labels[i], g.labels[v as usize]);
        }
    }

    #[test]
    fn small_components_and_edge_cases() {
        // Two triangles and an isolated vertex: no 4-vertex query exists.
        let g = graph_from_pairs(7, &[(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)], vec![0; 7], None);
        assert!(random_walk_query(&g, 4, 0, true).is_none());
        assert!(random_walk_query(&g, 0, 0, true).is_none());
        let q = random_walk_query(&g, 3, 0, false).unwrap();
        assert!(q.edges.len() >= 2);
        let q = random_walk_query(&g, 1, 0, false).unwrap();
        assert_eq!((q.labels.len(), q.edges.len()), (1, 0));
        let empty = GraphData::default();
        assert!(random_walk_query(&empty, 1, 0, false).is_none());
        assert!(random_walk_query(&empty, 2, 0, false).is_none());
        // A long path exercises stalls and frontier steps.
        let path: Vec<(u32, u32)> = (0..199).map(|i| (i, i + 1)).collect();
        let g = graph_from_pairs(200, &path, vec![0; 200], None);
        let q = random_walk_query(&g, 60, 4, false).unwrap();
        assert_eq!(q.edges.len(), 59);
        assert!(connected(&q));
        // Road-like grid.
        let pairs = grid(30, 30, 0.1, 1);
        let g = graph_from_pairs(900, &pairs, vec![0; 900], None);
        assert!(connected(&random_walk_query(&g, 7, 2, true).unwrap()));
    }
}
