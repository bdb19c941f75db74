//! The CSM-study formats (Sun & Luo's continuous subgraph matching study, as
//! used by RapidFlow's update streams).
//!
//! Graph files: `v <id> <label>` and `e <u> <v> [<label>]` lines, no header
//! (an optional fourth `v` field is taken as a degree and checked, as in the
//! graph format). Same strictness rules as [`super::graph_fmt`].
//!
//! Update streams, one update per line:
//!
//! ```text
//! v <id> <label>        add a vertex
//! -v <id> [<label>]     remove a vertex (and every edge still on it)
//! e <u> <v> [<label>]   add an edge (label defaults to 0)
//! -e <u> <v> [<label>]  remove an edge
//! ```
//!
//! Whether an update applies (the edge exists, a deletion names the stored
//! label, …) depends on the graph and is checked by the store; the reader
//! only rejects lines that can never be valid (syntax, oversized ids,
//! self-loops). A deletion's edge label is checked only in a graph with
//! edge labels (omitted, it reads as 0, as for an insertion); `-v <id>`
//! without a label is not checked.

use super::graph_fmt::{read_ve, write_ve, Dialect};
use super::lex::{data_lines, malformed, parse_id, parse_label, Fields, MAX_REPORTED_ERRORS};
use super::{ReadOptions, ReadReport};
use crate::error::{ErrorKind, InputError};
use crate::types::{Edge, GraphData, LocatedUpdate, Update, NO_EDGE_LABEL};
use std::io::{self, Write};

/// Reads a CSM-study graph file.
pub fn read_csm_graph(
    content: &str,
    source_name: &str,
    opts: &ReadOptions,
) -> Result<(GraphData, ReadReport), InputError> {
    read_ve(content, source_name, opts, Dialect::Csm)
}

/// Writes `g` as `v id label` and `e u v label` lines. Every edge line
/// carries its label (0 on a graph without edge labels): the study's own
/// readers, RapidFlow's among them, need the fourth field and misread lines
/// without it. Reading such a file back gives an edge-labelled graph whose
/// labels are all 0, which matches exactly as the unlabelled one.
pub fn write_csm_graph(g: &GraphData, w: &mut impl Write) -> io::Result<()> {
    write_ve(g, false, true, w)
}

fn edge_update(f: &Fields, tok: &str) -> Result<Edge, ErrorKind> {
    if !(3..=4).contains(&f.n) {
        return Err(malformed(format!(
            "`{tok}` line needs `{tok} <u> <v> [<label>]`, found {} fields",
            f.n
        )));
    }
    let u = parse_id(f.get(1), "vertex id")?;
    let v = parse_id(f.get(2), "vertex id")?;
    let label = if f.n == 4 {
        parse_label(f.get(3), "edge label")?
    } else {
        NO_EDGE_LABEL
    };
    if u == v {
        return Err(ErrorKind::SelfLoop(u));
    }
    Ok(Edge::new(u, v, label))
}

fn parse_update(f: &Fields) -> Result<Update, ErrorKind> {
    match f.get(0) {
        "v" => {
            if f.n != 3 {
                return Err(malformed(format!(
                    "`v` line needs `v <id> <label>`, found {} fields",
                    f.n
                )));
            }
            let id = parse_id(f.get(1), "vertex id")?;
            let label = parse_label(f.get(2), "vertex label")?;
            Ok(Update::AddVertex { id, label })
        }
        "-v" => {
            if !(2..=3).contains(&f.n) {
                return Err(malformed(format!(
                    "`-v` line needs `-v <id> [<label>]`, found {} fields",
                    f.n
                )));
            }
            let id = parse_id(f.get(1), "vertex id")?;
            let label = if f.n == 3 {
                Some(parse_label(f.get(2), "vertex label")?)
            } else {
                None
            };
            Ok(Update::RemoveVertex { id, label })
        }
        "e" => edge_update(f, "e").map(Update::AddEdge),
        "-e" => edge_update(f, "-e").map(Update::RemoveEdge),
        tok => Err(malformed(format!("unknown update `{tok}` (expected v, -v, e or -e)"))),
    }
}

/// Reads an update stream; each update carries its 1-based line number.
/// The first bad line is an error naming `source_name` and the line.
pub fn read_updates(content: &str, source_name: &str) -> Result<Vec<LocatedUpdate>, InputError> {
    data_lines(content)
        .map(|(line, text)| {
            parse_update(&Fields::split(text))
                .map(|update| LocatedUpdate { line, update })
                .map_err(|k| InputError::new(source_name, line, k))
        })
        .collect()
}

/// [`read_updates`] in lenient mode: lines that can never be valid
/// (syntax, oversized ids, self-loops) are skipped and counted in the
/// report (`skipped`, and the first [`MAX_REPORTED_ERRORS`] of them in
/// `first_errors`) instead of ending the read.
pub fn read_updates_lenient(content: &str, source_name: &str) -> (Vec<LocatedUpdate>, ReadReport) {
    let mut report = ReadReport::default();
    let mut updates = Vec::new();
    for (line, text) in data_lines(content) {
        match parse_update(&Fields::split(text)) {
            Ok(update) => updates.push(LocatedUpdate { line, update }),
            Err(k) => {
                report.skipped += 1;
                if report.first_errors.len() < MAX_REPORTED_ERRORS {
                    report.first_errors.push(InputError::new(source_name, line, k));
                }
            }
        }
    }
    (updates, report)
}

