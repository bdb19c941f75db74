//! The host graph of GCSM Sec. V-A: every vertex's neighbour list in memory
//! the GPU can read in place, plus a device-resident vertex table.
//!
//! Lists live in *chunks*: pinned, device-mapped host memory
//! ([`HostMemory::Pinned`], zero-copy, GCSM / ZP), managed memory
//! ([`HostMemory::Managed`], the UM baseline) or plain device memory
//! ([`HostMemory::Device`], static matching of a graph that fits). Each vertex
//! owns a slot with headroom: its raw list as the [`DynamicGraph`](csm_graph::DynamicGraph) stages it
//! (old part with deleted entries marked, then the appended part, Fig. 5)
//! and, for edge-labelled graphs, the parallel edge labels right after the
//! slot's capacity.
//!
//! The device vertex table holds one [`VEntry`] per vertex: the device
//! address of the list (GCSM's `pDevice`), of its labels, the old-part length
//! and the total length; a second device array holds the vertex labels.
//! After [`DynamicGraph::stage`](csm_graph::DynamicGraph::stage) and again after [`DynamicGraph::commit`](csm_graph::DynamicGraph::commit),
//! [`HostGraph::sync`] copies the touched vertices' lists (relocating a list
//! that outgrew its slot to a fresh slot with doubled capacity), adds new
//! vertices, and scatters the changed table entries and labels to the device.

use std::sync::Arc;
use std::time::Instant;

use csm_graph::{GraphView, Label, Nbrs, VertexId, ABSENT};
use cudarc::driver::{
    CudaEvent, CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use rayon::prelude::*;

use crate::device::{Gpu, ManagedBuffer, PinnedBuffer};
use crate::error::{GpuError, GpuResult};
use crate::list_write::{self, ListWrite, Stored};
use crate::nvrtc::{kernel, MATCH_CU};
use crate::shared_ptr::SharedPtr;

/// One vertex-table entry (`struct VEntry` of `kernels/match.cu`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VEntry {
    /// Device address of the raw list (0 when the list is empty and unplaced).
    pub ids: u64,
    /// Device address of the edge labels (0 without edge labels).
    pub labs: u64,
    /// Length of the old part (entries may carry the deletion mark).
    pub base: u32,
    /// Old part plus appended part.
    pub len: u32,
}

// SAFETY: plain old data with the kernel's layout (two u64, two u32).
unsafe impl DeviceRepr for VEntry {}
// SAFETY: all-zero is a valid (empty) entry.
unsafe impl ValidAsZeroBits for VEntry {}

/// Where the neighbour lists live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostMemory {
    /// Pinned, device-mapped host memory read by zero-copy (GCSM, ZP).
    Pinned,
    /// Managed memory migrated in pages on demand (UM).
    Managed,
    /// Device memory (a graph that fits on the GPU; no per-access transfers).
    Device,
}

impl HostMemory {
    /// Whether kernel reads of these lists cross the interconnect (and are
    /// counted as host bytes).
    pub fn is_host(self) -> bool {
        !matches!(self, HostMemory::Device)
    }
}

enum Chunk {
    Pinned(PinnedBuffer<u32>),
    Managed(ManagedBuffer<u32>),
    Device(CudaSlice<u32>),
}

impl Chunk {
    fn len(&self) -> usize {
        match self {
            Chunk::Pinned(b) => b.len(),
            Chunk::Managed(b) => b.len(),
            Chunk::Device(b) => b.len(),
        }
    }

    fn device_ptr(&self, gpu: &Gpu) -> u64 {
        match self {
            Chunk::Pinned(b) => b.device_ptr(),
            Chunk::Managed(b) => b.device_ptr(),
            Chunk::Device(b) => b.device_ptr(gpu.stream()).0,
        }
    }

    /// Host-writable view (pinned and managed chunks).
    fn host_mut(&mut self) -> Option<&mut [u32]> {
        match self {
            Chunk::Pinned(b) => Some(b.as_mut_slice()),
            Chunk::Managed(b) => Some(b.as_mut_slice()),
            Chunk::Device(_) => None,
        }
    }

