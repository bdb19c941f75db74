//! SNAP edge lists: `#` (or `%`) comment lines and one whitespace-separated
//! `u v` pair per line (tabs or spaces).
//!
//! The graph is read as undirected: `u v` and `v u` fold into one edge, and
//! repeated pairs fold too ([`ReadReport::duplicates_folded`] counts the lines
//! folded away); self-loops are dropped and counted in
//! [`ReadReport::self_loops`]. These are the documented behaviour, not errors.
//! Vertex ids are kept as in the file; `labels` is sized to the largest id
//! plus one, and ids that no line mentions stay [`ABSENT`] (a vertex mentioned
//! only by a self-loop is present, isolated). Labels come from
//! [`ReadOptions::labeller`]. Edges come out normalised (`u < v`) and sorted;
//! none carries a label.
//!
//! Ids too sparse to store in arrays indexed by id ([`crate::ids`]) are an
//! error, or renumbered `0..N-1` in id order as [`ReadOptions::ids`] says
//! (labels are still drawn by the file's ids, so a vertex keeps its label).
//!
//! Malformed lines and ids above [`MAX_VERTEX_ID`](crate::types::MAX_VERTEX_ID)
//! are errors, or skipped and counted in lenient mode.

use super::lex::{data_lines, malformed, pair_key, parse_id, Fields, Sink};
use super::pieces::Pool;
use super::{ReadOptions, ReadReport};
use crate::error::{ErrorKind, InputError};
use crate::gen::{assign_labels, labels_of_ids};
use crate::ids::{too_sparse, IdMap, IdPolicy, DENSE_ID_FLOOR};
use crate::types::{Edge, GraphData, VertexId, ABSENT, NO_EDGE_LABEL};
use rayon::prelude::*;
use std::io::{self, Write};

mod parallel;
#[cfg(test)]
mod parallel_tests;

fn pair(f: &Fields) -> Result<(VertexId, VertexId), ErrorKind> {
    if f.n != 2 {
        return Err(malformed(format!("expected a `<u> <v>` pair, found {} fields", f.n)));
    }
    Ok((parse_id(f.get(0), "vertex id")?, parse_id(f.get(1), "vertex id")?))
}

/// Reads a SNAP edge list (see the module docs).
pub fn read_snap(content: &str, source_name: &str, opts: &ReadOptions) -> Result<(GraphData, ReadReport), InputError> {
    read_snap_with(content, source_name, opts, Pool::Auto)
}

/// What the pair loop finds: the pair keys of the lines that are not
/// self-loops (in any order, repeats kept), the ids of the self-loops, and
/// the largest id with the file line of its first mention.
struct Pairs {
    keys: Vec<u64>,
    loop_ids: Vec<VertexId>,
    max_id: Option<(VertexId, usize)>,
}

/// The pair loop, sequentially; bad lines go to `sink`.
fn pairs(content: &str, sink: &mut Sink) -> Result<Pairs, InputError> {
    let mut keys: Vec<u64> = Vec::with_capacity(content.len() / 12);
    let mut loop_ids: Vec<VertexId> = Vec::new();
    let mut max_id: Option<(VertexId, usize)> = None;
    for (line, text) in data_lines(content) {
        match pair(&Fields::split(text)) {
            Ok((u, v)) => {
                if max_id.is_none_or(|(m, _)| u.max(v) > m) {
                    max_id = Some((u.max(v), line));
                }
                if u == v {
                    loop_ids.push(u);
                } else {
                    keys.push(pair_key(u, v));
                }
            }
            Err(k) => sink.skip(line, k)?,
        }
    }
    Ok(Pairs { keys, loop_ids, max_id })
}

