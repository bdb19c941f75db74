//! The record loop of [`super::read_ve`] on rayon's pool, for large files.
//!
//! The text after the header is cut into pieces at line ends. A first pass
//! over the pieces reads every `v` line and counts the `e` lines and line
//! ends; the vertices are then entered in file order; a second pass parses
//! each piece's `e` lines straight into its window of the edge array and
//! checks their endpoints. Degrees are counted afterwards, without atomics.
//! Lines of the usual shape (`v`/`e`, blanks, decimal fields) are parsed
//! from their bytes; any other line goes through the sequential reader's
//! own field splitting and parsers.
//!
//! It takes only files it can read exactly as the sequential loop would
//! and gives up (returns `false`, the builder untouched) on anything else:
//! a bad line of any kind, an edge line before a vertex line, ids that
//! need renumbering, a repeated vertex pair. The sequential loop then
//! reads the file from the start and reports or skips what it finds, so
//! errors, lenient reports and renumbering stay the sequential loop's alone.

use super::{edge_fields, vertex_fields, Builder};
use crate::degree_count::degrees;
use crate::format::lex::{data_line, Fields};
use crate::format::pieces::{cut_at_line_ends, decimal_fields, is_blank, line_ends, line_slots, skip_blanks, Cut};
use crate::ids::too_sparse;
use crate::slices::windows_mut;
use crate::types::{Edge, Label, VertexId, ABSENT, MAX_VERTEX_ID, NO_EDGE_LABEL};
use rayon::prelude::*;

/// One data line, read.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Record {
    /// Blank or a comment.
    Skip,
    Vertex(VertexId, Label, Option<u64>),
    Edge(VertexId, VertexId, Option<Label>),
    /// Anything the sequential loop would reject (or treat otherwise).
    Other,
}

/// A `v` line: its line within its piece (0-based), id, label and the
/// declared degree.
type VertexRecord = (usize, VertexId, Label, Option<u64>);

/// What the first pass finds in one piece.
#[derive(Default)]
struct Scan {
    vertices: Vec<VertexRecord>,
    /// Byte offset of the first `e` line (the piece's length if none).
    edge_start: usize,
    /// Lines from the first `e` line on (each an edge slot).
    edges: usize,
    /// Number of line ends (`\n`).
    line_ends: usize,
    /// Line (within the piece) of the first `e` line.
    first_edge: Option<usize>,
}

/// Reads the records of `text`, whose first line is file line `first_line`,
/// into `b` (a fresh builder) and returns `true`; or returns `false` and
/// leaves `b` as it was, for the sequential loop to read `text` instead.
/// The edges' file lines are not kept: a read that gets here found no
/// repeated pair ([`Builder::no_repeats`]), the only later error that
/// names an edge's line.
pub(super) fn records(text: &str, first_line: usize, cut: Cut, b: &mut Builder) -> bool {
    // (a compacting builder interns ids: renumbering is the sequential loop's)
    if b.interned.is_some() {
        return false;
    }
    let pieces = cut_at_line_ends(text.as_bytes(), cut.pieces);
    let Some(scans) = pieces.par_iter().map(|p| scan(p)).collect::<Option<Vec<Scan>>>() else {
        return false;
    };
    // file line of each piece's first line
    let starts: Vec<usize> = scans
        .iter()
        .scan(first_line, |line, s| {
            let at = *line;
            *line += s.line_ends;
            Some(at)
        })
        .collect();
    // every vertex before every edge, as the sequential loop requires of
    // each edge's endpoints
    let last_vertex = scans
        .iter()
        .zip(&starts)
        .filter_map(|(s, &at)| s.vertices.last().map(|v| at + v.0))
        .max();
    let first_edge = scans
        .iter()
        .zip(&starts)
        .find_map(|(s, &at)| s.first_edge.map(|l| at + l));
    if matches!((last_vertex, first_edge), (Some(v), Some(e)) if v > e) {
        return false;
    }
    let Some((labels, declared, vertices)) = enter_vertices(&scans, &starts, b.max_vertices) else {
        return false;
    };
    let spans: Vec<(usize, usize)> = scans
        .iter()
        .scan(0, |at, s| {
            let span = (*at, *at + s.edges);
            *at += s.edges;
            Some(span)
        })
        .collect();
    let mut edges = vec![Edge::new(0, 0, NO_EDGE_LABEL); spans.last().map_or(0, |s| s.1)];
    let windows = windows_mut(&mut edges, spans.iter().copied());
    let filled: Option<Vec<(usize, bool)>> = pieces
        .into_par_iter()
        .zip(&scans)
        .zip(windows)
        .map(|((piece, s), window)| fill(&piece[s.edge_start..], &labels, window))
        .collect();
    let Some(filled) = filled else {
        return false;
    };
    // close the slots of blank and comment lines
    let mut kept = 0;
    for (&(at, _), &(k, _)) in spans.iter().zip(&filled) {
        if at != kept {
            edges.copy_within(at..at + k, kept);
        }
        kept += k;
    }
    edges.truncate(kept);
    let mut next = Builder {
        labels,
        edges,
        declared,
        num_vertices: vertices,
        edge_labelled: filled.iter().any(|f| f.1),
        max_vertices: b.max_vertices,
        ..Builder::new(0, 0, b.policy, 0)
    };
    if !next.repeated().is_empty() {
        return false;
    }
    next.no_repeats = true;
    next.degree = degrees(&next.edges, next.labels.len(), |e| (e.u, e.v));
    *b = next;
    true
}

