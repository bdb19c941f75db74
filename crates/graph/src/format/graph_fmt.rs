//! The "graph" format of the SubgraphMatching / RapidFlow studies, and the
//! shared `v`/`e` record reader that the CSM graph format also uses.
//!
//! ```text
//! t <num vertices> <num edges>
//! v <id> <label> [<degree>]
//! e <u> <v> [<edge label>]
//! ```
//!
//! Rules (strict mode): `t` is the first data line and appears once; a vertex
//! is declared by a `v` line before any `e` line uses it; ids are unique; edges
//! are undirected, listed once, and never loops. At the end the header counts
//! and every declared degree are checked against the file. `#` lines are
//! comments. Vertex ids need not be dense: `labels` is sized to the largest id
//! plus one and undeclared ids stay [`ABSENT`]. Ids too sparse for that
//! ([`crate::ids`]) are an error, or renumbered `0..N-1` in id order as
//! [`ReadOptions::ids`] says.
//!
//! Lenient mode skips (and counts) every bad line; since skipping changes the
//! counts, it does not check header counts or degrees, and a missing header is
//! only noted in [`ReadReport::first_errors`].
//!
//! The header may also be gSpan's transaction line `t # <graph id>`, which
//! graph-mining data sets and CSM-study query files put before their `v`
//! and `e` lines: it declares no counts, so none are checked. A file holds
//! one graph; a second `t # …` line is an error naming it.

use super::lex::{
    data_lines, malformed, pair_key, parse_count, parse_id, parse_label, Fields, PairSet, Sink, MAX_REPORTED_ERRORS,
};
use super::pieces::Pool;
use super::{ReadOptions, ReadReport};
use crate::error::{ErrorKind, InputError};
use crate::ids::{too_sparse, IdMap, IdPolicy};
use crate::types::{Edge, GraphData, Label, VertexId, ABSENT, NO_EDGE_LABEL};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::{self, Write};

mod parallel;
#[cfg(test)]
mod parallel_tests;

/// Which `v`/`e` dialect a file is in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `t N M` header required.
    Graph,
    /// No header (CSM-study graph files).
    Csm,
}

/// Accumulates `v` and `e` records and enforces the strict rules.
///
/// Vertices live in arrays indexed by the file's ids, or, once the ids turn
/// out too sparse for that ([`crate::ids`]) or when asked to renumber, by
/// internal ids given in file order (`interned`) and put in id order by
/// [`Builder::finish`]. Errors always name the file's ids.
struct Builder {
    labels: Vec<Label>,
    edges: Vec<Edge>,
    /// The file line of each edge. Repeated pairs are found after the
    /// pass ([`Builder::repeated`]), by sorting, instead of by a hash set
    /// probed at every line (a cache miss per edge on large graphs).
    lines: Vec<usize>,
    degree: Vec<u32>,
    /// `(line, id, declared degree)` of every `v` line with a degree field.
    declared: Vec<(usize, VertexId, u64)>,
    num_vertices: u64,
    edge_labelled: bool,
    policy: IdPolicy,
    /// Most vertices the input can hold (a `v` line takes 6 bytes or more).
    max_vertices: u64,
    interned: Option<Interned>,
    /// Set by [`parallel::records`], which found no repeated pair (and
    /// keeps no `lines`).
    no_repeats: bool,
}

/// The file's ids of a [`Builder`] that renumbers: internal id → file id and back.
#[derive(Default)]
struct Interned {
    index: HashMap<VertexId, VertexId>,
    original: Vec<VertexId>,
}

impl Builder {
    fn new(vertices_hint: u64, edges_hint: u64, policy: IdPolicy, content_len: usize) -> Self {
        // A bogus header must not make us allocate gigabytes up front.
        let vh = vertices_hint.min(1 << 24) as usize;
        let eh = edges_hint.min(1 << 24) as usize;
        Builder {
            labels: Vec::with_capacity(vh),
            edges: Vec::with_capacity(eh),
            lines: Vec::with_capacity(eh),
            degree: Vec::with_capacity(vh),
            declared: Vec::new(),
            num_vertices: 0,
            edge_labelled: false,
            policy,
            max_vertices: content_len as u64 / 6 + 1,
            interned: (policy == IdPolicy::Compact).then(Interned::default),
            no_repeats: false,
        }
    }

