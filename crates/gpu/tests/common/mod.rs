//! Shared generators for the matching tests.
#![allow(dead_code)]

use csm_graph::gen::{
    assign_labels, erdos_renyi, graph_from_pairs, make_stream, rmat, standard_query, with_labels, Labeller,
    StreamAmount, RMAT_STANDARD,
};
use csm_graph::{Edge, GraphData, Label, LocatedUpdate, Update};
use csm_planner::QueryGraph;

/// An R-MAT graph over 2^scale vertices with `labels` uniform vertex labels
/// and, optionally, `elabels` uniform edge labels.
pub fn rmat_graph(scale: u32, edges: usize, labels: u32, elabels: Option<u32>, seed: u64) -> GraphData {
    let (a, b, c) = RMAT_STANDARD;
    let pairs = rmat(scale, edges, a, b, c, seed);
    let n = 1usize << scale;
    let l = assign_labels(
        n,
        &Labeller::Uniform {
            num_labels: labels,
            seed: seed ^ 7,
        },
    );
    graph_from_pairs(n, &pairs, l, elabels.map(|k| (k, seed ^ 11)))
}

/// An Erdős–Rényi graph.
pub fn er_graph(n: usize, edges: usize, labels: u32, elabels: Option<u32>, seed: u64) -> GraphData {
    let pairs = erdos_renyi(n, edges, seed);
    let l = assign_labels(
        n,
        &Labeller::Uniform {
            num_labels: labels,
            seed: seed ^ 3,
        },
    );
    graph_from_pairs(n, &pairs, l, elabels.map(|k| (k, seed ^ 5)))
}

/// `(G_0, batches)`: a stream of `batches * batch` mixed updates cut into batches.
pub fn stream(g: &GraphData, batch: usize, batches: usize, seed: u64) -> (GraphData, Vec<Vec<LocatedUpdate>>) {
    stream_of(g, batch, batches, 0.5, seed)
}

/// [`stream`] whose updates are insertions with probability `insert_prob`.
pub fn stream_of(
    g: &GraphData,
    batch: usize,
    batches: usize,
    insert_prob: f64,
    seed: u64,
) -> (GraphData, Vec<Vec<LocatedUpdate>>) {
    let (g0, ups) = make_stream(g, StreamAmount::Count(batch * batches), insert_prob, seed);
    let b = ups.chunks(batch).map(|c| c.to_vec()).collect();
    (g0, b)
}

/// Standard query `name` with vertex labels `labels[i % labels.len()]`.
pub fn query(name: &str, labels: &[Label]) -> QueryGraph {
    let q = standard_query(name).expect("standard query");
    let l: Vec<Label> = (0..q.labels.len()).map(|i| labels[i % labels.len()]).collect();
    QueryGraph::from_data(&with_labels(&q, &l)).expect("valid query")
}

/// `name` with edge `i` labelled `elabels[i % len]` (edge-labelled query).
pub fn edge_labelled_query(name: &str, vlabels: &[Label], elabels: &[Label]) -> QueryGraph {
    let q = standard_query(name).expect("standard query");
    let l: Vec<Label> = (0..q.labels.len()).map(|i| vlabels[i % vlabels.len()]).collect();
    let edges: Vec<(usize, usize, Label)> = q
        .edges
        .iter()
        .enumerate()
        .map(|(i, e)| (e.u as usize, e.v as usize, elabels[i % elabels.len()]))
        .collect();
    QueryGraph::new(l, &edges, true).expect("valid query")
}

fn lu(line: usize, update: Update) -> LocatedUpdate {
    LocatedUpdate { line, update }
}