    fn write(&mut self, gpu: &Gpu, off: usize, data: &[u32]) -> GpuResult<()> {
        if data.is_empty() {
            return Ok(());
        }
        match self {
            Chunk::Device(b) => {
                let mut view = b.slice_mut(off..off + data.len());
                gpu.stream()
                    .memcpy_htod(data, &mut view)
                    .map_err(|e| GpuError::driver("cuMemcpyHtoD (list)", e))
            }
            other => {
                let h = other.host_mut().expect("host chunk");
                h[off..off + data.len()].copy_from_slice(data);
                Ok(())
            }
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    chunk: u32,
    off: u64,
    cap: u32,
    /// The slot holds a plain list: the vertex's committed list when it was
    /// last written (see [`list_write::choose`]).
    clean: bool,
}

/// Counters of what [`HostGraph::sync`] did (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Lists written (whole or appended).
    pub lists: u64,
    /// Of those, lists brought in step by writing only their appended part
    /// and the marks of their deleted entries.
    pub appended: u64,
    /// Words (ids) written, both kinds of write.
    pub words: u64,
    /// Lists moved to a larger slot.
    pub relocations: u64,
    /// Vertex slots added after the initial build.
    pub new_vertices: u64,
    /// Table entries scattered to the device.
    pub entries_uploaded: u64,
}

/// Words written from which a sync writes host memory on rayon's pool
/// (4 MiB: a commit of 8,192 updates on the bench's R-MAT rewrites about
/// 120 MB of touched lists).
const PAR_SYNC_WORDS: usize = 1 << 20;

/// Lists from which a sync decides and writes on rayon's pool: each list
/// costs a few cache misses (its slot, its table entry, the graph's
/// offsets, the write), which threads overlap.
const PAR_SYNC_LISTS: usize = 2048;

/// One list's write, decided before any slot changes.
#[derive(Clone, Copy, Debug)]
struct Decision {
    v: VertexId,
    kind: ListWrite,
    /// Old part's length.
    base: usize,
    /// Both parts' length.
    len: usize,
    /// Whether the list is plain (its committed list).
    plain: bool,
}

/// What placing some lists did, summed over them.
#[derive(Clone, Copy, Debug, Default)]
struct Placed {
    /// Their lengths before and after.
    before: usize,
    after: usize,
    /// Lists written, of which appended, and the words written.
    lists: u64,
    appended: u64,
    words: usize,
}

impl Placed {
    fn add(self, o: Placed) -> Placed {
        Placed {
            before: self.before + o.before,
            after: self.after + o.after,
            lists: self.lists + o.lists,
            appended: self.appended + o.appended,
            words: self.words + o.words,
        }
    }
}

/// The table entry of a decided list in `slot` (`chunk_ptrs`: each chunk's
/// device address).
fn table_entry(slot: &Slot, d: &Decision, chunk_ptrs: &[u64], labelled: bool) -> VEntry {
    let ptr = chunk_ptrs[slot.chunk as usize] + slot.off * 4;
    VEntry {
        ids: ptr,
        labs: if labelled { ptr + u64::from(slot.cap) * 4 } else { 0 },
        base: d.base as u32,
        len: d.len as u32,
    }
}

/// Seconds the last [`HostGraph::sync`] or [`HostGraph::sync_staged`] spent
/// in each step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SyncTiming {
    /// Deciding each list's write (reads of the graph and the slots).
    pub decide: f64,
    /// Placing lists: relocations (one thread), slot flags, table entries
    /// and labels.
    pub place: f64,
    /// Copying lists and setting marks.
    pub write: f64,
    /// Scattering the changed table entries and labels to the device.
    pub upload: f64,
}

/// Words a changed vertex takes in the table upload's pinned buffer: its
/// [`VEntry`] (6), its index and its label.
const UPLOAD_WORDS: usize = 8;

/// Minimum words of a chunk allocated for relocated lists (64 MiB).
const TAIL_CHUNK_WORDS: usize = 16 << 20;