    /// Where vertex `id` (a file id) is stored, if declared.
    fn slot(&self, id: VertexId) -> Option<usize> {
        match &self.interned {
            Some(m) => m.index.get(&id).map(|&x| x as usize),
            None => self
                .labels
                .get(id as usize)
                .is_some_and(|&l| l != ABSENT)
                .then_some(id as usize),
        }
    }

    /// The file's id of the vertex stored at `x`.
    fn original(&self, x: VertexId) -> VertexId {
        self.interned.as_ref().map_or(x, |m| m.original[x as usize])
    }

    /// Moves the vertices declared so far (and their edges) to internal ids,
    /// in id order.
    fn intern_from_now(&mut self) {
        let mut m = Interned::default();
        let (mut labels, mut degree) = (Vec::new(), Vec::new());
        for (id, &l) in self.labels.iter().enumerate() {
            if l != ABSENT {
                m.index.insert(id as VertexId, m.original.len() as VertexId);
                m.original.push(id as VertexId);
                labels.push(l);
                degree.push(self.degree[id]);
            }
        }
        for e in &mut self.edges {
            *e = Edge::new(m.index[&e.u], m.index[&e.v], e.label);
        }
        (self.labels, self.degree, self.interned) = (labels, degree, Some(m));
    }

    fn add_vertex(&mut self, line: usize, id: VertexId, label: Label, degree: Option<u64>) -> Result<(), ErrorKind> {
        if self.slot(id).is_some() {
            return Err(ErrorKind::DuplicateVertex(id));
        }
        if self.interned.is_none() && too_sparse(id, self.max_vertices) {
            if self.policy == IdPolicy::Keep {
                return Err(ErrorKind::SparseIds {
                    id,
                    vertices: self.max_vertices,
                });
            }
            self.intern_from_now();
        }
        let i = match &mut self.interned {
            Some(m) => {
                let x = m.original.len();
                m.index.insert(id, x as VertexId);
                m.original.push(id);
                self.labels.push(ABSENT);
                self.degree.push(0);
                x
            }
            None => id as usize,
        };
        if i >= self.labels.len() {
            self.labels.resize(i + 1, ABSENT);
            self.degree.resize(i + 1, 0);
        }
        self.labels[i] = label;
        self.num_vertices += 1;
        if let Some(d) = degree {
            self.declared.push((line, id, d));
        }
        Ok(())
    }

    /// Adds the edge of line `line`; a repeated pair is added too and
    /// found later by [`Builder::repeated`].
    fn add_edge(&mut self, line: usize, u: VertexId, v: VertexId, label: Option<Label>) -> Result<(), ErrorKind> {
        if u == v {
            return Err(ErrorKind::SelfLoop(u));
        }
        let (Some(a), Some(b)) = (self.slot(u), self.slot(v)) else {
            let unknown = if self.slot(u).is_none() { u } else { v };
            return Err(ErrorKind::UnknownVertex(unknown));
        };
        self.edge_labelled |= label.is_some();
        self.edges
            .push(Edge::new(a as VertexId, b as VertexId, label.unwrap_or(NO_EDGE_LABEL)));
        self.lines.push(line);
        self.degree[a] += 1;
        self.degree[b] += 1;
        Ok(())
    }