/// Writes an update stream (`v id label`, `-v id [label]`, `e u v label`,
/// `-e u v label`), unbuffered; see [`super::write_updates`].
pub fn write_update_lines(updates: &[Update], w: &mut impl Write) -> io::Result<()> {
    for u in updates {
        match *u {
            Update::AddVertex { id, label } => writeln!(w, "v {id} {label}")?,
            Update::RemoveVertex { id, label: None } => writeln!(w, "-v {id}")?,
            Update::RemoveVertex { id, label: Some(l) } => writeln!(w, "-v {id} {l}")?,
            Update::AddEdge(e) => writeln!(w, "e {} {} {}", e.u, e.v, e.label)?,
            Update::RemoveEdge(e) => writeln!(w, "-e {} {} {}", e.u, e.v, e.label)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ABSENT;

    #[test]
    fn lenient_updates_skip_and_name_unreadable_lines() {
        let c = "e 0 1 2\ne 3 3 0\nv 4\n-e 1 0\nx 1 2\nv 5 1\n";
        let (ups, report) = read_updates_lenient(c, "s");
        let lines: Vec<usize> = ups.iter().map(|u| u.line).collect();
        assert_eq!(lines, vec![1, 4, 6]);
        assert_eq!(ups[2].update, Update::AddVertex { id: 5, label: 1 });
        assert_eq!(report.skipped, 3);
        let bad: Vec<(usize, bool)> = (report.first_errors.iter())
            .map(|e| (e.line, e.kind == ErrorKind::SelfLoop(3)))
            .collect();
        assert_eq!(bad, vec![(2, true), (3, false), (5, false)]);
        // strict reading stops at the first of them
        assert_eq!(read_updates(c, "s").unwrap_err().line, 2);
        // past the reported errors, lines are still counted
        let many = "e 1 1\n".repeat(MAX_REPORTED_ERRORS + 4);
        let (ups, report) = read_updates_lenient(&many, "s");
        assert!(ups.is_empty());
        assert_eq!(
            (report.skipped, report.first_errors.len()),
            (MAX_REPORTED_ERRORS + 4, MAX_REPORTED_ERRORS)
        );
    }

    #[test]
    fn reads_csm_graph() {
        let c = "v 0 1\nv 2 3\ne 0 2 5\n";
        let (g, _) = read_csm_graph(c, "d", &ReadOptions::default()).unwrap();
        assert_eq!(g.labels, vec![1, ABSENT, 3]);
        assert_eq!(g.edges, vec![Edge::new(0, 2, 5)]);
        assert!(g.edge_labelled);
        let e = read_csm_graph("v 0 1\nt 1 0\n", "d", &ReadOptions::default()).unwrap_err();
        assert_eq!(e.line, 2);
        let e = read_csm_graph("v 0 1\n-e 0 1\n", "d", &ReadOptions::default()).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("update record")));
        let e = read_csm_graph("v 0 1\nv 1 1\ne 0 1\ne 0 1 0\n", "d", &ReadOptions::default()).unwrap_err();
        assert_eq!((e.line, e.kind), (4, ErrorKind::DuplicateEdge(0, 1)));
    }

    #[test]
    fn reads_updates_with_lines() {
        let c = "v 5 1\n# c\ne 1 5\n-e 1 5 2\n\n-v 5 1\n-v 6\n";
        let u = read_updates(c, "s").unwrap();
        let want = vec![
            LocatedUpdate {
                line: 1,
                update: Update::AddVertex { id: 5, label: 1 },
            },
            LocatedUpdate {
                line: 3,
                update: Update::AddEdge(Edge::new(1, 5, 0)),
            },
            LocatedUpdate {
                line: 4,
                update: Update::RemoveEdge(Edge::new(1, 5, 2)),
            },
            LocatedUpdate {
                line: 6,
                update: Update::RemoveVertex { id: 5, label: Some(1) },
            },
            LocatedUpdate {
                line: 7,
                update: Update::RemoveVertex { id: 6, label: None },
            },
        ];
        assert_eq!(u, want);
    }

    #[test]
    fn update_errors() {
        let cases: &[(&str, usize)] = &[
            ("e 1 2\nv 1\n", 2),
            ("e 1 2\ne 1 2 3 4\n", 2),
            ("x 1 2\n", 1),
            ("\n\n-e 1 a\n", 3),
            ("-v\n", 1),
        ];
        for &(c, line) in cases {
            let e = read_updates(c, "s").unwrap_err();
            assert_eq!(e.line, line, "{c:?}");
            assert!(matches!(e.kind, ErrorKind::Malformed(_)), "{c:?}");
        }
        let e = read_updates("e 1 1\n", "s").unwrap_err();
        assert_eq!(e.kind, ErrorKind::SelfLoop(1));
        let e = read_updates("e 1 2\n-e 1 4294967296\n", "s").unwrap_err();
        assert_eq!((e.line, e.kind), (2, ErrorKind::VertexIdTooLarge(4294967296)));
    }
}
