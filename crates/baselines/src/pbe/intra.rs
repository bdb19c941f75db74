//! Intra-partition search (paper 003 Sec. 3.1): each part is the induced
//! subgraph on its vertex set, loaded on its own (as PBE loads one
//! partition into GPU memory at a time) and searched with one search
//! sequence Q_a by [`super::search::Enumerator`]. Every instance whose
//! vertices all lie in one part is found exactly once, in that part.

use csm_graph::{CsrGraph, Edge, GraphView, Label, VertexId, ABSENT};

use super::plan::SearchSeq;
use super::search::{Enumerator, Found, Sink};

/// Per-part figures.
#[derive(Clone, Debug, Default)]
pub struct IntraResult {
    pub found: Found,
    /// Edges of each part's induced subgraph.
    pub part_edges: Vec<usize>,
}

/// The induced subgraph on `verts` (ascending global ids), with local ids
/// `0..verts.len()`; `local` maps global → local and must hold this part's
/// entries (other entries are ignored).
fn induced(g: &CsrGraph, verts: &[VertexId], parts: &[u32], part: u32, local: &[u32]) -> CsrGraph {
    let labels: Vec<Label> = verts.iter().map(|&v| g.labels()[v as usize]).collect();
    let mut edges = Vec::new();
    for (i, &v) in verts.iter().enumerate() {
        let el = g.edge_labels(v);
        for (j, &u) in g.neighbors(v).iter().enumerate() {
            if u > v && parts[u as usize] == part {
                edges.push(Edge::new(
                    i as VertexId,
                    local[u as usize],
                    el.get(j).copied().unwrap_or(0),
                ));
            }
        }
    }
    CsrGraph::from_parts(&labels, &edges, g.edge_labelled(), "<partition>")
        .expect("an induced subgraph of a valid graph is valid")
}

/// Counts (and optionally emits, in search order with global ids) the
/// instances inside each of the `num_parts` parts.
pub fn intra(
    g: &CsrGraph,
    parts: &[u32],
    num_parts: usize,
    seq: &SearchSeq,
    cap: usize,
    sink: Option<Sink<'_>>,
) -> IntraResult {
    let mut members: Vec<Vec<VertexId>> = vec![Vec::new(); num_parts];
    for (v, &p) in parts.iter().enumerate() {
        if g.labels()[v] != ABSENT {
            members[p as usize].push(v as VertexId);
        }
    }
    let mut local = vec![u32::MAX; parts.len()];
    let mut out = IntraResult::default();
    for (p, verts) in members.iter().enumerate() {
        for (i, &v) in verts.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        let pg = induced(g, verts, parts, p as u32, &local);
        out.part_edges.push(pg.num_edges());
        let seeds: Vec<VertexId> = (0..verts.len() as VertexId)
            .filter(|&v| pg.labels()[v as usize] == seq.labels[0])
            .collect();
        let to_global = |f: &[VertexId]| {
            if let Some(sink) = sink {
                let gf: Vec<VertexId> = f.iter().map(|&x| verts[x as usize]).collect();
                sink(&gf);
            }
        };
        let e = Enumerator {
            g: &pg,
            seq,
            dup: None,
            cap,
            sink: sink.map(|_| &to_global as Sink<'_>),
        };
        out.found = out.found + e.run(1, &seeds);
    }
    out
}