/// See the module docs.
pub struct HostGraph {
    gpu: Arc<Gpu>,
    memory: HostMemory,
    edge_labelled: bool,
    chunks: Vec<Chunk>,
    /// Words used in the last chunk.
    tail_used: usize,
    slots: Vec<Slot>,
    entries: Vec<VEntry>,
    labels: Vec<Label>,
    d_table: CudaSlice<VEntry>,
    d_labels: CudaSlice<u32>,
    scatter_entries: CudaFunction,
    scatter_u32: CudaFunction,
    /// Σ list lengths at the last sync (entries, both parts).
    list_words: usize,
    /// Device address of each chunk (a driver call for device chunks).
    chunk_ptrs: Vec<u64>,
    /// The table upload's pinned buffer, read in place by the scatters.
    upload_host: Option<PinnedBuffer<u32>>,
    /// Recorded after the last scatters: the buffer is free once it is done.
    upload_done: CudaEvent,
    upload_queued: bool,
    /// Lists from which a sync works on rayon's pool ([`PAR_SYNC_LISTS`]).
    par_min_lists: usize,
    pub stats: SyncStats,
    /// The last sync's steps.
    pub timing: SyncTiming,
}

fn raw_len(n: &Nbrs<'_>) -> usize {
    n.base.len() + n.delta.len()
}

/// Capacity for a list of `len` entries: headroom for appends.
fn with_headroom(len: usize) -> usize {
    len + len / 8 + 2
}

impl HostGraph {
    /// Copies every list of `g` (raw, as [`GraphView::nbrs`] at
    /// [`csm_graph::Version::New`] exposes it) into `memory` and uploads the
    /// vertex table. `headroom` reserves room for appends (dynamic graphs).
    pub fn build<G: GraphView + ?Sized>(
        gpu: Arc<Gpu>,
        g: &G,
        memory: HostMemory,
        headroom: bool,
    ) -> GpuResult<HostGraph> {
        let n = g.num_vertices();
        let edge_labelled = g.edge_labelled();
        let factor = if edge_labelled { 2 } else { 1 };
        let caps: Vec<u32> = (0..n as VertexId)
            .into_par_iter()
            .map(|v| {
                let l = raw_len(&g.nbrs(v, csm_graph::Version::New));
                let c = if headroom { with_headroom(l) } else { l };
                u32::try_from(c).unwrap_or(u32::MAX)
            })
            .collect();
        let mut offs: Vec<u64> = Vec::with_capacity(n);
        let mut total: u64 = 0;
        for &c in &caps {
            offs.push(total);
            total += u64::from(c) * factor;
        }
        let total = usize::try_from(total)
            .map_err(|_| GpuError::InvalidInput("graph too large for this host".into()))?
            .max(1);
        let fill = |dst: SharedPtr| {
            (0..n).into_par_iter().with_min_len(1024).for_each(|v| {
                let nb = g.nbrs(v as VertexId, csm_graph::Version::New);
                let o = offs[v] as usize;
                let cap = caps[v] as usize;
                // SAFETY: [o, o + factor * cap) is this vertex's range, disjoint
                // from every other vertex's, inside the `total`-word buffer.
                let window = unsafe { std::slice::from_raw_parts_mut(dst.get().add(o), factor as usize * cap) };
                list_write::write_whole(window, cap, &nb, edge_labelled);
            });
        };
        let chunk = match memory {
            HostMemory::Pinned => {
                let mut b: PinnedBuffer<u32> = gpu.alloc_pinned(total)?;
                fill(SharedPtr(b.as_mut_slice().as_mut_ptr()));
                Chunk::Pinned(b)
            }
            HostMemory::Managed => {
                let mut b: ManagedBuffer<u32> = gpu.alloc_managed(total)?;
                fill(SharedPtr(b.as_mut_slice().as_mut_ptr()));
                Chunk::Managed(b)
            }
            HostMemory::Device => {
                let mut h = vec![0u32; total];
                fill(SharedPtr(h.as_mut_ptr()));
                Chunk::Device(gpu.upload(&h)?)
            }
        };
        let base_ptr = chunk.device_ptr(&gpu);
        let mut slots = Vec::with_capacity(n);
        let mut entries = Vec::with_capacity(n);
        let mut list_words = 0usize;
        for v in 0..n {
            let nb = g.nbrs(v as VertexId, csm_graph::Version::New);
            let cap = caps[v];
            slots.push(Slot {
                chunk: 0,
                off: offs[v],
                cap,
                clean: nb.is_plain(),
            });
            let ids = base_ptr + offs[v] * 4;
            list_words += raw_len(&nb);
            entries.push(VEntry {
                ids,
                labs: if edge_labelled { ids + u64::from(cap) * 4 } else { 0 },
                base: nb.base.len() as u32,
                len: raw_len(&nb) as u32,
            });
        }
        let labels = g.labels().to_vec();
        let table_cap = n + n / 8 + 1024;
        let mut d_table = gpu.alloc_zeros::<VEntry>(table_cap)?;
        let mut d_labels = gpu.alloc_zeros::<u32>(table_cap)?;
        if n > 0 {
            let s = gpu.stream();
            s.memcpy_htod(&entries[..], &mut d_table.slice_mut(0..n))
                .map_err(|e| GpuError::driver("cuMemcpyHtoD (vertex table)", e))?;
            s.memcpy_htod(&labels[..], &mut d_labels.slice_mut(0..n))
                .map_err(|e| GpuError::driver("cuMemcpyHtoD (labels)", e))?;
        }
        // Labels beyond n read as ABSENT.
        let scatter_entries = kernel(&gpu, MATCH_CU, "scatter_entries")?;
        let scatter_u32 = kernel(&gpu, MATCH_CU, "scatter_u32")?;
        let mut hg = HostGraph {
            tail_used: chunk.len(),
            chunks: vec![chunk],
            chunk_ptrs: vec![base_ptr],
            upload_host: None,
            upload_done: gpu
                .context()
                .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(|e| GpuError::driver("cuEventCreate", e))?,
            upload_queued: false,
            par_min_lists: PAR_SYNC_LISTS,
            gpu,
            memory,
            edge_labelled,
            slots,
            entries,
            labels,
            d_table,
            d_labels,
            scatter_entries,
            scatter_u32,
            list_words,
            stats: SyncStats::default(),
            timing: SyncTiming::default(),
        };
        hg.fill_absent_labels(n, table_cap)?;
        hg.gpu.synchronize()?;
        Ok(hg)
    }

