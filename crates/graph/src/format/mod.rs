//! Readers and writers for graph and update-stream files.
//!
//! Three formats ([`Format`]):
//! * [`Format::Graph`]: the SubgraphMatching / RapidFlow `t`/`v`/`e` format
//!   ([`graph_fmt`]);
//! * [`Format::Csm`]: the CSM-study `v`/`e` graph files and
//!   `v`/`-v`/`e`/`-e` update streams ([`csm_fmt`]);
//! * [`Format::Snap`]: SNAP edge lists, labelled by a seeded [`Labeller`]
//!   ([`snap`]).
//!
//! Query files are small labelled graphs and use the same readers. In every
//! format, empty lines and lines starting with `#` or `%` are skipped (line
//! numbers still count them).
//! Graph files are strict by default: the first bad line is an
//! [`InputError`] naming the source, the 1-based line and the reason.
//! [`ReadOptions::lenient`] skips bad lines instead and reports them in
//! [`ReadReport`]. SNAP's folding of reversed/duplicate pairs and dropping of
//! self-loops is its documented behaviour, not an error.
//!
//! Files of 4 MiB or more are read ([`read_text`]) and parsed on rayon's
//! pool (`pieces`, `graph_fmt::parallel`, `snap::parallel`). The parallel
//! parse takes only files that the sequential reader would accept
//! unchanged; on anything else, the sequential reader reads the file again,
//! and its errors and reports are the ones returned.

pub mod csm_fmt;
mod detect;
pub mod graph_fmt;
mod lex;
mod pieces;
pub mod snap;

pub use crate::gen::Labeller;
pub use csm_fmt::{read_csm_graph, read_updates, read_updates_lenient, write_csm_graph};
pub use detect::detect_format;
pub use graph_fmt::{read_graph_format, write_graph_format};
pub use lex::MAX_REPORTED_ERRORS;
pub use pieces::read_text;
pub use snap::{read_snap, write_snap};

use crate::error::{ErrorKind, InputError};
use crate::ids::{IdMap, IdPolicy};
use crate::types::{GraphData, LocatedUpdate, Update};
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;

/// A graph file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `t N M` / `v id label degree` / `e u v [label]` (SubgraphMatching, RapidFlow).
    Graph,
    /// `v id label` / `e u v [label]` graphs and `v`/`-v`/`e`/`-e` streams (CSM study).
    Csm,
    /// SNAP `u v` edge lists with `#` comments.
    Snap,
}

impl Format {
    /// Every format, in the order of their names.
    pub const ALL: [Format; 3] = [Format::Graph, Format::Csm, Format::Snap];

    /// The name [`FromStr`] accepts.
    pub fn name(self) -> &'static str {
        match self {
            Format::Graph => "graph",
            Format::Csm => "csm",
            Format::Snap => "snap",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    /// `graph`, `csm` or `snap` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown format `{s}` (expected graph, csm or snap)"))
    }
}

/// Options for the graph readers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOptions {
    /// Skip and count bad lines instead of failing on the first one.
    pub lenient: bool,
    /// Vertex labels for formats without them (SNAP).
    pub labeller: Labeller,
    /// Whether to renumber the vertices densely ([`IdPolicy`]; the default
    /// keeps the file's ids and rejects ids too sparse to store).
    pub ids: IdPolicy,
}

/// What a graph reader tolerated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadReport {
    /// Lines skipped in lenient mode.
    pub skipped: usize,
    /// The first [`MAX_REPORTED_ERRORS`] problems lenient mode tolerated, in
    /// file order.
    pub first_errors: Vec<InputError>,
    /// SNAP: self-loop lines dropped.
    pub self_loops: usize,
    /// SNAP: lines folded into an earlier edge (reversed or repeated pairs).
    pub duplicates_folded: usize,
    /// The file's ids, when the reader renumbered the vertices
    /// ([`ReadOptions::ids`]); errors the reader returns name the file's ids.
    pub id_map: Option<IdMap>,
}

fn read_file(path: &Path) -> Result<(String, String), InputError> {
    let name = path.display().to_string();
    match read_text(path) {
        Ok(c) => Ok((c, name)),
        Err(e) => Err(InputError::new(name, 0, ErrorKind::Io(e.to_string()))),
    }
}

/// Reads a graph in `format`, or in the format [`detect_format`] finds.
pub fn read_graph(
    content: &str,
    source_name: &str,
    format: Option<Format>,
    opts: &ReadOptions,
) -> Result<(GraphData, ReadReport), InputError> {
    let format = match format {
        Some(f) => f,
        None => detect::detect_named(content, source_name)?,
    };
    match format {
        Format::Graph => read_graph_format(content, source_name, opts),
        Format::Csm => read_csm_graph(content, source_name, opts),
        Format::Snap => read_snap(content, source_name, opts),
    }
}

/// [`read_graph`] on a file; errors name the path. I/O failures are
/// [`ErrorKind::Io`].
pub fn read_graph_file(
    path: impl AsRef<Path>,
    format: Option<Format>,
    opts: &ReadOptions,
) -> Result<(GraphData, ReadReport), InputError> {
    let (content, name) = read_file(path.as_ref())?;
    read_graph(&content, &name, format, opts)
}

/// [`read_updates`] on a file; errors name the path.
pub fn read_updates_file(path: impl AsRef<Path>) -> Result<Vec<LocatedUpdate>, InputError> {
    let (content, name) = read_file(path.as_ref())?;
    read_updates(&content, &name)
}

/// [`read_updates_file`], or with `lenient` [`read_updates_lenient`] on a
/// file (an unreadable file is still an error).
pub fn read_updates_file_with(
    path: impl AsRef<Path>,
    lenient: bool,
) -> Result<(Vec<LocatedUpdate>, ReadReport), InputError> {
    let (content, name) = read_file(path.as_ref())?;
    if lenient {
        return Ok(read_updates_lenient(&content, &name));
    }
    Ok((read_updates(&content, &name)?, ReadReport::default()))
}

/// Writes `g` in `format` (buffered; flushed before returning).
pub fn write_graph(g: &GraphData, format: Format, w: impl Write) -> io::Result<()> {
    let mut w = io::BufWriter::new(w);
    match format {
        Format::Graph => write_graph_format(g, &mut w)?,
        Format::Csm => write_csm_graph(g, &mut w)?,
        Format::Snap => write_snap(g, &mut w)?,
    }
    w.flush()
}

/// Writes an update stream in the CSM format (buffered; flushed before
/// returning); [`read_updates`] reads it back unchanged.
pub fn write_updates(updates: &[Update], w: impl Write) -> io::Result<()> {
    let mut w = io::BufWriter::new(w);
    csm_fmt::write_update_lines(updates, &mut w)?;
    w.flush()
}

#[cfg(test)]
mod tests;