    /// Indices (ascending, so in file order) of the edges whose vertex pair
    /// an earlier edge already has: the keys are sorted (on rayon's pool)
    /// and only the few repeated ones looked up again.
    fn repeated(&self) -> Vec<usize> {
        if self.no_repeats {
            return Vec::new();
        }
        let mut keys: Vec<u64> = self.edges.par_iter().map(|e| pair_key(e.u, e.v)).collect();
        keys.par_sort_unstable();
        let mut twice: Vec<u64> = keys.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
        if twice.is_empty() {
            return Vec::new();
        }
        twice.dedup();
        drop(keys);
        let twice: PairSet = twice.into_iter().collect();
        // the first edge of a repeated pair stays, the later ones go
        let mut seen = PairSet::default();
        self.edges
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                let k = pair_key(e.u, e.v);
                twice.contains(&k) && !seen.insert(k)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The error for the first repeated pair, if any (strict mode).
    fn first_repeated(&self, sink: &Sink) -> Option<InputError> {
        let i = *self.repeated().first()?;
        let e = self.edges[i];
        let k = ErrorKind::DuplicateEdge(self.original(e.u), self.original(e.v));
        Some(sink.err(self.lines[i], k))
    }

    /// Drops the repeated pairs (lenient mode), noting each in `sink`; the
    /// sink's notes stay the first ones in file order.
    fn drop_repeated(&mut self, sink: &mut Sink) {
        let rep = self.repeated();
        if rep.is_empty() {
            return;
        }
        for &i in &rep {
            let e = self.edges[i];
            self.degree[e.u as usize] -= 1;
            self.degree[e.v as usize] -= 1;
            // (past the sink's cap too: these may come before its notes)
            let k = ErrorKind::DuplicateEdge(self.original(e.u), self.original(e.v));
            let err = sink.err(self.lines[i], k);
            sink.report.skipped += 1;
            sink.report.first_errors.push(err);
        }
        sink.report.first_errors.sort_by_key(|e| e.line);
        sink.report.first_errors.truncate(MAX_REPORTED_ERRORS);
        let mut k = 0;
        let mut next = rep.iter().peekable();
        self.edges.retain(|_| {
            let drop = next.peek() == Some(&&k);
            if drop {
                next.next();
            }
            k += 1;
            !drop
        });
        self.lines.clear();
    }

    /// First declared degree that disagrees with the edges, in file order.
    fn degree_mismatch(&self) -> Option<(usize, ErrorKind)> {
        self.declared.iter().find_map(|&(line, id, d)| {
            let actual = self.slot(id).map_or(0, |x| u64::from(self.degree[x]));
            (actual != d).then(|| {
                (
                    line,
                    malformed(format!("vertex {id} declares degree {d} but has {actual} edges")),
                )
            })
        })
    }

    /// The graph, and the file's ids if the vertices were renumbered (then
    /// in id order, as [`GraphData::compact_ids`] numbers them).
    fn finish(self) -> (GraphData, Option<IdMap>) {
        let Some(m) = self.interned else {
            let g = GraphData {
                labels: self.labels,
                edges: self.edges,
                edge_labelled: self.edge_labelled,
            };
            return (g, None);
        };
        let mut by_id: Vec<VertexId> = (0..m.original.len() as VertexId).collect();
        by_id.sort_unstable_by_key(|&x| m.original[x as usize]);
        let mut new_of = vec![0 as VertexId; by_id.len()];
        for (new, &old) in by_id.iter().enumerate() {
            new_of[old as usize] = new as VertexId;
        }
        let labels = by_id.iter().map(|&old| self.labels[old as usize]).collect();
        let mut edges = self.edges;
        for e in &mut edges {
            *e = Edge::new(new_of[e.u as usize], new_of[e.v as usize], e.label);
        }
        let ids = by_id.iter().map(|&old| m.original[old as usize]).collect();
        let g = GraphData {
            labels,
            edges,
            edge_labelled: self.edge_labelled,
        };
        (g, Some(IdMap::from_sorted(ids)))
    }
}

/// `v <id> <label> [<degree>]`
fn vertex_record(b: &mut Builder, line: usize, f: &Fields) -> Result<(), ErrorKind> {
    let (id, label, degree) = vertex_fields(f)?;
    b.add_vertex(line, id, label, degree)
}

/// The id, label and declared degree of a `v` line's fields.
fn vertex_fields(f: &Fields) -> Result<(VertexId, Label, Option<u64>), ErrorKind> {
    if !(3..=4).contains(&f.n) {
        return Err(malformed(format!(
            "`v` line needs `v <id> <label> [<degree>]`, found {} fields",
            f.n
        )));
    }
    let id = parse_id(f.get(1), "vertex id")?;
    let label = parse_label(f.get(2), "vertex label")?;
    let degree = if f.n == 4 {
        Some(parse_count(f.get(3), "degree")?)
    } else {
        None
    };
    Ok((id, label, degree))
}

/// `e <u> <v> [<label>]`
fn edge_record(b: &mut Builder, line: usize, f: &Fields) -> Result<(), ErrorKind> {
    let (u, v, label) = edge_fields(f)?;
    b.add_edge(line, u, v, label)
}

/// The endpoints and label of an `e` line's fields.
fn edge_fields(f: &Fields) -> Result<(VertexId, VertexId, Option<Label>), ErrorKind> {
    if !(3..=4).contains(&f.n) {
        return Err(malformed(format!(
            "`e` line needs `e <u> <v> [<label>]`, found {} fields",
            f.n
        )));
    }
    let u = parse_id(f.get(1), "vertex id")?;
    let v = parse_id(f.get(2), "vertex id")?;
    let label = if f.n == 4 {
        Some(parse_label(f.get(3), "edge label")?)
    } else {
        None
    };
    Ok((u, v, label))
}

/// Whether `f` is gSpan's transaction line `t # <graph id>`.
fn is_gspan_header(f: &Fields) -> bool {
    f.n == 3 && f.get(0) == "t" && f.get(1) == "#"
}

/// `t <vertices> <edges>`, or gSpan's `t # <graph id>` (no counts: `None`).
fn header_record(f: &Fields) -> Result<Option<(u64, u64)>, ErrorKind> {
    if is_gspan_header(f) {
        parse_count(f.get(2), "graph id")?;
        return Ok(None);
    }
    if f.n != 3 {
        return Err(malformed(format!(
            "header needs `t <vertices> <edges>` or `t # <graph id>`, found {} fields",
            f.n
        )));
    }
    Ok(Some((
        parse_count(f.get(1), "vertex count")?,
        parse_count(f.get(2), "edge count")?,
    )))
}

/// Reads a `v`/`e` graph file in the given dialect.
pub(crate) fn read_ve(
    content: &str,
    source_name: &str,
    opts: &ReadOptions,
    dialect: Dialect,
) -> Result<(GraphData, ReadReport), InputError> {
    read_ve_with(content, source_name, opts, dialect, Pool::Auto)
}

/// The text of `content` from the start of the line holding `text` (a
/// slice of it), after any byte-order mark.
fn from_line_of<'a>(content: &'a str, text: &str) -> &'a str {
    let at = text.as_ptr() as usize - content.as_ptr() as usize;
    let bom = if content.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let start = content[..at].rfind('\n').map_or(0, |p| p + 1).max(bom);
    &content[start..]
}