    fn fill_absent_labels(&mut self, from: usize, to: usize) -> GpuResult<()> {
        if to > from {
            let absent = vec![ABSENT; to - from];
            self.gpu
                .stream()
                .memcpy_htod(&absent[..], &mut self.d_labels.slice_mut(from..to))
                .map_err(|e| GpuError::driver("cuMemcpyHtoD (labels)", e))?;
        }
        Ok(())
    }

    /// Sets the number of lists from which a sync decides, places and
    /// writes on rayon's pool (default 2,048; 0: always), for tests and
    /// experiments.
    pub fn set_parallel_min_lists(&mut self, lists: usize) {
        self.par_min_lists = lists;
    }

    /// Where the lists live.
    pub fn memory(&self) -> HostMemory {
        self.memory
    }

    /// Number of vertex slots mirrored.
    pub fn num_vertices(&self) -> usize {
        self.entries.len()
    }

    /// Σ list lengths (both parts) at the last sync.
    pub fn list_words(&self) -> usize {
        self.list_words
    }

    /// Bytes of the lists (ids, and labels for edge-labelled graphs): the
    /// size of the graph for cache budgets.
    pub fn graph_bytes(&self) -> usize {
        self.list_words * 4 * if self.edge_labelled { 2 } else { 1 }
    }