/// Whether the line at the start of `b` starts (after blanks) with `e` and
/// a blank: the lines the second pass parses.
fn starts_edge(b: &[u8]) -> bool {
    let i = skip_blanks(b, 0);
    b.get(i) == Some(&b'e') && b.get(i + 1).is_some_and(|&c| is_blank(c))
}

/// The line of `b` that starts at `pos`, read as the sequential loop reads
/// it, and where it ends (its `\n`, or the end of `b`).
fn record_at(b: &[u8], pos: usize) -> (Record, usize) {
    if let Some(r) = quick_at(b, pos) {
        return r;
    }
    let end = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |p| pos + p);
    (generic(&b[pos..end]), end)
}

/// The usual line, `[ \t]*(v|e)([ \t]+<decimal>){2,3}[ \t]*\r?`, read from
/// its bytes, and its end; `None` for any other line (or a field out of
/// range), left to [`generic`]. Such a line splits into the same fields
/// under the sequential reader's trim and whitespace split, and its fields
/// parse to the same values.
fn quick_at(b: &[u8], pos: usize) -> Option<(Record, usize)> {
    let i = skip_blanks(b, pos);
    let kind = *b.get(i)?;
    if kind != b'v' && kind != b'e' {
        return None;
    }
    let mut vals = [0u64; 3];
    let (n, end) = decimal_fields(b, i + 1, false, &mut vals)?;
    let id = |x: u64| (x <= u64::from(MAX_VERTEX_ID)).then_some(x as VertexId);
    let label = |x: u64| (x < u64::from(ABSENT)).then_some(x as Label);
    let third = (n == 3).then_some(vals[2]);
    let r = match (kind, n) {
        (b'v', 2 | 3) => Record::Vertex(id(vals[0])?, label(vals[1])?, third),
        (b'e', 2 | 3) => {
            let l = match third {
                Some(x) => Some(label(x)?),
                None => None,
            };
            Record::Edge(id(vals[0])?, id(vals[1])?, l)
        }
        _ => return None,
    };
    Some((r, end))
}

/// Any line, through the sequential reader's trim, field split and parsers.
fn generic(line: &[u8]) -> Record {
    let Some(l) = std::str::from_utf8(line).ok().map(data_line) else {
        return Record::Other;
    };
    let Some(l) = l else {
        return Record::Skip;
    };
    let f = Fields::split(l);
    let parsed = match f.get(0) {
        "v" => vertex_fields(&f).map(|(id, label, degree)| Record::Vertex(id, label, degree)),
        "e" => edge_fields(&f).map(|(u, v, label)| Record::Edge(u, v, label)),
        _ => return Record::Other,
    };
    parsed.unwrap_or(Record::Other)
}

/// The first pass over a piece: its `v` lines up to its first `e` line,
/// and from there on only a count of lines; `None` at a line the
/// sequential loop would reject or treat otherwise.
fn scan(piece: &[u8]) -> Option<Scan> {
    let mut s = Scan {
        edge_start: piece.len(),
        ..Scan::default()
    };
    let (mut pos, mut line) = (0, 0);
    while pos < piece.len() {
        if starts_edge(&piece[pos..]) {
            let rest = &piece[pos..];
            s.first_edge = Some(line);
            s.edge_start = pos;
            s.edges = line_slots(rest);
            s.line_ends = line + line_ends(rest);
            return Some(s);
        }
        let (r, end) = record_at(piece, pos);
        match r {
            Record::Skip => {}
            Record::Vertex(id, label, degree) => s.vertices.push((line, id, label, degree)),
            // (an edge line of another shape, or a bad line)
            Record::Edge(..) | Record::Other => return None,
        }
        pos = end + 1;
        line += usize::from(end < piece.len());
    }
    s.line_ends = line;
    Some(s)
}

