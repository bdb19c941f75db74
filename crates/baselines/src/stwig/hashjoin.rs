//! Chained hash tables and the fully pipelined right-deep join (paper 004
//! Sec. 4.1–4.3, Algorithm 2).
//!
//! Join tree: right-deep. R_1 (the first twig's result) is the probe
//! relation; a hash table H_i is built for every other R_i. A probe walks
//! H_2 … H_n depth-first with an iterator stack (`itArray`) and a single
//! partial result (`imResult`); intermediate join results are never
//! materialised.
//!
//! Hash table layout (Sec. 4.2): two arrays. `pool` holds every record of
//! R_i followed by one extra entry, the index of the next record in the same
//! chain; `head` has 2^⌊log₂|R_i|⌋ chain heads. The hash of a record is the
//! low ⌊log₂|R_i|⌋ bits of a hash of its join-key entries (the query
//! vertices an earlier twig binds): the paper sums them, we mix them (see
//! `key_hash`). Records are linked at the head of their
//! chain by a compare-and-swap, in parallel, as the paper's GPU build does
//! with atomics.
//!
//! Gaps of the paper closed here: `match`/`next` compare the full key (the
//! hash only selects the chain), and taking a record checks that each data
//! vertex it binds for the first time differs from every vertex already in
//! `imResult` under another query vertex of the same label (injectivity
//! across twigs; vertices of different labels always differ).

use std::sync::atomic::{AtomicU32, Ordering};

use csm_graph::VertexId;
use rayon::prelude::*;

/// "No record" (end of chain / exhausted iterator).
pub const NONE: u32 = u32::MAX;

/// A chained hash table over one twig result R_i (i ≥ 2).
pub struct HashTable {
    /// l_i: entries per record (root + leaves).
    width: usize,
    /// Join key: (position in the record, query vertex).
    key: Vec<(usize, usize)>,
    /// Vertices this twig binds first: (position, query vertex, earlier
    /// query vertices of the same label that must take other data vertices).
    new: Vec<(usize, usize, Vec<usize>)>,
    pool: Vec<u32>,
    head: Vec<u32>,
    mask: u64,
}

impl HashTable {
    /// Builds the table from `pool`, which already holds the records laid
    /// out with `width + 1` entries each (the last entry of each is
    /// overwritten with the chain link).
    pub fn build(
        width: usize,
        key: Vec<(usize, usize)>,
        new: Vec<(usize, usize, Vec<usize>)>,
        mut pool: Vec<u32>,
    ) -> HashTable {
        let stride = width + 1;
        assert_eq!(pool.len() % stride, 0, "pool is not a whole number of records");
        let len = pool.len() / stride;
        assert!(len < NONE as usize, "relation too large for 32-bit record indices");
        let bits = if len <= 1 {
            0
        } else {
            usize::BITS - 1 - len.leading_zeros()
        };
        let mask = (1u64 << bits) - 1;
        let head: Vec<AtomicU32> = (0..1usize << bits).map(|_| AtomicU32::new(NONE)).collect();
        pool.par_chunks_mut(stride)
            .with_min_len(1024)
            .enumerate()
            .for_each(|(i, rec)| {
                let h = (key_hash(key.iter().map(|&(p, _)| rec[p])) & mask) as usize;
                let mut old = head[h].load(Ordering::Relaxed);
                loop {
                    rec[width] = old; // extra entity ← head[hash]
                    match head[h].compare_exchange_weak(old, i as u32, Ordering::AcqRel, Ordering::Relaxed) {
                        Ok(_) => break, // head[hash] ← current record
                        Err(cur) => old = cur,
                    }
                }
            });
        let head = head.into_iter().map(AtomicU32::into_inner).collect();
        HashTable {
            width,
            key,
            new,
            pool,
            head,
            mask,
        }
    }

    pub fn len(&self) -> usize {
        self.pool.len() / (self.width + 1)
    }

    pub fn is_empty(&self) -> bool {
        self.pool.is_empty()
    }