fn read_ve_with(
    content: &str,
    source_name: &str,
    opts: &ReadOptions,
    dialect: Dialect,
    pool: Pool,
) -> Result<(GraphData, ReadReport), InputError> {
    let mut sink = Sink::new(source_name, opts.lenient);
    let mut lines = data_lines(content).peekable();
    // (line, vertices, edges) of the header.
    let mut header: Option<(usize, u64, u64)> = None;
    if dialect == Dialect::Graph {
        match lines.peek() {
            Some(&(line, text)) if text.split_ascii_whitespace().next() == Some("t") => {
                lines.next();
                match header_record(&Fields::split(text)) {
                    Ok(counts) => header = counts.map(|(n, m)| (line, n, m)),
                    Err(k) => sink.skip(line, k)?,
                }
            }
            Some(&(line, _)) => {
                let k = malformed("missing header: the first data line must be `t <vertices> <edges>`");
                if opts.lenient {
                    sink.note(line, k);
                } else {
                    return Err(sink.err(line, k));
                }
            }
            None => {}
        }
    }
    let (nh, mh) = header.map_or((0, 0), |(_, n, m)| (n, m));
    let mut b = Builder::new(nh, mh, opts.ids, content.len());
    let on_pool = lines.peek().is_some_and(|&(line, text)| {
        let rest = from_line_of(content, text);
        pool.cut(rest.len())
            .is_some_and(|cut| parallel::records(rest, line, cut, &mut b))
    });
    // (the records read on the pool are not read again)
    let lines = (!on_pool).then_some(lines).into_iter().flatten();
    for (line, text) in lines {
        let f = Fields::split(text);
        let r = match (f.get(0), dialect) {
            ("v", _) => vertex_record(&mut b, line, &f),
            ("e", _) => edge_record(&mut b, line, &f),
            ("t", Dialect::Graph) if is_gspan_header(&f) => Err(malformed(format!(
                "a second graph (`t # {}`): a file holds one graph",
                f.get(2)
            ))),
            ("t", Dialect::Graph) => Err(malformed("the `t` header must be the first data line and appear once")),
            ("t", Dialect::Csm) => Err(malformed(
                "unexpected `t` header in a CSM graph file (use the graph format)",
            )),
            (tok @ ("-v" | "-e"), _) => Err(malformed(format!("update record `{tok}` in a graph file"))),
            (tok, Dialect::Graph) => Err(malformed(format!("unknown record `{tok}` (expected t, v or e)"))),
            (tok, Dialect::Csm) => Err(malformed(format!("unknown record `{tok}` (expected v or e)"))),
        };
        if let Err(k) = r {
            if let Err(e) = sink.skip(line, k) {
                // a repeated pair before this line is the first error
                return Err(b.first_repeated(&sink).unwrap_or(e));
            }
        }
    }
    if opts.lenient {
        b.drop_repeated(&mut sink);
    } else if let Some(e) = b.first_repeated(&sink) {
        return Err(e);
    }
    if !opts.lenient {
        if let Some((line, n, m)) = header {
            if n != b.num_vertices {
                let k = malformed(format!(
                    "header declares {n} vertices but the file has {} `v` lines",
                    b.num_vertices
                ));
                return Err(sink.err(line, k));
            }
            if m != b.edges.len() as u64 {
                let k = malformed(format!(
                    "header declares {m} edges but the file has {} `e` lines",
                    b.edges.len()
                ));
                return Err(sink.err(line, k));
            }
        }
        if let Some((line, k)) = b.degree_mismatch() {
            return Err(sink.err(line, k));
        }
    }
    let (g, id_map) = b.finish();
    sink.report.id_map = id_map;
    Ok((g, sink.report))
}

