//! The pair loop of [`super::read_snap`] on rayon's pool, for large files.
//!
//! The text is cut into pieces at line ends; each line gets a slot in one
//! key array (a first pass counts the lines of each piece), and each piece
//! parses its lines into its window of slots. Lines of the usual shape
//! (two decimal ids between blanks) are parsed from their bytes; any other
//! line goes through the sequential reader's field splitting and parsers.
//! A bad line of any kind gives up (`None`): the sequential loop then reads
//! the file and reports or skips it.

use super::{pair, Pairs};
use crate::format::lex::{data_line, pair_key, Fields};
use crate::format::pieces::{cut_at_line_ends, decimal_fields, line_ends, line_slots, skip_blanks, Cut};
use crate::slices::windows_mut;
use crate::types::{VertexId, MAX_VERTEX_ID};
use rayon::prelude::*;

/// The slot of a blank line, a comment or a self-loop (no pair key is this
/// large: a key's two ids differ); sorted last and cut off.
const NO_PAIR: u64 = u64::MAX;

/// One piece's self-loops, largest id (with its line within the piece) and
/// number of pair keys.
struct Part {
    loop_ids: Vec<VertexId>,
    max_id: Option<(VertexId, usize)>,
    pairs: usize,
}

/// The pairs of `text` (the file after any byte-order mark), or `None` at
/// a line the sequential loop must decide on.
pub(super) fn pairs(text: &str, cut: Cut) -> Option<Pairs> {
    let pieces = cut_at_line_ends(text.as_bytes(), cut.pieces);
    let counts: Vec<(usize, usize)> = pieces.par_iter().map(|p| (line_ends(p), line_slots(p))).collect();
    let mut spans = Vec::with_capacity(pieces.len());
    let mut starts = Vec::with_capacity(pieces.len());
    let (mut slot, mut line) = (0, 1);
    for &(ends, slots) in &counts {
        spans.push((slot, slot + slots));
        starts.push(line);
        slot += slots;
        line += ends;
    }
    let mut keys = vec![NO_PAIR; slot];
    let windows = windows_mut(&mut keys, spans.iter().copied());
    let parts: Vec<Part> = pieces
        .into_par_iter()
        .zip(windows)
        .map(|(piece, window)| fill(piece, window))
        .collect::<Option<_>>()?;
    keys.par_sort_unstable();
    keys.truncate(parts.iter().map(|p| p.pairs).sum());
    let mut max_id: Option<(VertexId, usize)> = None;
    for (p, &at) in parts.iter().zip(&starts) {
        if let Some((m, l)) = p.max_id {
            if max_id.is_none_or(|(best, _)| m > best) {
                max_id = Some((m, at + l));
            }
        }
    }
    Some(Pairs {
        keys,
        loop_ids: parts.into_iter().flat_map(|p| p.loop_ids).collect(),
        max_id,
    })
}

/// Parses the lines of `piece` into `slots`, one per line.
fn fill(piece: &[u8], slots: &mut [u64]) -> Option<Part> {
    let mut part = Part {
        loop_ids: Vec::new(),
        max_id: None,
        pairs: 0,
    };
    let mut pos = 0;
    for (line, slot) in slots.iter_mut().enumerate() {
        let (pair, end) = pair_at(piece, pos)?;
        pos = end + 1;
        let Some((u, v)) = pair else { continue };
        if part.max_id.is_none_or(|(m, _)| u.max(v) > m) {
            part.max_id = Some((u.max(v), line));
        }
        if u == v {
            part.loop_ids.push(u);
        } else {
            *slot = pair_key(u, v);
            part.pairs += 1;
        }
    }
    (pos >= piece.len()).then_some(part)
}

/// The line of `b` that starts at `pos` (`None` for a blank or comment
/// line) and where it ends; `None` for a line the sequential loop rejects.
#[allow(clippy::type_complexity)]
fn pair_at(b: &[u8], pos: usize) -> Option<(Option<(VertexId, VertexId)>, usize)> {
    let mut vals = [0u64; 2];
    let id = |x: u64| (x <= u64::from(MAX_VERTEX_ID)).then_some(x as VertexId);
    match decimal_fields(b, skip_blanks(b, pos), true, &mut vals) {
        Some((0, end)) => return Some((None, end)),
        Some((2, end)) => {
            if let (Some(u), Some(v)) = (id(vals[0]), id(vals[1])) {
                return Some((Some((u, v)), end));
            }
        }
        _ => {}
    }
    let end = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |p| pos + p);
    let Some(l) = data_line(std::str::from_utf8(&b[pos..end]).ok()?) else {
        return Some((None, end));
    };
    Some((Some(pair(&Fields::split(l)).ok()?), end))
}
