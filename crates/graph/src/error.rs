//! Typed errors for graph input: every error names its source (file), line
//! and reason, as the semantics require.

use crate::types::{Label, VertexId};
use std::fmt;

/// Why an input line or update was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    #[error("malformed line: {0}")]
    Malformed(String),
    #[error("unknown vertex {0}")]
    UnknownVertex(VertexId),
    #[error("vertex {0} already exists")]
    DuplicateVertex(VertexId),
    #[error("vertex id {0} is too large (ids must be below 2^31 - 1)")]
    VertexIdTooLarge(u64),
    #[error(
        "vertex id {id} is too sparse to store: this input holds at most {vertices} vertices, and vertices are \
         kept in arrays indexed by id; renumber them densely (`--ids compact` or `--ids auto`; \
         `IdPolicy::Compact` in the library)"
    )]
    SparseIds { id: VertexId, vertices: u64 },
    #[error("edge ({0}, {1}) already exists")]
    DuplicateEdge(VertexId, VertexId),
    #[error("edge ({0}, {1}) does not exist")]
    MissingEdge(VertexId, VertexId),
    #[error("vertex {id} has label {stored}, not {named} as the deletion names")]
    VertexLabelMismatch { id: VertexId, stored: Label, named: Label },
    #[error("edge ({u}, {v}) has label {stored}, not {named} as the deletion names")]
    EdgeLabelMismatch {
        u: VertexId,
        v: VertexId,
        stored: Label,
        named: Label,
    },
    #[error("self-loop on vertex {0}")]
    SelfLoop(VertexId),
    #[error(
        "vertex {0} is removed and re-added under another label in one batch, which one staged batch cannot \
         hold (split the batch)"
    )]
    VertexReAdded(VertexId),
    #[error("could not detect the file format: {0}")]
    UnknownFormat(String),
    #[error("i/o error: {0}")]
    Io(String),
}

/// An input error located in a named source (a file path, `<generated>`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub source_name: String,
    /// 1-based line number; 0 when the error concerns the whole source.
    pub line: usize,
    pub kind: ErrorKind,
}

impl InputError {
    pub fn new(source_name: impl Into<String>, line: usize, kind: ErrorKind) -> Self {
        InputError {
            source_name: source_name.into(),
            line,
            kind,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.source_name, self.line, self.kind)
        } else {
            write!(f, "{}: {}", self.source_name, self.kind)
        }
    }
}

impl std::error::Error for InputError {}