/// Reads a graph-format file (see the module docs).
pub fn read_graph_format(
    content: &str,
    source_name: &str,
    opts: &ReadOptions,
) -> Result<(GraphData, ReadReport), InputError> {
    read_ve(content, source_name, opts, Dialect::Graph)
}

/// Writes `v` and `e` lines; `degree` adds the degree field to `v` lines.
/// Edge labels are written iff `g.edge_labelled` or `always_edge_labels`.
pub(crate) fn write_ve(g: &GraphData, degree: bool, always_edge_labels: bool, w: &mut impl Write) -> io::Result<()> {
    let mut deg = vec![0u32; if degree { g.labels.len() } else { 0 }];
    if degree {
        for e in &g.edges {
            deg[e.u as usize] += 1;
            deg[e.v as usize] += 1;
        }
    }
    for (id, &l) in g.labels.iter().enumerate() {
        if l == ABSENT {
            continue;
        }
        if degree {
            writeln!(w, "v {id} {l} {}", deg[id])?;
        } else {
            writeln!(w, "v {id} {l}")?;
        }
    }
    for e in &g.edges {
        if g.edge_labelled || always_edge_labels {
            writeln!(w, "e {} {} {}", e.u, e.v, e.label)?;
        } else {
            writeln!(w, "e {} {}", e.u, e.v)?;
        }
    }
    Ok(())
}

