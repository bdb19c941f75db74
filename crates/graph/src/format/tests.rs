//! Round-trips, detection and file I/O across the formats.

use super::*;
use crate::ids::IdPolicy;
use crate::types::{Edge, Update, ABSENT};
use proptest::prelude::*;
use std::collections::HashSet;

/// A valid graph: no loops, no duplicate pairs, edges between present
/// vertices, the last label present (trailing absent slots are not
/// representable), `edge_labelled` only with edges.
fn arb_graph() -> impl Strategy<Value = GraphData> {
    (1usize..30, any::<bool>()).prop_flat_map(|(n, labelled)| {
        (
            proptest::collection::vec(prop_oneof![4 => 0u32..5, 1 => Just(ABSENT)], n),
            proptest::collection::vec((0..n as u32, 0..n as u32, 0u32..4), 0..60),
            Just(labelled),
        )
            .prop_map(|(mut labels, raw, labelled)| {
                while labels.last() == Some(&ABSENT) {
                    labels.pop();
                }
                let mut seen = HashSet::new();
                let edges: Vec<Edge> = raw
                    .into_iter()
                    .filter(|&(u, v, _)| {
                        u != v
                            && labels.get(u as usize).is_some_and(|&l| l != ABSENT)
                            && labels.get(v as usize).is_some_and(|&l| l != ABSENT)
                            && seen.insert((u.min(v), u.max(v)))
                    })
                    .map(|(u, v, l)| Edge::new(u, v, if labelled { l } else { 0 }))
                    .collect();
                let edge_labelled = labelled && !edges.is_empty();
                GraphData {
                    labels,
                    edges,
                    edge_labelled,
                }
            })
    })
}

fn arb_update() -> impl Strategy<Value = Update> {
    let edge = (0u32..1000, 0u32..1000, 0u32..3)
        .prop_filter("no loops", |(u, v, _)| u != v)
        .prop_map(|(u, v, l)| Edge::new(u, v, l));
    prop_oneof![
        (0u32..1000, 0u32..9).prop_map(|(id, label)| Update::AddVertex { id, label }),
        (0u32..1000, proptest::option::of(0u32..50)).prop_map(|(id, label)| Update::RemoveVertex { id, label }),
        edge.clone().prop_map(Update::AddEdge),
        edge.prop_map(Update::RemoveEdge),
    ]
}

fn to_string(g: &GraphData, f: Format) -> String {
    let mut out = Vec::new();
    write_graph(g, f, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn graph_and_csm_round_trip(g in arb_graph()) {
        for f in [Format::Graph, Format::Csm] {
            let text = to_string(&g, f);
            let (back, report) = read_graph(&text, "rt", Some(f), &ReadOptions::default()).unwrap();
            // The csm writer labels every edge (0 without edge labels).
            let mut want = g.clone();
            want.edge_labelled |= f == Format::Csm && !g.edges.is_empty();
            prop_assert_eq!(&back, &want);
            prop_assert_eq!(report, ReadReport::default());
            if !g.labels.is_empty() {
                prop_assert_eq!(detect_format(&text).unwrap(), f);
            }
        }
    }

    #[test]
    fn snap_round_trip(g in arb_graph()) {
        let text = to_string(&g, Format::Snap);
        let (back, _) = read_graph(&text, "rt", Some(Format::Snap), &ReadOptions::default()).unwrap();
        let mut want: Vec<(u32, u32)> = g.edges.iter().map(Edge::key).collect();
        want.sort_unstable();
        let got: Vec<(u32, u32)> = back.edges.iter().map(|e| (e.u, e.v)).collect();
        prop_assert_eq!(got, want);
        for (id, &l) in back.labels.iter().enumerate() {
            let touched = g.edges.iter().any(|e| e.u as usize == id || e.v as usize == id);
            prop_assert_eq!(l != ABSENT, touched);
        }
        if !g.edges.is_empty() {
            prop_assert_eq!(detect_format(&text).unwrap(), Format::Snap);
        }
    }

    #[test]
    fn updates_round_trip(us in proptest::collection::vec(arb_update(), 0..50)) {
        let mut out = Vec::new();
        write_updates(&us, &mut out).unwrap();
        let back = read_updates(std::str::from_utf8(&out).unwrap(), "s").unwrap();
        let plain: Vec<Update> = back.iter().map(|lu| lu.update).collect();
        prop_assert_eq!(plain, us);
        prop_assert!(back.iter().enumerate().all(|(i, lu)| lu.line == i + 1));
    }
}

#[test]
fn format_names() {
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>(), Ok(f));
        assert_eq!(f.to_string(), f.name());
    }
    assert_eq!("SNAP".parse::<Format>(), Ok(Format::Snap));
    assert!("gml".parse::<Format>().is_err());
}

