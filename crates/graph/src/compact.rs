//! Dropping vertices and renumbering the rest in id order: the vertices no
//! edge touches, for static counts ([`without_isolated`]), or any marked set
//! ([`keep_vertices`], behind [`GraphData::compact_ids`]).
//!
//!
//! A static count of a labelled query runs on the edges of the query's
//! label triples ([`crate::EdgeFilter::kept`]), which on a large graph with
//! many labels touch a small share of the vertices: 12 % of them for the
//! diamond (0,1,0,1) on a 10 M-edge R-MAT with 16 labels and 2^20 vertices.
//! Every pass over the vertices (the CSR build, label statistics, the
//! sampled plan's root draws, grouping lists by label, the start-vertex
//! scan) still costs time proportional to all 2^20 of them, and most of it
//! runs on one thread. An embedding of a connected query of two or more
//! vertices uses no isolated vertex, so counts on the graph without them,
//! renumbered in id order, are the same.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::types::{Edge, GraphData, Label, VertexId};

/// `g` without the vertices no edge touches, the others renumbered
/// 0..k in id order (labels kept), or `None` when that would drop fewer
/// than `1 - max_share` of them (not worth a renumbering). Edges keep their
/// order and labels. Runs on the current rayon pool.
///
/// Only for results that do not name vertices (counts): an edge `(u, v)`
/// of the result is `(rank(u), rank(v))` among the touched vertices.
/// Edges with an endpoint past `g`'s vertices give `None`.
pub fn without_isolated(g: &GraphData, max_share: f64) -> Option<GraphData> {
    let n = g.num_vertices();
    let touched: Vec<AtomicBool> = (0..n).into_par_iter().map(|_| AtomicBool::new(false)).collect();
    let in_range = g.edges.par_iter().with_min_len(1 << 12).all(|e| {
        let (u, v) = (e.u as usize, e.v as usize);
        if u >= n || v >= n {
            return false;
        }
        touched[u].store(true, Ordering::Relaxed);
        touched[v].store(true, Ordering::Relaxed);
        true
    });
    if !in_range {
        return None;
    }
    let touched: Vec<bool> = touched.into_par_iter().map(AtomicBool::into_inner).collect();
    let kept = touched.par_iter().with_min_len(1 << 12).filter(|&&t| t).count();
    if kept as f64 > max_share * n as f64 {
        return None;
    }
    Some(keep_vertices(g, &touched).0)
}

/// `g` with only the vertices `keep` marks, renumbered `0..k` in id order
/// (labels kept), and the old-to-new map (`None` for dropped ids). Edges
/// keep their order and labels. Runs on the current rayon pool. Behind
/// [`GraphData::compact_ids`] (the present vertices) and
/// [`without_isolated`] (the touched ones).
///
/// # Panics
/// If `keep` is shorter than `g`'s vertices or drops an edge's endpoint.
pub fn keep_vertices(g: &GraphData, keep: &[bool]) -> (GraphData, Vec<Option<VertexId>>) {
    let keep = &keep[..g.num_vertices()];
    // new ids: a count per block of vertices, then each block's prefix
    const BLOCK: usize = 1 << 14;
    let per_block: Vec<u32> = keep
        .par_chunks(BLOCK)
        .map(|c| c.iter().filter(|&&t| t).count() as u32)
        .collect();
    let kept: usize = per_block.iter().map(|&c| c as usize).sum();
    // each block's new ids and labels, its share of `labels` cut off in turn
    let mut labels: Vec<Label> = vec![0; kept];
    let mut parts = Vec::with_capacity(per_block.len());
    let (mut rest, mut start) = (&mut labels[..], 0u32);
    for &c in &per_block {
        let (part, tail) = rest.split_at_mut(c as usize);
        parts.push((part, start));
        (rest, start) = (tail, start + c);
    }
    let mut new_id: Vec<Option<VertexId>> = vec![None; keep.len()];
    new_id
        .par_chunks_mut(BLOCK)
        .zip(keep.par_chunks(BLOCK))
        .zip(g.labels.par_chunks(BLOCK))
        .zip(parts)
        .for_each(|(((ids, t), ls), (out, start))| {
            let mut k = 0;
            for ((id, &t), &l) in ids.iter_mut().zip(t).zip(ls) {
                if t {
                    *id = Some(start + k as u32);
                    out[k] = l;
                    k += 1;
                }
            }
        });
    let new = |x: VertexId| new_id[x as usize].expect("an edge endpoint is kept");
    let edges = g
        .edges
        .par_iter()
        .with_min_len(1 << 12)
        .map(|e| Edge::new(new(e.u), new(e.v), e.label))
        .collect();
    let g = GraphData {
        labels,
        edges,
        edge_labelled: g.edge_labelled,
    };
    (g, new_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ABSENT;

    fn edge(u: VertexId, v: VertexId, label: u32) -> Edge {
        Edge { u, v, label }
    }

    #[test]
    fn renumbers_touched_vertices_in_id_order() {
        // vertices 0..10; edges touch 2, 3, 7 and 9
        let g = GraphData {
            labels: vec![5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
            edges: vec![edge(7, 2, 1), edge(3, 9, 0), edge(2, 9, 4)],
            edge_labelled: true,
        };
        let c = without_isolated(&g, 0.5).expect("6 of 10 vertices dropped");
        assert_eq!(c.labels, vec![7, 8, 12, 14]);
        assert_eq!(c.edges, vec![edge(2, 0, 1), edge(1, 3, 0), edge(0, 3, 4)]);
        assert!(c.edge_labelled);
        // keeping 4 of 10 is more than a share of 0.3
        assert!(without_isolated(&g, 0.3).is_none());
    }

    #[test]
    fn spans_blocks_and_drops_absent_vertices() {
        // more vertices than one block, every 5th touched, some absent
        let n = 3 * (1 << 14) + 17;
        let mut labels: Vec<u32> = (0..n as u32).map(|v| v % 7).collect();
        for v in (1..n).step_by(5) {
            labels[v] = ABSENT;
        }
        let touched: Vec<VertexId> = (0..n as VertexId).step_by(5).collect();
        let edges: Vec<Edge> = touched.windows(2).map(|w| edge(w[0], w[1], 0)).collect();
        let g = GraphData {
            labels: labels.clone(),
            edges,
            edge_labelled: false,
        };
        let c = without_isolated(&g, 0.5).expect("4 in 5 dropped");
        assert_eq!(c.labels.len(), touched.len());
        for (k, &v) in touched.iter().enumerate() {
            assert_eq!(c.labels[k], labels[v as usize]);
        }
        for (k, e) in c.edges.iter().enumerate() {
            assert_eq!((e.u, e.v), (k as VertexId, k as VertexId + 1));
        }
    }

    #[test]
    fn declines_edges_past_the_vertices() {
        let g = GraphData {
            labels: vec![0; 8],
            edges: vec![edge(0, 1, 0), edge(1, 8, 0)],
            edge_labelled: false,
        };
        assert!(without_isolated(&g, 1.0).is_none());
    }
}