/// The label array indexed by id, the declared degrees `(line, id,
/// degree)` in file order, and the number of vertices; `None` for a
/// repeated id or ids too sparse to index by.
#[allow(clippy::type_complexity)]
fn enter_vertices(
    scans: &[Scan],
    starts: &[usize],
    max_vertices: u64,
) -> Option<(Vec<Label>, Vec<(usize, VertexId, u64)>, u64)> {
    let mut labels = match scans.iter().flat_map(|s| &s.vertices).map(|v| v.1).max() {
        Some(max) if too_sparse(max, max_vertices) => return None,
        Some(max) => vec![ABSENT; max as usize + 1],
        None => Vec::new(),
    };
    let mut declared = Vec::new();
    let mut n = 0u64;
    for (s, &at) in scans.iter().zip(starts) {
        for &(line, id, label, degree) in &s.vertices {
            let slot = &mut labels[id as usize];
            if *slot != ABSENT {
                return None;
            }
            *slot = label;
            n += 1;
            if let Some(d) = degree {
                declared.push((at + line, id, d));
            }
        }
    }
    Some((labels, declared, n))
}

/// Parses the lines of `region` (a piece from its first `e` line on) into
/// `edges`, one slot per line: the number of edges and whether any has a
/// label, or `None` at a line the sequential loop would reject or that is
/// not an edge.
fn fill(region: &[u8], labels: &[Label], edges: &mut [Edge]) -> Option<(usize, bool)> {
    let present = |id: VertexId| labels.get(id as usize).is_some_and(|&l| l != ABSENT);
    let (mut pos, mut k, mut labelled) = (0, 0, false);
    while pos < region.len() {
        let (r, end) = record_at(region, pos);
        pos = end + 1;
        let (u, v, label) = match r {
            Record::Edge(u, v, label) => (u, v, label),
            Record::Skip => continue,
            Record::Vertex(..) | Record::Other => return None,
        };
        if u == v || !present(u) || !present(v) {
            return None;
        }
        labelled |= label.is_some();
        *edges.get_mut(k)? = Edge::new(u, v, label.unwrap_or(NO_EDGE_LABEL));
        k += 1;
    }
    Some((k, labelled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_lines_read_as_the_generic_reader_reads_them() {
        let lines = [
            "v 1 2",
            "v 1 2 3",
            "  v\t1  2 3 \r",
            "e 4 5",
            "e 4 5 6\r",
            "e 4294967295 1",
            "e 4294967296 1",
            "v 1 4294967295",
            "v 1 99999999999999999999",
            "v 1 2 9999999999999999999",
            "v 1 2 18446744073709551615",
            "e 1",
            "e 1 2 3 4",
            "e1 2",
            "e 1 2x",
            "e 1\r2",
            "e 01 002",
            "x 1 2",
        ];
        for l in lines {
            let with_end = format!("{l}\nv 9 9");
            for b in [l.as_bytes(), with_end.as_bytes()] {
                if let Some((r, end)) = quick_at(b, 0) {
                    assert_eq!(r, generic(l.as_bytes()), "{l:?}");
                    assert_eq!(end, l.len(), "{l:?}");
                }
            }
        }
        assert_eq!(
            quick_at(b"  v\t1  2 3 \r", 0),
            Some((Record::Vertex(1, 2, Some(3)), 12))
        );
        assert_eq!(quick_at(b"e 01 002", 0), Some((Record::Edge(1, 2, None), 8)));
        assert_eq!(
            quick_at(b"v 1 2 9999999999999999999", 0),
            Some((Record::Vertex(1, 2, Some(9999999999999999999)), 25))
        );
        for bad in [
            "e1 2",
            "e 1 2x",
            "e 1\r2",
            "e 4294967296 1",
            "v 1 2 18446744073709551615",
        ] {
            assert_eq!(quick_at(bad.as_bytes(), 0), None, "{bad:?}");
        }
        assert_eq!(generic(b" # e 1 2"), Record::Skip);
        assert_eq!(generic(b"e 1 2x"), Record::Other);
        assert_eq!(
            generic(b"v 1 2 18446744073709551615"),
            Record::Vertex(1, 2, Some(u64::MAX))
        );
    }
}