#[test]
fn read_graph_detects_and_names_source() {
    let (g, _) = read_graph("t 1 0\nv 0 3 0\n", "a", None, &ReadOptions::default()).unwrap();
    assert_eq!(g.labels, vec![3]);
    let (g, _) = read_graph("0 1\n", "a", None, &ReadOptions::default()).unwrap();
    assert_eq!(g.edges.len(), 1);
    let e = read_graph("what\n", "a.txt", None, &ReadOptions::default()).unwrap_err();
    assert_eq!((e.source_name.as_str(), e.line), ("a.txt", 1));
    assert!(matches!(e.kind, ErrorKind::UnknownFormat(_)));
    // An explicit format overrides detection.
    let e = read_graph("0 1\n", "a", Some(Format::Csm), &ReadOptions::default()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Malformed(_)));
}

#[test]
fn files_and_io_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.graph");
    let g = GraphData {
        labels: vec![1, 2, 3],
        edges: vec![Edge::new(0, 2, 0)],
        edge_labelled: false,
    };
    write_graph(&g, Format::Graph, std::fs::File::create(&p).unwrap()).unwrap();
    let (back, _) = read_graph_file(&p, None, &ReadOptions::default()).unwrap();
    assert_eq!(back, g);
    let s = dir.path().join("s.stream");
    let us = [
        Update::AddEdge(Edge::new(0, 1, 0)),
        Update::RemoveVertex { id: 2, label: None },
    ];
    write_updates(&us, std::fs::File::create(&s).unwrap()).unwrap();
    let back = read_updates_file(&s).unwrap();
    assert_eq!(back.len(), 2);
    let missing = dir.path().join("nope");
    let e = read_graph_file(&missing, None, &ReadOptions::default()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Io(_)));
    assert!(e.source_name.ends_with("nope"));
    assert!(matches!(
        read_updates_file(&missing).unwrap_err().kind,
        ErrorKind::Io(_)
    ));
    // A bad line in a file names the path.
    std::fs::write(&s, "e 1 2\n-e 3\n").unwrap();
    let e = read_updates_file(&s).unwrap_err();
    assert_eq!((e.source_name, e.line), (s.display().to_string(), 2));
}

/// The shared data set, when present. The SNAP header claims 36,692 nodes and
/// 367,662 directed edges, but the published file has 367,660 lines: 183,830
/// undirected pairs (each in both directions) over 36,691 node ids.
#[test]
fn email_enron_if_present() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/email-Enron.txt");
    if !std::path::Path::new(path).exists() {
        return;
    }
    let (g, r) = read_graph_file(path, None, &ReadOptions::default()).unwrap();
    assert_eq!(g.labels.iter().filter(|&&l| l != ABSENT).count(), 36_691);
    assert_eq!(g.edges.len(), 183_830);
    assert_eq!(r.duplicates_folded, 183_830);
    assert_eq!(r.self_loops, 0);
}

