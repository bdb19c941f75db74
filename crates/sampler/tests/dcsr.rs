//! The DCSR pack (GCSM Fig. 6): lists read back equal the raw lists (marks
//! included), absent vertices miss, and the pack is one allocation.

mod common;

use csm_graph::gen::{self, StreamAmount};
use csm_graph::view::MARK;
use csm_graph::{DynamicGraph, Edge, GraphData, GraphView, LocatedUpdate, Strictness, Update, Version, VertexId};
use csm_sampler::{DcsrError, DcsrPack, NO_APPENDED};

fn check(g: &DynamicGraph, cached: &[VertexId]) -> DcsrPack {
    let pack = DcsrPack::build(g, cached).unwrap();
    let mut rows = cached.to_vec();
    rows.sort_unstable();
    rows.dedup();
    assert_eq!(pack.rowidx(), &rows[..]);
    assert_eq!(pack.num_rows(), rows.len());
    for &v in &rows {
        let (a, b) = pack.lookup(v).expect("cached");
        let (ra, rb) = g.raw_list(v);
        assert_eq!((a, b), (ra, rb), "vertex {v}");
        if g.edge_labelled() {
            let (la, lb) = pack.lookup_labels(v).unwrap();
            let n = g.nbrs(v, Version::New);
            assert_eq!((la, lb), (n.base_labels, n.delta_labels));
        }
    }
    let cached_set: std::collections::HashSet<_> = rows.iter().copied().collect();
    for v in 0..g.num_vertices() as VertexId + 5 {
        if !cached_set.contains(&v) {
            assert!(pack.lookup(v).is_none() && !pack.contains(v), "absent vertex {v} found");
        }
    }
    // one contiguous allocation: every section lies inside the byte view
    let bytes = pack.as_bytes();
    assert_eq!(bytes.len(), pack.bytes());
    assert_eq!(pack.as_words().len() * 4, bytes.len());
    let base = bytes.as_ptr() as usize;
    for s in [pack.rowidx(), pack.rowptr(), pack.colidx(), pack.elabels()] {
        let p = s.as_ptr() as usize;
        assert!(p >= base && p + 4 * s.len() <= base + bytes.len());
    }
    let lay = pack.layout();
    assert_eq!(lay.rowidx.end, lay.rowptr.start);
    assert_eq!(lay.rowptr.end, lay.colidx.start);
    assert_eq!(lay.colidx.end, lay.elabels.start);
    assert_eq!(lay.elabels.end, pack.as_words().len());
    // the final rowptr entry is colidx's length
    assert_eq!(*pack.rowptr().last().unwrap() as usize, pack.colidx().len());
    assert_eq!(pack.rowptr().len(), 2 * rows.len() + 1);
    pack
}

#[test]
fn figure_6_example() {
    // GCSM Fig. 5/6 in spirit: v3 gains a neighbour, v4 loses one
    let data = GraphData {
        labels: vec![0; 7],
        edges: vec![Edge::new(3, 2, 0).normalized(), Edge::new(4, 5, 0), Edge::new(4, 6, 0)],
        edge_labelled: false,
    };
    let mut g = DynamicGraph::from_data(&data).unwrap();
    let up = [
        LocatedUpdate {
            line: 1,
            update: Update::AddEdge(Edge::new(1, 3, 0)),
        },
        LocatedUpdate {
            line: 2,
            update: Update::RemoveEdge(Edge::new(4, 6, 0)),
        },
    ];
    g.stage(&up, "<t>", Strictness::Strict).unwrap();
    let pack = check(&g, &[4, 3]);
    assert_eq!(pack.rowidx(), &[3, 4]);
    // v3: [2 | 1]: starts at 0, appended part at 1; v4: [5, 6*]: at 2, none
    assert_eq!(pack.rowptr(), &[0, 1, 2, NO_APPENDED, 4]);
    assert_eq!(pack.colidx(), &[2, 1, 5, 6 | MARK]);
    assert_eq!(pack.bytes(), DcsrPack::EMPTY_BYTES + 2 * DcsrPack::row_bytes(2, false));
    assert_eq!(pack.lookup(3).unwrap(), (&[2u32][..], &[1u32][..]));
    assert_eq!(pack.lookup(4).unwrap(), (&[5u32, 6 | MARK][..], &[][..]));
}

#[test]
fn generated_batches_round_trip() {
    for labelled in [false, true] {
        let pairs = gen::erdos_renyi(400, 3000, 21);
        let data = gen::graph_from_pairs(400, &pairs, vec![0; 400], labelled.then_some((3, 4)));
        let (g0, stream) = gen::make_stream(&data, StreamAmount::Count(600), 0.5, 2);
        let mut g = DynamicGraph::from_data(&g0).unwrap();
        for batch in stream.chunks(200) {
            g.stage(batch, "<t>", Strictness::Strict).unwrap();
            // touched lists (marks and appended parts) plus untouched ones
            let mut cached: Vec<VertexId> = g.touched().iter().copied().step_by(2).collect();
            cached.extend((0..400).step_by(7));
            cached.push(cached[0]); // repeats are ignored
            let pack = check(&g, &cached);
            assert!(
                pack.colidx().iter().any(|&x| x & MARK != 0),
                "no marked entry exercised"
            );
            assert!(
                pack.rowptr().chunks(2).any(|p| p.len() == 2 && p[1] != NO_APPENDED),
                "no appended part exercised"
            );
            assert_eq!(pack.elabels().is_empty(), !labelled);
            check(&g, &[]);
            g.commit();
        }
        assert_eq!(DcsrPack::build(&g, &[400]), Err(DcsrError::UnknownVertex(400)));
    }
}
