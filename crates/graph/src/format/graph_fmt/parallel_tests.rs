//! The records read on the pool ([`super::parallel`]) against the
//! sequential loop: the same graph, report or error for every file, in
//! both dialects, strict and lenient, under every id policy and cut.

use super::{parallel, read_ve_with, Builder, Dialect};
use crate::format::pieces::{Cut, Pool};
use crate::format::ReadOptions;
use crate::ids::IdPolicy;
use proptest::prelude::*;

/// A valid graph file: `n` vertices, the given edges (pairs folded and
/// deduplicated, loops dropped), degrees declared, optional edge labels.
fn valid(n: u32, pairs: &[(u32, u32, u32)], labelled: bool, header: bool) -> Vec<String> {
    let mut edges: Vec<(u32, u32, u32)> = pairs
        .iter()
        .map(|&(u, v, l)| (u % n, v % n, l))
        .filter(|&(u, v, _)| u != v)
        .collect();
    edges.sort_by_key(|&(u, v, _)| (u.min(v), u.max(v)));
    edges.dedup_by_key(|&mut (u, v, _)| (u.min(v), u.max(v)));
    let mut degree = vec![0u32; n as usize];
    for &(u, v, _) in &edges {
        degree[u as usize] += 1;
        degree[v as usize] += 1;
    }
    let mut lines = Vec::new();
    if header {
        lines.push(format!("t {n} {}", edges.len()));
    }
    for x in 0..n {
        lines.push(format!("v {x} {} {}", x % 3, degree[x as usize]));
    }
    for (u, v, l) in edges {
        lines.push(if labelled {
            format!("e {u} {v} {l}")
        } else {
            format!("e {u} {v}")
        });
    }
    lines
}

/// Lines a mutation may insert: usual and unusual shapes, bad records,
/// blanks and comments.
fn odd_line(kind: u8, a: u32, b: u32) -> String {
    match kind % 20 {
        0 => String::new(),
        1 => "# a comment".into(),
        2 => "% another".into(),
        3 => format!("e {a} {b}"),
        4 => format!("e {a} {a}"),
        5 => format!("v {a} 1 0"),
        6 => format!("v {a} 1"),
        7 => format!("  e\t{a}  {b} \r"),
        8 => format!("e {a} {b} 7"),
        9 => "e 1".into(),
        10 => format!("e {a} 4294967296"),
        11 => format!("v {} 2 0", 3_000_000_000u32 + a),
        12 => "x 1 2".into(),
        13 => format!("-e {a} {b}"),
        14 => "t 3 3".into(),
        15 => format!("e\u{2003}{a} {b}"),
        16 => format!("\u{a0}e {a} {b}"),
        17 => format!("e {a} {b}x"),
        18 => format!("e 0{a} 00{b}"),
        _ => format!("v {a} 99999999999999999999"),
    }
}

fn compare(text: &str, dialect: Dialect) {
    for lenient in [false, true] {
        for ids in [IdPolicy::Keep, IdPolicy::CompactIfSparse, IdPolicy::Compact] {
            let opts = ReadOptions {
                lenient,
                ids,
                ..ReadOptions::default()
            };
            let want = read_ve_with(text, "g", &opts, dialect, Pool::Never);
            for pieces in [1, 2, 3, 7] {
                let got = read_ve_with(text, "g", &opts, dialect, Pool::Always(Cut { pieces }));
                assert_eq!(got, want, "lenient {lenient}, {ids:?}, {pieces} pieces, file:\n{text}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn pool_reads_as_the_loop(
        n in 1u32..12,
        pairs in prop::collection::vec((0u32..12, 0u32..12, 0u32..4), 0..30),
        labelled in any::<bool>(),
        csm in any::<bool>(),
        edits in prop::collection::vec((0u8..4, any::<prop::sample::Index>(), any::<u8>(), 0u32..14, 0u32..14), 0..3),
        crlf in any::<bool>(),
        bom in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let dialect = if csm { Dialect::Csm } else { Dialect::Graph };
        let mut lines = valid(n, &pairs, labelled, !csm);
        for (op, at, kind, a, b) in edits {
            let i = at.index(lines.len() + 1);
            match op {
                // insert an odd line
                0 | 1 => lines.insert(i, odd_line(kind, a, b)),
                // drop a line
                2 if i < lines.len() => {
                    lines.remove(i);
                }
                // move a line to the end (an edge before a vertex, a
                // vertex after the edges)
                _ if i < lines.len() => {
                    let l = lines.remove(i);
                    lines.push(l);
                }
                _ => {}
            }
        }
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut text = if bom { "\u{feff}".to_string() } else { String::new() };
        text += &lines.join(eol);
        if final_newline {
            text += eol;
        }
        compare(&text, dialect);
    }
}

#[test]
fn a_large_file_is_read_on_the_pool_alike() {
    let pairs: Vec<(u32, u32, u32)> = (0..4000u32).map(|i| (i * 7 % 500, i * 13 % 499 + 1, i % 5)).collect();
    for labelled in [false, true] {
        let text = valid(500, &pairs, labelled, true).join("\n") + "\n";
        compare(&text, Dialect::Graph);
        // (and the pool did read it)
        let records = &text[text.find('\n').unwrap() + 1..];
        for pieces in [1, 4] {
            let mut b = Builder::new(0, 0, IdPolicy::Keep, text.len());
            assert!(parallel::records(records, 2, Cut { pieces }, &mut b));
            assert_eq!((b.edges.len(), b.edge_labelled), (3961, labelled));
        }
        // a repeated pair near the end: the loop names its line
        let text = format!("{text}e 3 4\ne 4 3\n");
        compare(&text, Dialect::Graph);
    }
}
