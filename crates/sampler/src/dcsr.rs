//! [`DcsrPack`]: the cached lists of one batch in the Doubly Compressed
//! Sparse Row format of GCSM Sec. V-B / Fig. 6, in ONE allocation, ready for a
//! single host-to-device copy ([`DcsrPack::as_bytes`]).
//!
//! Layout of the `u32` buffer (word offsets in [`DcsrLayout`]):
//!
//! | section | words | content |
//! |---|---|---|
//! | `rowidx` | `rows` | cached vertex ids, ascending |
//! | `rowptr` | `2·rows + 1` | per row: (start of the list in `colidx`, start of its appended part or [`NO_APPENDED`] = `u32::MAX` = −1 when nothing was appended); then one final entry = `colidx` length |
//! | `colidx` | `nnz` | each list as stored while the batch is pending ([`DynamicGraph::raw_list`]): the old part with deleted entries marked by the top bit ([`csm_graph::view::MARK`]), then the appended neighbours |
//! | `elabels` | `nnz` or 0 | edge labels parallel to `colidx`, only for edge-labelled graphs |
//!
//! Row `i` ends where row `i + 1` starts (`rowptr[2(i+1)]`, or the final entry
//! for the last row). Lookup is a binary search on `rowidx`
//! ([`DcsrPack::lookup`]), as the GPU kernel does before every access.

use std::ops::Range;

use csm_graph::{DynamicGraph, GraphView, Label, Version, VertexId};

/// `rowptr` value of a row without appended neighbours (−1 as `i32`).
pub const NO_APPENDED: u32 = u32::MAX;

/// Word ranges of the sections inside [`DcsrPack::as_words`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DcsrLayout {
    pub rowidx: Range<usize>,
    pub rowptr: Range<usize>,
    pub colidx: Range<usize>,
    /// Empty without edge labels.
    pub elabels: Range<usize>,
}

/// Why a pack could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DcsrError {
    #[error("vertex {0} is not in the graph")]
    UnknownVertex(VertexId),
    #[error("the pack would hold {0} list entries; u32 offsets allow at most 2^32 - 2")]
    TooLarge(usize),
}

/// One batch's cached lists (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DcsrPack {
    buf: Vec<u32>,
    rows: usize,
    nnz: usize,
    edge_labelled: bool,
}

impl DcsrPack {
    /// Size of a pack with no rows (the final `rowptr` entry).
    pub const EMPTY_BYTES: usize = 4;

    /// Bytes one row with `len` stored entries adds to a pack.
    pub const fn row_bytes(len: usize, edge_labelled: bool) -> usize {
        4 * (3 + len * if edge_labelled { 2 } else { 1 })
    }

    /// Packs the lists of `vertices` (any order, repeats ignored) as they are
    /// stored in `g` now (batch staged or not).
    pub fn build(g: &DynamicGraph, vertices: &[VertexId]) -> Result<DcsrPack, DcsrError> {
        let mut rows: Vec<VertexId> = vertices.to_vec();
        rows.sort_unstable();
        rows.dedup();
        if let Some(&v) = rows.iter().find(|&&v| v as usize >= g.num_vertices()) {
            return Err(DcsrError::UnknownVertex(v));
        }
        let nnz: usize = rows
            .iter()
            .map(|&v| {
                let (a, b) = g.raw_list(v);
                a.len() + b.len()
            })
            .sum();
        if nnz >= NO_APPENDED as usize {
            return Err(DcsrError::TooLarge(nnz));
        }
        let el = g.edge_labelled();
        let n = rows.len();
        let words = n + 2 * n + 1 + nnz * if el { 2 } else { 1 };
        let mut buf: Vec<u32> = Vec::with_capacity(words);
        buf.extend_from_slice(&rows);
        let mut at = 0u32;
        for &v in &rows {
            let (a, b) = g.raw_list(v);
            buf.push(at);
            buf.push(if b.is_empty() { NO_APPENDED } else { at + a.len() as u32 });
            at += (a.len() + b.len()) as u32;
        }
        buf.push(at);
        for &v in &rows {
            let (a, b) = g.raw_list(v);
            buf.extend_from_slice(a);
            buf.extend_from_slice(b);
        }
        if el {
            for &v in &rows {
                let l = g.nbrs(v, Version::New);
                buf.extend_from_slice(l.base_labels);
                buf.extend_from_slice(l.delta_labels);
            }
        }
        debug_assert_eq!(buf.len(), words);
        debug_assert_eq!(buf.capacity(), words, "one exact allocation");
        Ok(DcsrPack {
            buf,
            rows: n,
            nnz,
            edge_labelled: el,
        })
    }

    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Total list entries (`colidx` length).
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    pub fn edge_labelled(&self) -> bool {
        self.edge_labelled
    }

    pub fn layout(&self) -> DcsrLayout {
        let (n, z) = (self.rows, self.nnz);
        let c0 = 3 * n + 1;
        let e = if self.edge_labelled { z } else { 0 };
        DcsrLayout {
            rowidx: 0..n,
            rowptr: n..c0,
            colidx: c0..c0 + z,
            elabels: c0 + z..c0 + z + e,
        }
    }

    pub fn rowidx(&self) -> &[u32] {
        &self.buf[self.layout().rowidx]
    }

    pub fn rowptr(&self) -> &[u32] {
        &self.buf[self.layout().rowptr]
    }

    pub fn colidx(&self) -> &[u32] {
        &self.buf[self.layout().colidx]
    }

    /// Edge labels parallel to `colidx` (empty without edge labels).
    pub fn elabels(&self) -> &[Label] {
        &self.buf[self.layout().elabels]
    }

    /// The whole pack as words (one allocation).
    pub fn as_words(&self) -> &[u32] {
        &self.buf
    }

    /// The whole pack as native-endian bytes, for one host-to-device copy.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: u32 has no padding and every bit pattern is a valid u8;
        // u8 has alignment 1; the length covers exactly the initialised words.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.buf.len() * 4) }
    }

    /// Bytes of the pack.
    pub fn bytes(&self) -> usize {
        self.buf.len() * 4
    }

    fn row(&self, v: VertexId) -> Option<usize> {
        self.rowidx().binary_search(&v).ok()
    }

    /// `colidx` ranges of row `i`: (old part, appended part).
    fn ranges(&self, i: usize) -> (Range<usize>, Range<usize>) {
        let rp = self.rowptr();
        let start = rp[2 * i] as usize;
        let end = rp[2 * i + 2] as usize; // next row's start, or the final entry
        match rp[2 * i + 1] {
            NO_APPENDED => (start..end, end..end),
            a => (start..a as usize, a as usize..end),
        }
    }

    pub fn contains(&self, v: VertexId) -> bool {
        self.row(v).is_some()
    }

    /// `v`'s cached list: (old part with marks, appended part), or None when
    /// `v` is not cached.
    pub fn lookup(&self, v: VertexId) -> Option<(&[u32], &[u32])> {
        let (a, b) = self.ranges(self.row(v)?);
        let c = self.colidx();
        Some((&c[a], &c[b]))
    }

    /// Edge labels of `v`'s cached list, parallel to [`DcsrPack::lookup`]
    /// (None when not cached or the graph has no edge labels).
    pub fn lookup_labels(&self, v: VertexId) -> Option<(&[Label], &[Label])> {
        if !self.edge_labelled {
            return None;
        }
        let (a, b) = self.ranges(self.row(v)?);
        let e = self.elabels();
        Some((&e[a], &e[b]))
    }
}