    /// Bytes of `pool` and `head`.
    pub fn memory_bytes(&self) -> usize {
        (self.pool.len() + self.head.len()) * 4
    }

    #[inline]
    fn record(&self, r: u32) -> &[u32] {
        let s = r as usize * (self.width + 1);
        &self.pool[s..s + self.width]
    }

    #[inline]
    fn link(&self, r: u32) -> u32 {
        self.pool[r as usize * (self.width + 1) + self.width]
    }

    /// First record of chain-walk position `r` onwards whose key equals
    /// `im`'s values.
    #[inline]
    fn scan(&self, mut r: u32, im: &[VertexId]) -> u32 {
        while r != NONE {
            let rec = self.record(r);
            if self.key.iter().all(|&(p, qv)| rec[p] == im[qv]) {
                return r;
            }
            r = self.link(r);
        }
        NONE
    }

    /// `H.match(imResult)`: iterator at the first matching record.
    #[inline]
    pub fn first(&self, im: &[VertexId]) -> u32 {
        let h = key_hash(self.key.iter().map(|&(_, qv)| im[qv])) & self.mask;
        self.scan(self.head[h as usize], im)
    }

    /// `iterator.next()`.
    #[inline]
    pub fn next(&self, r: u32, im: &[VertexId]) -> u32 {
        self.scan(self.link(r), im)
    }

    /// Sets `imResult` from record `r` (the vertices this twig binds
    /// first); false when that would break injectivity.
    #[inline]
    fn take(&self, r: u32, im: &mut [VertexId]) -> bool {
        let rec = self.record(r);
        for (p, qv, distinct) in &self.new {
            let v = rec[*p];
            if distinct.iter().any(|&o| im[o] == v) {
                return false;
            }
            im[*qv] = v;
        }
        true
    }
}

/// The hash of a join key: the paper sums the key's entries and keeps the
/// low bits, which puts keys of small or nearby VIDs into a few chains (a
/// 128-vertex graph fills at most 255 chains of a two-entry key, whatever
/// the table's size). Here each entry is mixed in with a multiply
/// (Fibonacci hashing) and the high bits are folded down, so that chains
/// stay short; only the chain a record lands in changes.
#[inline]
fn key_hash(key: impl Iterator<Item = VertexId>) -> u64 {
    let h = key.fold(0u64, |h, v| (h ^ v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    h ^ h >> 32
}

/// Per-thread state of Algorithm 2: `imResult` and `itArray`.
pub struct Cursor {
    im: Vec<VertexId>,
    it: Vec<u32>,
}

impl Cursor {
    pub fn new(query_vertices: usize, tables: usize) -> Cursor {
        Cursor {
            im: vec![0; query_vertices],
            it: vec![NONE; tables.max(1)],
        }
    }
}

/// Algorithm 2 for one probe record: `rec` is a record of R_1 whose entries
/// bind the query vertices `cols`. Returns the number of final results.
///
/// `GetNewRecordsOrQuit` is the caller's loop over R_1; the body below is
/// lines 5–17 of Algorithm 2 with `pos` 0-based (subjoin `pos` probes
/// `tables[pos]`, i.e. H_{pos+2}).
pub fn probe(tables: &[HashTable], cur: &mut Cursor, cols: &[usize], rec: &[VertexId]) -> u64 {
    for (&qv, &v) in cols.iter().zip(rec) {
        cur.im[qv] = v; // set imResult based on R_1[i]
    }
    if tables.is_empty() {
        return 1;
    }
    let last = tables.len() - 1;
    let Cursor { im, it } = cur;
    let mut found = 0;
    let mut pos = 0;
    it[0] = tables[0].first(im);
    loop {
        while it[pos] == NONE {
            if pos == 0 {
                return found;
            }
            pos -= 1;
        }
        let t = &tables[pos];
        let r = it[pos];
        it[pos] = t.next(r, im);
        if !t.take(r, im) {
            continue; // would bind one data vertex twice
        }
        if pos == last {
            found += 1; // output imResult as a final result
        } else {
            it[pos + 1] = tables[pos + 1].first(im);
            pos += 1;
        }
    }
}