    /// Bytes allocated for lists (headroom and abandoned slots included).
    pub fn allocated_bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.len() * 4).sum()
    }

    /// Whether lists carry edge labels.
    pub fn edge_labelled(&self) -> bool {
        self.edge_labelled
    }

    /// Device address of the vertex table.
    pub fn table_ptr(&self) -> u64 {
        self.d_table.device_ptr(self.gpu.stream()).0
    }

    /// Device address of the vertex labels.
    pub fn labels_ptr(&self) -> u64 {
        self.d_labels.device_ptr(self.gpu.stream()).0
    }

    /// Host copy of `v`'s table entry.
    pub fn entry(&self, v: VertexId) -> Option<VEntry> {
        self.entries.get(v as usize).copied()
    }

    /// Host view of `v`'s raw list as stored (ids, then labels if any);
    /// `None` for device-memory graphs.
    pub fn stored_list(&self, v: VertexId) -> Option<(Vec<u32>, Vec<u32>)> {
        let s = *self.slots.get(v as usize)?;
        let e = self.entries[v as usize];
        let chunk = self.chunks.get(s.chunk as usize)?;
        let h: &[u32] = match chunk {
            Chunk::Pinned(b) => b.as_slice(),
            Chunk::Managed(b) => b.as_slice(),
            Chunk::Device(_) => return None,
        };
        let o = s.off as usize;
        let ids = h[o..o + e.len as usize].to_vec();
        let labs = if self.edge_labelled {
            let q = o + s.cap as usize;
            h[q..q + e.len as usize].to_vec()
        } else {
            Vec::new()
        };
        Some((ids, labs))
    }

    /// Brings the mirror in step with `g` for the vertices in `vertices`
    /// (their lists and labels; ids at or beyond `g.num_vertices()` become
    /// empty and ABSENT) and for every vertex slot `g` gained. Call it after
    /// `stage` with `g.touched()` plus the batch's added/removed vertices,
    /// and after `commit` (or `abort`) with the same set. Every list is
    /// written whole; [`HostGraph::sync_staged`] writes less after `stage`.
    pub fn sync<G: GraphView + ?Sized>(&mut self, g: &G, vertices: &[VertexId]) -> GpuResult<()> {
        self.sync_lists(g, vertices, false, None)
    }

    /// [`HostGraph::sync`], given where the staged batch marked its
    /// deletions (`marks`: [`csm_graph::DynamicGraph::pending_marks`]; `None`
    /// when nothing is staged). A list whose slot holds its committed list
    /// then gets only its appended part and marks written
    /// (pinned and managed memory; the rule is in the private `list_write` module), not
    /// the whole list again. Large syncs write on rayon's pool.
    pub fn sync_staged<G: GraphView + ?Sized>(
        &mut self,
        g: &G,
        vertices: &[VertexId],
        marks: Option<&[(VertexId, u32)]>,
    ) -> GpuResult<()> {
        self.sync_lists(g, vertices, true, marks)
    }

    /// [`HostGraph::sync`] (`appending` false) or
    /// [`HostGraph::sync_staged`].
    fn sync_lists<G: GraphView + ?Sized>(
        &mut self,
        g: &G,
        vertices: &[VertexId],
        appending: bool,
        marks: Option<&[(VertexId, u32)]>,
    ) -> GpuResult<()> {
        let n_old = self.entries.len();
        let n = g.num_vertices();
        let mut dirty: Vec<VertexId> = Vec::with_capacity(vertices.len() + n.saturating_sub(n_old));
        if n > n_old {
            for v in n_old..n {
                self.slots.push(Slot::default());
                self.entries.push(VEntry::default());
                self.labels.push(ABSENT);
                dirty.push(v as VertexId);
            }
            self.stats.new_vertices += (n - n_old) as u64;
        }
        dirty.extend_from_slice(vertices);
        dirty.sort_unstable();
        dirty.dedup();
        dirty.retain(|&v| (v as usize) < self.entries.len());
        let marks_known = marks.is_some();
        let t = Instant::now();
        let mut marks: Vec<(VertexId, u32)> = marks.map(<[_]>::to_vec).unwrap_or_default();
        marks.par_sort_unstable();
        // appended parts are written in place, in memory the host writes
        let appending = appending && self.memory.is_host();
        let many = dirty.len() >= self.par_min_lists;
        // Each list's write, decided from the graph and the slot (reads
        // only: cache misses that threads overlap on large syncs) ...
        let decide = |&v: &VertexId| {
            let vi = v as usize;
            if vi >= n {
                return None;
            }
            let nb = g.nbrs(v, csm_graph::Version::New);
            let stored = Stored {
                len: self.entries[vi].len as usize,
                cap: self.slots[vi].cap as usize,
                clean: self.slots[vi].clean,
            };
            Some(Decision {
                v,
                kind: list_write::choose(stored, &nb, marks_known, appending),
                base: nb.base.len(),
                len: raw_len(&nb),
                plain: nb.is_plain(),
            })
        };
        let decided: Vec<Option<Decision>> = if many {
            dirty.par_iter().map(decide).collect()
        } else {
            dirty.iter().map(decide).collect()
        };
        self.timing.decide = t.elapsed().as_secs_f64();
        // ... then placed: lists that outgrew their slots get fresh ones (one
        // thread: they allocate), then every list its slot's flag, its table
        // entry and its label (on the pool for large syncs) ...
        let t = Instant::now();
        for d in decided.iter().flatten() {
            if d.len > self.slots[d.v as usize].cap as usize {
                self.relocate(d)?;
            }
        }
        let glabels = g.labels();
        let (chunk_ptrs, labelled) = (&self.chunk_ptrs, self.edge_labelled);
        let n_slots = self.entries.len();
        assert!(self.slots.len() == n_slots && self.labels.len() == n_slots);
        let (sp, ep, lp) = (
            SharedPtr(self.slots.as_mut_ptr()),
            SharedPtr(self.entries.as_mut_ptr()),
            SharedPtr(self.labels.as_mut_ptr()),
        );
        let place = |(&v, d): (&VertexId, &Option<Decision>)| {
            let vi = v as usize;
            assert!(vi < n_slots, "a synced vertex has a slot");
            // SAFETY: `vi` is inside all three vectors (just checked; they have
            // the same length); `dirty` is sorted and deduplicated, so each
            // index is written by one call only; nothing else reads or writes
            // the vectors until every call has returned.
            let (slot, entry, label) =
                unsafe { (&mut *sp.get().add(vi), &mut *ep.get().add(vi), &mut *lp.get().add(vi)) };
            *label = glabels.get(vi).copied().unwrap_or(ABSENT);
            let before = entry.len as usize;
            let mut c = Placed::default();
            match d {
                Some(d) => {
                    slot.clean = d.kind == ListWrite::Whole && d.plain;
                    *entry = table_entry(slot, d, chunk_ptrs, labelled);
                    c.lists = 1;
                    match d.kind {
                        ListWrite::Whole => c.words = d.len,
                        ListWrite::Appended => {
                            c.appended = 1;
                            c.words = d.len - d.base;
                        }
                    }
                }
                None => {
                    entry.base = 0;
                    entry.len = 0;
                    slot.clean = false;
                }
            }
            c.after = entry.len as usize;
            c.before = before;
            c
        };
        let placed = if many {
            dirty
                .par_iter()
                .zip(&decided)
                .map(place)
                .reduce(Placed::default, Placed::add)
        } else {
            dirty
                .iter()
                .zip(&decided)
                .map(place)
                .fold(Placed::default(), Placed::add)
        };
        // (kept up to date per list: a sum over the table read 0.8 GB on a
        // 33 M-vertex graph, about 40 ms per call on the H200's host)
        self.list_words = self.list_words - placed.before + placed.after;
        self.stats.lists += placed.lists;
        self.stats.appended += placed.appended;
        self.stats.words += placed.words as u64;
        self.timing.place = t.elapsed().as_secs_f64();
        // ... and written, on rayon's pool for large syncs.
        let t = Instant::now();
        self.write_lists(g, &decided, &marks, many || placed.words >= PAR_SYNC_WORDS)?;
        self.timing.write = t.elapsed().as_secs_f64();
        let t = Instant::now();
        self.upload_entries(&dirty)?;
        self.timing.upload = t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Gives a decided list that outgrew its slot a fresh slot with doubled
    /// capacity.
    fn relocate(&mut self, d: &Decision) -> GpuResult<()> {
        debug_assert_eq!(d.kind, ListWrite::Whole, "an appended write fits its slot");
        let len = d.len;
        let factor = if self.edge_labelled { 2 } else { 1 };
        let cap = (2 * len).max(8);
        let (chunk, off) = self.allocate(cap * factor)?;
        self.slots[d.v as usize] = Slot {
            chunk: chunk as u32,
            off: off as u64,
            cap: u32::try_from(cap).map_err(|_| GpuError::InvalidInput(format!("list of {len} entries")))?,
            clean: false,
        };
        self.stats.relocations += 1;
        Ok(())
    }

    /// The copies of [`HostGraph::sync_staged`] (the `decided` lists, into
    /// the slots placing gave them): in host memory in place (on rayon's
    /// pool when `parallel`), in device memory list by list.
    fn write_lists<G: GraphView + ?Sized>(
        &mut self,
        g: &G,
        decided: &[Option<Decision>],
        marks: &[(VertexId, u32)],
        parallel: bool,
    ) -> GpuResult<()> {
        let labelled = self.edge_labelled;
        let factor = if labelled { 2 } else { 1 };
        if !self.memory.is_host() {
            let gpu = self.gpu.clone();
            for &Decision { v, .. } in decided.iter().flatten() {
                let s = self.slots[v as usize];
                let nb = g.nbrs(v, csm_graph::Version::New);
                let mut window = vec![0u32; s.cap as usize * factor];
                list_write::write_whole(&mut window, s.cap as usize, &nb, labelled);
                let used = if labelled { window.len() } else { raw_len(&nb) };
                self.chunks[s.chunk as usize].write(&gpu, s.off as usize, &window[..used])?;
            }
            return Ok(());
        }
        let bases: Vec<(SharedPtr, usize)> = self
            .chunks
            .iter_mut()
            .map(|c| {
                let h = c.host_mut().expect("host memory");
                (SharedPtr(h.as_mut_ptr()), h.len())
            })
            .collect();
        let slots = &self.slots;
        let write = |&Decision { v, kind, .. }: &Decision| {
            let s = slots[v as usize];
            let (base, chunk_len) = bases[s.chunk as usize];
            let (off, words) = (s.off as usize, s.cap as usize * factor);
            assert!(off + words <= chunk_len, "a slot lies inside its chunk");
            // SAFETY: the window is this vertex's slot, inside its chunk (just
            // checked); slots of distinct vertices are disjoint and `writes`
            // names each vertex once, so no two writers share a word; `self`
            // is borrowed mutably, so nothing else reads the chunks meanwhile.
            let window = unsafe { std::slice::from_raw_parts_mut(base.get().add(off), words) };
            let nb = g.nbrs(v, csm_graph::Version::New);
            match kind {
                ListWrite::Whole => list_write::write_whole(window, s.cap as usize, &nb, labelled),
                ListWrite::Appended => {
                    let lo = marks.partition_point(|&(x, _)| x < v);
                    let hi = marks.partition_point(|&(x, _)| x <= v);
                    let at = marks[lo..hi].iter().map(|m| m.1);
                    list_write::write_appended(window, s.cap as usize, &nb, at, labelled);
                }
            }
        };
        if parallel {
            decided.par_iter().with_min_len(16).flatten().for_each(write);
        } else {
            decided.iter().flatten().for_each(write);
        }
        Ok(())
    }

    /// `words` contiguous words in the tail chunk (a new chunk if needed).
    fn allocate(&mut self, words: usize) -> GpuResult<(usize, usize)> {
        let last = self.chunks.len() - 1;
        if self.tail_used + words <= self.chunks[last].len() {
            let off = self.tail_used;
            self.tail_used += words;
            return Ok((last, off));
        }
        let size = words.max(TAIL_CHUNK_WORDS);
        let chunk = match self.memory {
            HostMemory::Pinned => Chunk::Pinned(self.gpu.alloc_pinned(size)?),
            HostMemory::Managed => Chunk::Managed(self.gpu.alloc_managed(size)?),
            HostMemory::Device => Chunk::Device(self.gpu.alloc_zeros(size)?),
        };
        self.chunk_ptrs.push(chunk.device_ptr(&self.gpu));
        self.chunks.push(chunk);
        self.tail_used = words;
        Ok((self.chunks.len() - 1, 0))
    }

    /// Scatters the entries and labels of `dirty` (sorted) to the device,
    /// growing the device arrays when vertices were added.
    fn upload_entries(&mut self, dirty: &[VertexId]) -> GpuResult<()> {
        if dirty.is_empty() {
            return Ok(());
        }
        let n = self.entries.len();
        let s = self.gpu.stream().clone();
        if n > self.d_table.len() {
            let cap = n + n / 4 + 1024;
            let mut t = self.gpu.alloc_zeros::<VEntry>(cap)?;
            let mut l = self.gpu.alloc_zeros::<u32>(cap)?;
            s.memcpy_htod(&self.entries[..], &mut t.slice_mut(0..n))
                .map_err(|e| GpuError::driver("cuMemcpyHtoD (vertex table)", e))?;
            s.memcpy_htod(&self.labels[..], &mut l.slice_mut(0..n))
                .map_err(|e| GpuError::driver("cuMemcpyHtoD (labels)", e))?;
            self.d_table = t;
            self.d_labels = l;
            self.fill_absent_labels(n, cap)?;
            self.stats.entries_uploaded += n as u64;
            return Ok(());
        }
        let count =
            u32::try_from(dirty.len()).map_err(|_| GpuError::InvalidInput("too many changed vertices".into()))?;
        // The entries, indices and labels go through a pinned, device-mapped
        // buffer that the scatter kernels read in place (zero-copy): no
        // device allocation, no copy call and no wait for the stream. The
        // buffer is written again only once the last scatter has run.
        if self.upload_queued {
            self.upload_done
                .synchronize()
                .map_err(|e| GpuError::driver("cuEventSynchronize (vertex table scatter)", e))?;
            self.upload_queued = false;
        }
        let k = dirty.len();
        let words = k * UPLOAD_WORDS;
        if self.upload_host.as_ref().map_or(true, |b| b.len() < words) {
            self.upload_host = None;
            self.upload_host = Some(self.gpu.alloc_pinned((words + words / 2).max(1 << 16))?);
        }
        let host = self.upload_host.as_mut().expect("allocated");
        let buf = host.as_mut_slice();
        // [entries: 6 words each (VEntry, 8-byte aligned)][indices][labels]
        let (vals, rest) = buf.split_at_mut(k * 6);
        let (idx, rest) = rest.split_at_mut(k);
        let labs = &mut rest[..k];
        for (i, &v) in dirty.iter().enumerate() {
            let e = self.entries[v as usize];
            vals[6 * i..6 * i + 6].copy_from_slice(&[
                e.ids as u32,
                (e.ids >> 32) as u32,
                e.labs as u32,
                (e.labs >> 32) as u32,
                e.base,
                e.len,
            ]);
            idx[i] = v;
            labs[i] = self.labels[v as usize];
        }
        let base = host.device_ptr();
        let (p_vals, p_idx, p_labs) = (base, base + 4 * (6 * k) as u64, base + 4 * (7 * k) as u64);
        let cfg = LaunchConfig {
            grid_dim: (count.div_ceil(256).clamp(1, 1024), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = s.launch_builder(&self.scatter_entries);
        b.arg(&mut self.d_table).arg(&p_idx).arg(&p_vals).arg(&count);
        // SAFETY: argument types match `scatter_entries` (device addresses of
        // the mapped buffer for its pointers); every index < n <= table length;
        // the buffer holds `count` entries, indices and labels.
        unsafe { b.launch(cfg) }.map_err(|e| GpuError::driver("launching scatter_entries", e))?;
        let mut b = s.launch_builder(&self.scatter_u32);
        b.arg(&mut self.d_labels).arg(&p_idx).arg(&p_labs).arg(&count);
        // SAFETY: as above, for the label array.
        unsafe { b.launch(cfg) }.map_err(|e| GpuError::driver("launching scatter_u32", e))?;
        self.upload_done
            .record(&s)
            .map_err(|e| GpuError::driver("cuEventRecord (vertex table scatter)", e))?;
        self.upload_queued = true;
        self.stats.entries_uploaded += dirty.len() as u64;
        Ok(())
    }

    /// Uploads the host's entries of `vertices` again: undoes what
    /// [`crate::hot::HotLists`] pointed at device copies.
    pub fn restore_entries(&mut self, vertices: &[VertexId]) -> GpuResult<()> {
        let mut v: Vec<VertexId> = vertices
            .iter()
            .copied()
            .filter(|&v| (v as usize) < self.entries.len())
            .collect();
        v.sort_unstable();
        v.dedup();
        self.upload_entries(&v)
    }

    /// The device vertex table, for kernels that rewrite entries
    /// ([`crate::hot::HotLists`]).
    pub(crate) fn table_mut(&mut self) -> &mut CudaSlice<VEntry> {
        &mut self.d_table
    }

    /// Downloads the device vertex table and labels (tests).
    pub fn download_table(&self) -> GpuResult<(Vec<VEntry>, Vec<u32>)> {
        let mut t = self.gpu.download(&self.d_table)?;
        let mut l = self.gpu.download(&self.d_labels)?;
        t.truncate(self.entries.len());
        l.truncate(self.entries.len());
        Ok((t, l))
    }
}

impl Drop for HostGraph {
    fn drop(&mut self) {
        // the scatters may still read the upload buffer freed after this
        if self.upload_queued {
            let _ = self.upload_done.synchronize();
        }
    }
}