fn read_snap_with(
    content: &str,
    source_name: &str,
    opts: &ReadOptions,
    pool: Pool,
) -> Result<(GraphData, ReadReport), InputError> {
    let mut sink = Sink::new(source_name, opts.lenient);
    if let Err(m) = opts.labeller.validate() {
        return Err(sink.err(0, malformed(format!("invalid labeller: {m}"))));
    }
    let text = content.strip_prefix('\u{feff}').unwrap_or(content);
    let on_pool = pool.cut(text.len()).and_then(|cut| parallel::pairs(text, cut));
    let Pairs {
        mut keys,
        loop_ids,
        max_id,
    } = match on_pool {
        Some(p) => p,
        None => pairs(content, &mut sink)?,
    };
    let Some((max_id, max_line)) = max_id else {
        sink.report.id_map = (opts.ids == IdPolicy::Compact).then(IdMap::default);
        return Ok((GraphData::default(), sink.report));
    };
    let lines = keys.len();
    keys.par_sort_unstable();
    keys.dedup();
    sink.report.self_loops = loop_ids.len();
    sink.report.duplicates_folded = lines - keys.len();

    // the present ids, found only where the id space could be sparse
    let ids = (u64::from(max_id) + 1 > DENSE_ID_FLOOR).then(|| present_ids(&keys, &loop_ids));
    let sparse = ids.as_ref().is_some_and(|ids| too_sparse(max_id, ids.len() as u64));
    let compact = match opts.ids {
        IdPolicy::Keep if sparse => {
            let vertices = ids.as_ref().map_or(0, Vec::len) as u64;
            return Err(sink.err(max_line, ErrorKind::SparseIds { id: max_id, vertices }));
        }
        IdPolicy::Keep => false,
        IdPolicy::Compact => true,
        IdPolicy::CompactIfSparse => sparse,
    };
    if compact {
        let ids = ids.unwrap_or_else(|| present_ids(&keys, &loop_ids));
        let labels = labels_of_ids(&ids, &opts.labeller);
        let index = |x: VertexId| ids.binary_search(&x).expect("an endpoint is present") as VertexId;
        // renumbering in id order keeps every edge normalised and sorted
        let edges = keys
            .iter()
            .map(|&k| Edge::new(index((k >> 32) as VertexId), index(k as VertexId), NO_EDGE_LABEL))
            .collect();
        sink.report.id_map = Some(IdMap::from_sorted(ids));
        let g = GraphData {
            labels,
            edges,
            edge_labelled: false,
        };
        return Ok((g, sink.report));
    }

    let n = max_id as usize + 1;
    let mut present = vec![false; n];
    for &x in &loop_ids {
        present[x as usize] = true;
    }
    let edges: Vec<Edge> = keys
        .iter()
        .map(|&k| {
            let (u, v) = ((k >> 32) as VertexId, k as u32);
            present[u as usize] = true;
            present[v as usize] = true;
            Edge::new(u, v, NO_EDGE_LABEL)
        })
        .collect();
    let mut labels = assign_labels(n, &opts.labeller);
    for (l, &p) in labels.iter_mut().zip(&present) {
        if !p {
            *l = ABSENT;
        }
    }
    Ok((
        GraphData {
            labels,
            edges,
            edge_labelled: false,
        },
        sink.report,
    ))
}

/// The ids that the sorted pair `keys` and the self-loops name, ascending.
fn present_ids(keys: &[u64], loop_ids: &[VertexId]) -> Vec<VertexId> {
    let mut ids: Vec<VertexId> = keys
        .iter()
        .flat_map(|&k| [(k >> 32) as VertexId, k as VertexId])
        .chain(loop_ids.iter().copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Writes `g`'s edges as a SNAP edge list (tab-separated, one line per
/// undirected edge). Labels and isolated vertices are not representable and
/// are lost.
pub fn write_snap(g: &GraphData, w: &mut impl Write) -> io::Result<()> {
    let n = g.labels.iter().filter(|&&l| l != ABSENT).count();
    writeln!(w, "# Undirected graph written by csm-graph (labels dropped)")?;
    writeln!(w, "# Nodes: {n} Edges: {}", g.edges.len())?;
    writeln!(w, "# FromNodeId\tToNodeId")?;
    for e in &g.edges {
        writeln!(w, "{}\t{}", e.u, e.v)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Labeller;

    #[test]
    fn folds_both_directions_and_loops() {
        let c = "# Directed graph\n# FromNodeId\tToNodeId\n1\t2\n2 1\n1  3\n3\t3\n1 2\n7 7\n";
        let (g, r) = read_snap(c, "s", &ReadOptions::default()).unwrap();
        assert_eq!(g.edges, vec![Edge::new(1, 2, 0), Edge::new(1, 3, 0)]);
        assert_eq!(g.labels, vec![ABSENT, 0, 0, 0, ABSENT, ABSENT, ABSENT, 0]);
        assert!(!g.edge_labelled);
        assert_eq!((r.self_loops, r.duplicates_folded, r.skipped), (2, 2, 0));
    }

    #[test]
    fn labels_from_labeller() {
        let opts = ReadOptions {
            labeller: Labeller::Uniform { num_labels: 4, seed: 1 },
            ..Default::default()
        };
        let (g, _) = read_snap("0 1\n1 3\n", "s", &opts).unwrap();
        let want = assign_labels(4, &opts.labeller);
        assert_eq!(g.labels, vec![want[0], want[1], ABSENT, want[3]]);
    }

    #[test]
    fn errors_and_lenient() {
        let e = read_snap("1 2\n1 2 3\n", "s", &ReadOptions::default()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, ErrorKind::Malformed(_)));
        let e = read_snap("1 2\n\n1 3000000000\n", "s", &ReadOptions::default()).unwrap_err();
        assert_eq!((e.line, e.kind), (3, ErrorKind::VertexIdTooLarge(3_000_000_000)));
        let lenient = ReadOptions {
            lenient: true,
            ..Default::default()
        };
        let (g, r) = read_snap("1 2\nfoo bar\n1 3000000000\n2 3\n", "s", &lenient).unwrap();
        assert_eq!(g.edges.len(), 2);
        assert_eq!(r.skipped, 2);
        assert_eq!(r.first_errors[1].line, 3);
        let (g, r) = read_snap("# only comments\n", "s", &ReadOptions::default()).unwrap();
        assert_eq!((g, r), (GraphData::default(), ReadReport::default()));
    }
}