/// Writes `g` in the graph format (`t N M` with N the number of present
/// vertices, then `v id label degree` and `e u v [label]` lines).
pub fn write_graph_format(g: &GraphData, w: &mut impl Write) -> io::Result<()> {
    let n = g.labels.iter().filter(|&&l| l != ABSENT).count();
    writeln!(w, "t {n} {}", g.edges.len())?;
    write_ve(g, true, false, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> ReadOptions {
        ReadOptions::default()
    }

    fn lenient() -> ReadOptions {
        ReadOptions {
            lenient: true,
            ..ReadOptions::default()
        }
    }

    fn err(content: &str) -> InputError {
        read_graph_format(content, "g.graph", &strict()).unwrap_err()
    }

    #[test]
    fn reads_a_small_graph() {
        let c = "# comment\nt 3 2\nv 0 1 1\nv 1 2 2\nv 2 1 1\ne 0 1\ne 1 2\n";
        let (g, r) = read_graph_format(c, "x", &strict()).unwrap();
        assert_eq!(g.labels, vec![1, 2, 1]);
        assert_eq!(g.edges, vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)]);
        assert!(!g.edge_labelled);
        assert_eq!(r, ReadReport::default());
    }

    #[test]
    fn edge_labels_and_optional_degree() {
        let c = "t 2 1\nv 0 0\nv 1 0 1\ne 0 1 7\n";
        let (g, _) = read_graph_format(c, "x", &strict()).unwrap();
        assert!(g.edge_labelled);
        assert_eq!(g.edges, vec![Edge::new(0, 1, 7)]);
    }

    #[test]
    fn named_errors_with_lines() {
        let e = err("t 2 1\nv 0 0 1\nv 1 0 1\ne 0 1 2 3\n");
        assert_eq!((e.line, e.source_name.as_str()), (4, "g.graph"));
        assert!(matches!(e.kind, ErrorKind::Malformed(_)));
        assert_eq!(err("t 2 1\nv 0 0\ne 0 1\n").kind, ErrorKind::UnknownVertex(1));
        assert_eq!(err("t 2 1\nv 0 0\ne 0 1\n").line, 3);
        let e = err("t 2 2\nv 0 0\nv 1 0\ne 0 1\ne 1 0\n");
        assert_eq!((e.line, e.kind), (5, ErrorKind::DuplicateEdge(1, 0)));
        let e = err("t 1 1\nv 0 0\ne 0 0\n");
        assert_eq!((e.line, e.kind), (3, ErrorKind::SelfLoop(0)));
        let e = err("t 2 0\nv 0 0\nv 0 1\n");
        assert_eq!((e.line, e.kind), (3, ErrorKind::DuplicateVertex(0)));
        let e = err("t 1 0\n\nv 2147483647 0\n");
        assert_eq!((e.line, e.kind), (3, ErrorKind::VertexIdTooLarge(2147483647)));
        let e = err("t 1 0\nv x 0\n");
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("`x`")));
        let e = err("t 1 0\nq 1 2\n");
        assert!(matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("unknown record `q`")));
    }

    #[test]
    fn header_and_degree_checks() {
        let e = err("v 0 0\n");
        assert_eq!(e.line, 1);
        assert!(matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("missing header")));
        let e = err("# c\nt 3 0\nv 0 0\nv 1 0\n");
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("3 vertices")));
        let e = err("t 2 2\nv 0 0\nv 1 0\ne 0 1\n");
        assert!(matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("2 edges")));
        let e = err("t 2 1\nv 0 0 1\nv 1 0 2\ne 0 1\n");
        assert_eq!(e.line, 3);
        assert!(matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("declares degree 2 but has 1")));
        let e = err("t 1 0\nv 0 0\nt 1 0\n");
        assert_eq!(e.line, 3);
    }

    /// gSpan's `t # <id>` header (CSM-study query files, graph-mining data
    /// sets) declares no counts; a second one is a second graph, an error.
    #[test]
    fn gspan_transaction_header() {
        let c = "t # 0\nv 0 1\nv 1 1\nv 2 2\ne 0 1 0\ne 1 2 3\n";
        let (g, _) = read_graph_format(c, "q", &strict()).unwrap();
        assert_eq!(g.labels, vec![1, 1, 2]);
        assert_eq!(g.edges, vec![Edge::new(0, 1, 0), Edge::new(1, 2, 3)]);
        assert_eq!(super::super::detect_format(c), Ok(super::super::Format::Graph));
        let e = err("t # 0\nv 0 1\nv 1 1\ne 0 1\nt # 1\nv 0 1\n");
        assert_eq!(e.line, 5);
        assert!(
            matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("second graph")),
            "{e}"
        );
        let e = err("t # x\nv 0 1\n");
        assert!(
            matches!(e.kind, ErrorKind::Malformed(ref m) if m.contains("graph id")),
            "{e}"
        );
    }

    /// Repeated pairs are found after the pass, yet reported as if at their
    /// line: before a later bad line (strict), after an earlier one, and
    /// among the first reported problems in file order (lenient).
    #[test]
    fn repeated_pairs_keep_their_place_among_errors() {
        let head = "t 3 3\nv 0 0\nv 1 0\nv 2 0\ne 0 1\n";
        let e = err(&format!("{head}e 1 0\nbad\ne 1 2\n"));
        assert_eq!((e.line, e.kind), (6, ErrorKind::DuplicateEdge(1, 0)));
        let e = err(&format!("{head}bad\ne 1 0\ne 1 2\n"));
        assert_eq!(e.line, 6);
        assert!(matches!(e.kind, ErrorKind::Malformed(_)), "{e}");
        // lenient: a repeated pair early, then more bad lines than are reported
        let bad = "bad\n".repeat(MAX_REPORTED_ERRORS + 3);
        let c = format!("t 3 3\nv 0 0\nv 1 0\nv 2 0\nbad\ne 0 1\ne 1 0\n{bad}e 1 2\ne 2 1\n");
        let (g, r) = read_graph_format(&c, "x", &lenient()).unwrap();
        assert_eq!(g.edges, vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)]);
        assert_eq!(r.skipped, 1 + 1 + MAX_REPORTED_ERRORS + 3 + 1);
        assert_eq!(r.first_errors.len(), MAX_REPORTED_ERRORS);
        assert_eq!(r.first_errors[0].line, 5);
        assert_eq!(
            (r.first_errors[1].line, &r.first_errors[1].kind),
            (7, &ErrorKind::DuplicateEdge(1, 0))
        );
        assert!(r.first_errors.windows(2).all(|w| w[0].line < w[1].line));
    }

    #[test]
    fn lenient_skips_and_counts() {
        let c = "t 9 9\nv 0 0\nv 0 1\nv 1 0\nbad\ne 0 1\ne 1 0\ne 0 0\ne 0 5\nv 99999999999 0\ne 0 1 2 3 4\n\
                 e 0 x\nv 2 0\ne 1 2\ne 2 1\ne 2 2\n";
        let (g, r) = read_graph_format(c, "x", &lenient()).unwrap();
        assert_eq!(g.labels, vec![0, 0, 0]);
        assert_eq!(g.edges, vec![Edge::new(0, 1, 0), Edge::new(1, 2, 0)]);
        assert_eq!(r.skipped, 10);
        assert_eq!(r.first_errors.len(), 10);
        assert_eq!(r.first_errors[0].line, 3);
        assert_eq!(r.first_errors[0].kind, ErrorKind::DuplicateVertex(0));
        assert_eq!(r.first_errors[1].line, 5);
        let lines: Vec<usize> = r.first_errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![3, 5, 7, 8, 9, 10, 11, 12, 15, 16]);
        assert_eq!(r.first_errors[9].kind, ErrorKind::SelfLoop(2));
        // More than ten bad lines: all counted, ten kept.
        let many = format!("t 1 0\nv 0 0\n{}", "junk\n".repeat(25));
        let (_, r) = read_graph_format(&many, "x", &lenient()).unwrap();
        assert_eq!((r.skipped, r.first_errors.len()), (25, 10));
        // Missing header is only noted.
        let (g, r) = read_graph_format("v 0 0\n", "x", &lenient()).unwrap();
        assert_eq!(g.labels, vec![0]);
        assert_eq!((r.skipped, r.first_errors.len()), (0, 1));
    }

    #[test]
    fn sparse_ids_stay_absent() {
        let (g, _) = read_graph_format("t 2 1\nv 3 1\nv 1 2\ne 3 1\n", "x", &strict()).unwrap();
        assert_eq!(g.labels, vec![ABSENT, 2, ABSENT, 1]);
        let mut out = Vec::new();
        write_graph_format(&g, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "t 2 1\nv 1 2 1\nv 3 1 1\ne 3 1\n");
    }
}