/// Batches that add vertices mid-stream (with a gap of absent ids) and
/// connect them densely to each other and to existing vertices, then
/// delete some of those edges again, mixed with ordinary updates.
pub fn growth_batches(g: &GraphData, label_of_new: Label) -> Vec<Vec<LocatedUpdate>> {
    let n = g.labels.len() as u32;
    let (a, b, c) = (n, n + 3, n + 4);
    let old: Vec<u32> = (0..6).map(|i| (i * 7) % n).collect();
    let mut line = 0;
    let mut next = |u: Update| {
        line += 1;
        lu(line, u)
    };
    let mut b1 = vec![
        next(Update::AddVertex {
            id: a,
            label: label_of_new,
        }),
        next(Update::AddVertex { id: b, label: 0 }),
        next(Update::AddEdge(Edge::new(a, b, 0))),
    ];
    for &x in &old {
        b1.push(next(Update::AddEdge(Edge::new(a, x, 1))));
        b1.push(next(Update::AddEdge(Edge::new(b, x, 0))));
    }
    // an existing edge removed in the same batch
    let e0 = g.edges[0];
    b1.push(next(Update::RemoveEdge(e0)));
    let mut b2 = vec![
        next(Update::AddVertex {
            id: c,
            label: label_of_new,
        }),
        next(Update::AddEdge(Edge::new(c, a, 1))),
        next(Update::AddEdge(Edge::new(c, b, 0))),
        next(Update::RemoveEdge(Edge::new(a, old[0], 1))),
    ];
    for &x in &old[1..4] {
        b2.push(next(Update::AddEdge(Edge::new(c, x, 0))));
    }
    b2.push(next(Update::AddEdge(e0)));
    let b3 = vec![
        next(Update::RemoveEdge(Edge::new(b, old[1], 0))),
        next(Update::RemoveEdge(Edge::new(c, a, 1))),
        next(Update::RemoveVertex { id: b, label: None }),
    ];
    vec![b1, b2, b3]
}

/// `(G_0, batches)`: [`growth_batches`] on G_0 followed by a mixed stream
/// (updates of the edge the growth batches toggle are left out).
pub fn growth_stream(g: &GraphData, batch: usize, batches: usize, seed: u64) -> (GraphData, Vec<Vec<LocatedUpdate>>) {
    let (g0, more) = stream(g, batch, batches, seed);
    let mut out = growth_batches(&g0, 1);
    let key = g0.edges[0].key();
    out.extend(more.into_iter().map(|b| {
        b.into_iter()
            .filter(|u| match u.update {
                Update::AddEdge(e) | Update::RemoveEdge(e) => e.key() != key,
                _ => true,
            })
            .collect()
    }));
    (g0, out)
}

/// A stream for the kernel's huge build: a 10-clique planted on vertices
/// 0-9 of an Erdős–Rényi graph of 400 vertices (10 labels), with three of
/// its edges missing from `G_0`, inserted by the first of three batches;
/// the second deletes another. Returns `(G_0, batches, queries)`: the
/// clique as a query (levels of up to 9 reads), then walk queries of 20,
/// 24 and 32 vertices in `G_0` (those the walk finds).
pub fn planted_clique() -> (GraphData, Vec<Vec<LocatedUpdate>>, Vec<QueryGraph>) {
    let n = 400;
    let in_clique = |u: u32| u < 10;
    let pairs: Vec<(u32, u32)> = erdos_renyi(n, 1300, 21)
        .into_iter()
        .filter(|&(u, v)| !(in_clique(u) && in_clique(v)))
        .collect();
    let labels = assign_labels(
        n,
        &Labeller::Uniform {
            num_labels: 10,
            seed: 4,
        },
    );
    let g = graph_from_pairs(n, &pairs, labels.clone(), None);
    let (mut g0, mut batches) = stream(&g, 40, 3, 22);
    let missing = [(0, 1), (0, 2), (1, 2)];
    for u in 0..10u32 {
        for v in u + 1..10 {
            if !missing.contains(&(u, v)) {
                g0.edges.push(Edge::new(u, v, 0));
            }
        }
    }
    let update = |insert: bool, (u, v): (u32, u32)| LocatedUpdate {
        update: if insert {
            Update::AddEdge(Edge::new(u, v, 0))
        } else {
            Update::RemoveEdge(Edge::new(u, v, 0))
        },
        line: 0,
    };
    batches[0].extend(missing.iter().map(|&e| update(true, e)));
    batches[1].push(update(false, (3, 4)));
    let clique: Vec<(usize, usize, u32)> = (0..10).flat_map(|u| (u + 1..10).map(move |v| (u, v, 0))).collect();
    let mut queries = vec![QueryGraph::new(labels[..10].to_vec(), &clique, false).expect("valid query")];
    for (k, seed) in [(20, 1u64), (24, 2), (32, 3)] {
        if let Some(data) = csm_graph::gen::random_walk_query(&g0, k, seed, false) {
            queries.push(QueryGraph::from_data(&data).expect("valid query"));
        }
    }
    (g0, batches, queries)
}