/// Every csm-format edge line has four fields, as the study's readers
/// (RapidFlow's among them) need; the graph format keeps unlabelled edges bare.
#[test]
fn csm_writer_labels_every_edge() {
    let g = GraphData {
        labels: vec![1, 2, 3],
        edges: vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)],
        edge_labelled: false,
    };
    let text = to_string(&g, Format::Csm);
    assert_eq!(text, "v 0 1\nv 1 2\nv 2 3\ne 0 1 0\ne 1 2 0\n");
    assert!(to_string(&g, Format::Graph).contains("\ne 0 1\n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Compacting ids keeps labels and edges under one monotone map onto
    /// `0..N-1`, checked edge by edge against the original.
    #[test]
    fn compact_ids_renumbers_present_vertices(g in arb_graph()) {
        let (c, map) = g.compact_ids();
        prop_assert!(!c.has_id_gaps());
        let present: Vec<u32> = (0..g.labels.len() as u32).filter(|&v| g.labels[v as usize] != ABSENT).collect();
        prop_assert_eq!(c.labels.len(), present.len());
        for (new, &old) in present.iter().enumerate() {
            prop_assert_eq!(map[old as usize], Some(new as u32));
            prop_assert_eq!(c.labels[new], g.labels[old as usize]);
        }
        prop_assert_eq!(c.edges.len(), g.edges.len());
        for (a, b) in g.edges.iter().zip(&c.edges) {
            prop_assert_eq!(c.labels[b.u as usize], g.labels[a.u as usize]);
            prop_assert_eq!((present[b.u as usize], present[b.v as usize], b.label), (a.u, a.v, a.label));
        }
        prop_assert_eq!(c.edge_labelled, g.edge_labelled);
    }
}

/// `g`'s text in `f` with every id `i` written as `i * stride + offset`
/// (ids far apart, as in a crawl), written line by line, not by the writers;
/// `reversed` declares the vertices in descending id order.
fn spread_text(g: &GraphData, f: Format, stride: u32, offset: u32, reversed: bool) -> String {
    let id = |x: u32| x * stride + offset;
    let mut deg = vec![0u32; g.labels.len()];
    for e in &g.edges {
        deg[e.u as usize] += 1;
        deg[e.v as usize] += 1;
    }
    let mut present: Vec<u32> = (0..g.labels.len() as u32)
        .filter(|&v| g.labels[v as usize] != ABSENT)
        .collect();
    if reversed {
        present.reverse();
    }
    let mut s = String::new();
    if f == Format::Graph {
        s += &format!("t {} {}\n", present.len(), g.edges.len());
    }
    if f != Format::Snap {
        for &v in &present {
            match f {
                Format::Graph => s += &format!("v {} {} {}\n", id(v), g.labels[v as usize], deg[v as usize]),
                _ => s += &format!("v {} {}\n", id(v), g.labels[v as usize]),
            }
        }
    }
    for e in &g.edges {
        match (f, g.edge_labelled) {
            (Format::Snap, _) => s += &format!("{} {}\n", id(e.u), id(e.v)),
            (_, true) => s += &format!("e {} {} {}\n", id(e.u), id(e.v), e.label),
            (_, false) => s += &format!("e {} {}\n", id(e.u), id(e.v)),
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A file whose ids are spread far apart reads, renumbered, as the
    /// graph with dense ids compacted by [`GraphData::compact_ids`], and the
    /// map gives back the file's ids; keeping the ids fails with a named
    /// error exactly where they are too sparse, and `auto` renumbers exactly
    /// there.
    #[test]
    fn spread_ids_read_as_the_compacted_dense_graph(
        g in arb_graph(),
        stride in prop_oneof![Just(1u32), Just(5), Just(1 << 19), Just(1 << 21), Just(1 << 26)],
        offset in 0u32..1000,
        f in prop_oneof![Just(Format::Graph), Just(Format::Csm), Just(Format::Snap)],
        reversed in any::<bool>(),
    ) {
        let labeller = if stride <= 5 && f == Format::Snap {
            Labeller::Uniform { num_labels: 3, seed: u64::from(offset) }
        } else {
            Labeller::Constant
        };
        let opts = |ids| ReadOptions { ids, labeller: labeller.clone(), ..Default::default() };
        let dense = read_graph(&spread_text(&g, f, 1, 0, false), "d", Some(f), &opts(IdPolicy::Keep)).unwrap().0;
        let text = spread_text(&g, f, stride, offset, reversed);
        let (c, r) = read_graph(&text, "s", Some(f), &opts(IdPolicy::Compact)).unwrap();
        let (mut want, old_to_new) = dense.compact_ids();
        if labeller != Labeller::Constant {
            // SNAP's labels are drawn by the file's ids
            let all = crate::gen::assign_labels((30 * stride + offset) as usize, &labeller);
            let present = old_to_new.iter().enumerate().filter(|(_, n)| n.is_some());
            want.labels = present.map(|(old, _)| all[old * stride as usize + offset as usize]).collect();
        }
        prop_assert_eq!(&c, &want);
        let map = r.id_map.unwrap();
        prop_assert_eq!(map.len(), want.labels.len());
        for (old, new) in old_to_new.iter().enumerate() {
            if let Some(new) = new {
                prop_assert_eq!(map.original(*new), old as u32 * stride + offset);
            }
        }
        let max_id = dense.labels.len().saturating_sub(1) as u32 * stride + offset;
        let most = match f {
            Format::Snap => want.labels.len() as u64,
            _ => text.len() as u64 / 6 + 1,
        };
        let sparse = !want.labels.is_empty() && crate::ids::too_sparse(max_id, most);
        let kept = read_graph(&text, "s", Some(f), &opts(IdPolicy::Keep));
        let auto = read_graph(&text, "s", Some(f), &opts(IdPolicy::CompactIfSparse)).unwrap();
        if sparse {
            let e = kept.unwrap_err();
            prop_assert!(matches!(e.kind, ErrorKind::SparseIds { .. }), "{}", e);
            prop_assert_eq!(auto.0, want);
            prop_assert!(auto.1.id_map.is_some());
        } else {
            let kept = kept.unwrap();
            prop_assert_eq!(&auto, &kept);
            prop_assert!(auto.1.id_map.is_none());
            if stride == 1 && offset == 0 && !reversed {
                prop_assert_eq!(kept.0, dense);
            }
        }
    }
}

/// Errors of a renumbering read name the file's ids.
#[test]
fn renumbering_reads_name_the_file_ids() {
    let opts = ReadOptions {
        ids: IdPolicy::Compact,
        ..Default::default()
    };
    let e = read_csm_graph("v 900000000 1\nv 7 2\ne 7 900000000\ne 900000000 7\n", "c", &opts).unwrap_err();
    assert_eq!((e.line, e.kind), (4, ErrorKind::DuplicateEdge(900_000_000, 7)));
    let e = read_csm_graph("v 900000000 1\nv 900000000 2\n", "c", &opts).unwrap_err();
    assert_eq!((e.line, e.kind), (2, ErrorKind::DuplicateVertex(900_000_000)));
    let e = read_csm_graph("v 900000000 1\ne 900000000 8\n", "c", &opts).unwrap_err();
    assert_eq!((e.line, e.kind), (2, ErrorKind::UnknownVertex(8)));
    let e = read_graph_format("t 2 1\nv 900000000 1 1\nv 7 2 2\ne 7 900000000\n", "g", &opts).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.kind.to_string().contains("vertex 7 declares degree 2"), "{e}");
    // the default keeps the ids, and names the line of a sparse one
    let e = read_csm_graph("v 1 1\nv 900000000 1\n", "c", &ReadOptions::default()).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(matches!(e.kind, ErrorKind::SparseIds { id: 900_000_000, .. }));
    let e = read_snap("1 2\n2 900000000\n", "s", &ReadOptions::default()).unwrap_err();
    assert_eq!(
        (e.line, e.kind),
        (
            2,
            ErrorKind::SparseIds {
                id: 900_000_000,
                vertices: 3
            }
        )
    );
}
