//! The GPU-side cache of hot neighbour lists (GCSM Sec. V-B, Fig. 6) and the
//! policies that choose what goes in it.
//!
//! **Layout (DCSR, one allocation).** For `k` cached vertices the pack is one
//! `u32` array: `rowidx[k]` (sorted vertex ids), `rowptr[2k + 1]` (per vertex
//! the start of its list in `colidx` and the start of its appended part, or
//! `u32::MAX` when nothing was appended; the last word is the length of
//! `colidx`), `colidx` (the raw lists: old part with deletion marks, then the
//! appended part) and, for edge-labelled graphs, `collab` parallel to
//! `colidx`. It is packed in pinned host memory and sent with a single DMA
//! copy; the kernel binary-searches `rowidx` before every list access.
//!
//! **Policies ([`CacheSelector`]).** `select` returns the vertices to cache,
//! most valuable first; [`within_budget`] keeps the longest prefix that fits.
//! * [`DegreeSelector`]: highest degree first (the paper's "Naive").
//! * [`KHopSelector`]: every vertex within k hops of the batch (VSGM); fails
//!   with [`GpuError::OverBudget`] when that does not fit.
//! * [`WalkSelector`]: estimated access frequency from random walks on the
//!   execution tree from the batch's seeds (GCSM Sec. IV, merged per seed).
//!   A stand-in for csm-sampler's policy: plugging that in is one
//!   `impl CacheSelector`.

use std::collections::HashMap;
use std::time::Instant;

use csm_graph::{BatchDelta, DynamicGraph, GraphView, Nbrs, Version, VertexId};
use csm_planner::Executor;
use cudarc::driver::{result, CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::device::{Gpu, PinnedBuffer};
use crate::error::{GpuError, GpuResult};
use crate::plan::{QueryPlans, Seed, NONE};
use crate::shared_ptr::SharedPtr;

/// Bytes one cached vertex with a list of `len` entries takes in the pack.
pub fn entry_bytes(len: usize, edge_labelled: bool) -> usize {
    12 + 4 * len * if edge_labelled { 2 } else { 1 }
}

fn raw_len(n: &Nbrs<'_>) -> usize {
    n.base.len() + n.delta.len()
}

/// The longest prefix of `ranked` (duplicates skipped) whose pack fits in
/// `budget` bytes, sorted by vertex id (the `rowidx` order).
pub fn within_budget<G: GraphView + ?Sized>(g: &G, ranked: &[VertexId], budget: usize) -> Vec<VertexId> {
    let el = g.edge_labelled();
    let n = g.num_vertices();
    let mut used = 4usize;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for &v in ranked {
        if v as usize >= n || !seen.insert(v) {
            continue;
        }
        let b = entry_bytes(raw_len(&g.nbrs(v, Version::New)), el);
        if used + b > budget {
            break;
        }
        used += b;
        out.push(v);
    }
    out.sort_unstable();
    out
}

/// Offsets (in words) of the pack's arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackLayout {
    pub k: usize,
    pub rowptr: usize,
    pub colidx: usize,
    /// Offset of `collab` (edge-labelled graphs only).
    pub collab: Option<usize>,
    pub words: usize,
}

impl PackLayout {
    fn new(k: usize, total: usize, edge_labelled: bool) -> PackLayout {
        let rowptr = k;
        let colidx = rowptr + 2 * k + 1;
        let collab = edge_labelled.then_some(colidx + total);
        let words = colidx + total * if edge_labelled { 2 } else { 1 };
        PackLayout {
            k,
            rowptr,
            colidx,
            collab,
            words,
        }
    }
}

/// Packs `vertices` (sorted, unique) of `g` into `dst` (at least
/// `layout.words` long) in the DCSR layout. Returns the layout.
fn pack_into<G: GraphView + ?Sized>(g: &G, vertices: &[VertexId], dst: &mut [u32]) -> PackLayout {
    let el = g.edge_labelled();
    let lens: Vec<usize> = vertices
        .par_iter()
        .map(|&v| raw_len(&g.nbrs(v, Version::New)))
        .collect();
    let total: usize = lens.iter().sum();
    let layout = PackLayout::new(vertices.len(), total, el);
    assert!(dst.len() >= layout.words, "pack buffer too small");
    let k = vertices.len();
    dst[..k].copy_from_slice(vertices);
    let mut start = 0usize;
    let mut starts = Vec::with_capacity(k);
    for (i, &v) in vertices.iter().enumerate() {
        let nb = g.nbrs(v, Version::New);
        dst[layout.rowptr + 2 * i] = start as u32;
        dst[layout.rowptr + 2 * i + 1] = if nb.delta.is_empty() {
            NONE
        } else {
            (start + nb.base.len()) as u32
        };
        starts.push(start);
        start += lens[i];
    }
    dst[layout.rowptr + 2 * k] = total as u32;
    let p = SharedPtr(dst.as_mut_ptr());
    let (colidx, collab) = (layout.colidx, layout.collab);
    vertices
        .par_iter()
        .zip(starts.par_iter())
        .with_min_len(256)
        .for_each(|(&v, &s)| {
            let nb = g.nbrs(v, Version::New);
            // SAFETY: [colidx + s, colidx + s + len) (and the collab range) belong to
            // this vertex only and lie inside `dst` (checked against layout.words).
            unsafe {
                let q = p.get().add(colidx + s);
                std::ptr::copy_nonoverlapping(nb.base.as_ptr(), q, nb.base.len());
                std::ptr::copy_nonoverlapping(nb.delta.as_ptr(), q.add(nb.base.len()), nb.delta.len());
                if let Some(cl) = collab {
                    let q = p.get().add(cl + s);
                    write_labels(nb.base_labels, nb.base.len(), q);
                    write_labels(nb.delta_labels, nb.delta.len(), q.add(nb.base.len()));
                }
            }
        });
    layout
}

/// # Safety
/// `dst` valid for `n` writes.
unsafe fn write_labels(src: &[u32], n: usize, dst: *mut u32) {
    if src.len() == n {
        std::ptr::copy_nonoverlapping(src.as_ptr(), dst, n);
    } else {
        std::ptr::write_bytes(dst, 0, n);
    }
}

/// A host-side DCSR pack (for tests and the CPU emulation of the kernel).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DcsrPack {
    pub layout: PackLayout,
    pub words: Vec<u32>,
}

impl DcsrPack {
    /// Packs `vertices` (sorted, unique) of `g`.
    pub fn build<G: GraphView + ?Sized>(g: &G, vertices: &[VertexId]) -> DcsrPack {
        let total: usize = vertices.iter().map(|&v| raw_len(&g.nbrs(v, Version::New))).sum();
        let layout = PackLayout::new(vertices.len(), total, g.edge_labelled());
        let mut words = vec![0u32; layout.words];
        pack_into(g, vertices, &mut words);
        DcsrPack { layout, words }
    }

    pub fn rowidx(&self) -> &[u32] {
        &self.words[..self.layout.k]
    }

    /// `(ids, labels, base)` of cached vertex `v`, as the kernel finds it.
    pub fn lookup(&self, v: VertexId) -> Option<(&[u32], &[u32], usize)> {
        let i = self.rowidx().binary_search(&v).ok()?;
        let rp = &self.words[self.layout.rowptr..];
        let (s, a, e) = (rp[2 * i] as usize, rp[2 * i + 1], rp[2 * i + 2] as usize);
        let c = self.layout.colidx;
        let ids = &self.words[c + s..c + e];
        let labs = match self.layout.collab {
            Some(cl) => &self.words[cl + s..cl + e],
            None => &[][..],
        };
        let base = if a == NONE { e - s } else { a as usize - s };
        Some((ids, labs, base))
    }
}

/// What loading the cache did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CacheLoad {
    pub vertices: usize,
    pub bytes: usize,
    pub pack_seconds: f64,
    pub copy_seconds: f64,
}

/// The device copy of the DCSR pack, refilled per batch (GCSM step 3), and
/// a per-vertex slot map (`slots[v]` = index of `v` in `rowidx` plus one, 0
/// when `v` is not cached) so that a kernel lookup is one load instead of a
/// binary search of `rowidx`. The map is kept up to date on the device: a
/// load clears the previous pack's entries and sets the new ones.
pub struct DeviceCache {
    staging: Option<PinnedBuffer<u32>>,
    dev: Option<CudaSlice<u32>>,
    layout: PackLayout,
    slots: Option<CudaSlice<u32>>,
    /// Entries of `slots` set from the pack now in `dev` (its `rowidx`).
    slots_set: usize,
    set_slots: Option<CudaFunction>,
    use_slots: bool,
}

impl Default for DeviceCache {
    fn default() -> Self {
        Self::new()
    }
}

impl DeviceCache {
    pub fn new() -> DeviceCache {
        DeviceCache {
            staging: None,
            dev: None,
            layout: PackLayout::default(),
            slots: None,
            slots_set: 0,
            set_slots: None,
            use_slots: true,
        }
    }

    /// Turns the slot map off (lookups binary-search `rowidx`, as in the
    /// paper) or on (the default).
    pub fn set_use_slots(&mut self, on: bool) {
        self.use_slots = on;
    }

    /// Sets (or clears) `slots[rowidx[i]]` for the first `k` ids of the pack
    /// now in `dev`.
    fn update_slots(
        func: &mut Option<CudaFunction>,
        dev: &Option<CudaSlice<u32>>,
        slots: &mut Option<CudaSlice<u32>>,
        gpu: &Gpu,
        k: usize,
        clear: bool,
    ) -> GpuResult<()> {
        if k == 0 {
            return Ok(());
        }
        if func.is_none() {
            *func = Some(crate::nvrtc::kernel(gpu, crate::nvrtc::MATCH_CU, "set_slots")?);
        }
        let (Some(f), Some(dev), Some(slots)) = (&*func, dev, slots) else {
            return Ok(());
        };
        let n = u32::try_from(k).map_err(|_| GpuError::InvalidInput("too many cached vertices".into()))?;
        let clear = u32::from(clear);
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(256).clamp(1, 1024), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let s = gpu.stream();
        let mut b = s.launch_builder(f);
        b.arg(slots).arg(dev).arg(&n).arg(&clear);
        // SAFETY: argument types match `set_slots`; `dev` starts with k
        // vertex ids (rowidx), each below the slot map's length.
        unsafe { b.launch(cfg) }.map_err(|e| GpuError::driver("launching set_slots", e))?;
        Ok(())
    }

    /// Empties the cache (every lookup misses).
    pub fn clear(&mut self) {
        self.layout = PackLayout::default();
    }

    /// Number of cached vertices.
    pub fn len(&self) -> usize {
        self.layout.k
    }

    pub fn is_empty(&self) -> bool {
        self.layout.k == 0
    }

    /// Bytes of the current pack.
    pub fn bytes(&self) -> usize {
        if self.layout.k == 0 {
            0
        } else {
            self.layout.words * 4
        }
    }

    /// Packs `vertices` (sorted, unique) of `g` in pinned memory and copies
    /// the pack to the device with one DMA transfer.
    pub fn load<G: GraphView + ?Sized>(&mut self, gpu: &Gpu, g: &G, vertices: &[VertexId]) -> GpuResult<CacheLoad> {
        let t0 = Instant::now();
        if vertices.is_empty() {
            self.clear();
            return Ok(CacheLoad::default());
        }
        let total: usize = vertices.par_iter().map(|&v| raw_len(&g.nbrs(v, Version::New))).sum();
        if total >= u32::MAX as usize {
            return Err(GpuError::OverBudget(format!(
                "a cache of {total} list entries exceeds the DCSR's 32-bit offsets"
            )));
        }
        let layout = PackLayout::new(vertices.len(), total, g.edge_labelled());
        if self.staging.as_ref().map_or(true, |s| s.len() < layout.words) {
            self.staging = None;
            self.staging = Some(gpu.alloc_pinned(layout.words + layout.words / 4)?);
        }
        let staging = self.staging.as_mut().expect("allocated");
        pack_into(g, vertices, staging.as_mut_slice());
        let t1 = Instant::now();
        // The previous pack's rowidx is still on the device: clear its slots
        // before it is overwritten or freed (stream order).
        if self.slots_set > 0 {
            Self::update_slots(
                &mut self.set_slots,
                &self.dev,
                &mut self.slots,
                gpu,
                self.slots_set,
                true,
            )?;
            self.slots_set = 0;
        }
        if self.dev.as_ref().map_or(true, |d| d.len() < layout.words) {
            self.dev = None;
            self.dev = Some(gpu.alloc_zeros(layout.words + layout.words / 4)?);
        }
        let dev = self.dev.as_ref().expect("allocated");
        let (dst, _rec) = dev.device_ptr(gpu.stream());
        gpu.context()
            .bind_to_thread()
            .map_err(|e| GpuError::driver("cuCtxSetCurrent", e))?;
        // SAFETY: `dst` holds at least layout.words u32; the pinned source
        // stays alive and unmodified until the synchronisation below.
        unsafe { result::memcpy_htod_async(dst, &staging.as_slice()[..layout.words], gpu.stream().cu_stream()) }
            .map_err(|e| GpuError::driver("cuMemcpyHtoDAsync (DCSR pack)", e))?;
        drop(_rec);
        if self.use_slots {
            let n = g.num_vertices();
            if self.slots.as_ref().map_or(true, |s| s.len() < n) {
                self.slots = None;
                self.slots = Some(gpu.alloc_zeros::<u32>(n + n / 8 + 64)?);
            }
            Self::update_slots(&mut self.set_slots, &self.dev, &mut self.slots, gpu, layout.k, false)?;
            self.slots_set = layout.k;
        }
        gpu.synchronize()?;
        self.layout = layout;
        Ok(CacheLoad {
            vertices: layout.k,
            bytes: layout.words * 4,
            pack_seconds: (t1 - t0).as_secs_f64(),
            copy_seconds: t1.elapsed().as_secs_f64(),
        })
    }

    /// `(rowidx, rowptr, colidx, collab, k, slots, nslots)` device addresses
    /// for the kernel (all 0 when empty; `slots` 0 without a slot map).
    pub fn kernel_args(&self, gpu: &Gpu) -> [u64; 7] {
        match (&self.dev, self.layout.k) {
            (Some(d), k) if k > 0 => {
                let base = d.device_ptr(gpu.stream()).0;
                let l = self.layout;
                let (slots, nslots) = match (&self.slots, self.slots_set == k) {
                    (Some(s), true) => (s.device_ptr(gpu.stream()).0, s.len() as u64),
                    _ => (0, 0),
                };
                [
                    base,
                    base + 4 * l.rowptr as u64,
                    base + 4 * l.colidx as u64,
                    l.collab.map_or(0, |c| base + 4 * c as u64),
                    k as u64,
                    slots,
                    nslots,
                ]
            }
            _ => [0; 7],
        }
    }
}

/// A device cache the matching kernel can look lists up in.
pub trait KernelCache {
    /// `(rowidx, rowptr, colidx, collab, ncached, slots, nslots)` device
    /// addresses for the kernel (all 0 when empty; see
    /// [`DeviceCache::kernel_args`]).
    fn kernel_args(&self, gpu: &Gpu) -> [u64; 7];
}

impl KernelCache for DeviceCache {
    fn kernel_args(&self, gpu: &Gpu) -> [u64; 7] {
        DeviceCache::kernel_args(self, gpu)
    }
}

/// Everything a policy may look at to choose the cached vertices.
pub struct SelectCtx<'a> {
    /// The graph with the batch staged.
    pub graph: &'a DynamicGraph,
    pub query: &'a QueryPlans,
    pub delta: &'a BatchDelta,
    /// The kernel's seeds for this batch (the execution tree's roots).
    pub seeds: &'a [Seed],
    /// Cache size in bytes.
    pub budget: usize,
}

/// A cache policy. See the module docs.
pub trait CacheSelector: Send {
    fn name(&self) -> &str;
    /// The vertices to cache, most valuable first (the caller keeps the
    /// prefix that fits the budget).
    fn select(&mut self, ctx: &SelectCtx<'_>) -> GpuResult<Vec<VertexId>>;
    /// What the batch that used the last selection cost (adaptive policies
    /// size their next estimate by it). The default ignores it.
    fn observe(&mut self, _run: &Observed) {}
}

/// Costs of one batch, reported to [`CacheSelector::observe`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observed {
    /// Seeds (execution-tree roots) of the batch.
    pub seeds: usize,
    pub fe_seconds: f64,
    pub dc_seconds: f64,
    pub kernel_seconds: f64,
    pub cache_bytes: usize,
}

/// The `n` vertices of `g` with the longest raw lists, longest first.
pub fn top_degree<G: GraphView + ?Sized>(g: &G, n: usize) -> Vec<VertexId> {
    let mut r: Vec<(u32, VertexId)> = (0..g.num_vertices() as VertexId)
        .into_par_iter()
        .map(|v| (raw_len(&g.nbrs(v, Version::New)) as u32, v))
        .collect();
    if r.len() > n && n > 0 {
        r.select_nth_unstable_by(n - 1, |a, b| b.cmp(a));
        r.truncate(n);
    }
    r.par_sort_unstable_by(|a, b| b.cmp(a));
    r.into_iter().map(|(_, v)| v).collect()
}

/// Highest degree first ("Naive", Sec. VI-A). The ranking is computed on the
/// first call and reused (degrees change little per batch); the lengths that
/// decide how many fit are the current ones.
#[derive(Default)]
pub struct DegreeSelector {
    ranking: Vec<VertexId>,
}

impl DegreeSelector {
    /// Ranks the vertices of `g` by degree now (otherwise the first
    /// `select` does it).
    pub fn prepare<G: GraphView + ?Sized>(&mut self, g: &G) {
        let mut r: Vec<(u32, VertexId)> = (0..g.num_vertices() as VertexId)
            .into_par_iter()
            .map(|v| (raw_len(&g.nbrs(v, Version::New)) as u32, v))
            .collect();
        r.par_sort_unstable_by(|a, b| b.cmp(a));
        self.ranking = r.into_iter().map(|(_, v)| v).collect();
    }
}

impl CacheSelector for DegreeSelector {
    fn name(&self) -> &str {
        "degree"
    }
    fn select(&mut self, ctx: &SelectCtx<'_>) -> GpuResult<Vec<VertexId>> {
        let g = ctx.graph;
        if self.ranking.is_empty() {
            self.prepare(g);
        }
        // Hand back a little more than fits (the caller cuts exactly).
        let el = g.edge_labelled();
        let mut used = 0usize;
        let mut out = Vec::new();
        for &v in &self.ranking {
            if v as usize >= g.num_vertices() {
                continue;
            }
            used += entry_bytes(raw_len(&g.nbrs(v, Version::New)), el);
            out.push(v);
            if used > ctx.budget {
                break;
            }
        }
        Ok(out)
    }
}

/// Every vertex within `k` hops of a batch endpoint, in the union of the old
/// and new graphs (VSGM). `k = None` uses the query's read distance.
#[derive(Default)]
pub struct KHopSelector {
    pub k: Option<u32>,
}

impl CacheSelector for KHopSelector {
    fn name(&self) -> &str {
        "khop"
    }
    fn select(&mut self, ctx: &SelectCtx<'_>) -> GpuResult<Vec<VertexId>> {
        let g = ctx.graph;
        let k = self.k.unwrap_or(ctx.query.read_hops);
        let el = g.edge_labelled();
        let n = g.num_vertices();
        let mut seen = vec![false; n];
        let mut frontier: Vec<VertexId> = Vec::new();
        for e in ctx.delta.inserted.iter().chain(&ctx.delta.deleted) {
            for x in [e.u, e.v] {
                if !seen[x as usize] {
                    seen[x as usize] = true;
                    frontier.push(x);
                }
            }
        }
        let mut out: Vec<VertexId> = Vec::new();
        let mut used = 4usize;
        let mut hop = 0;
        loop {
            for &v in &frontier {
                used += entry_bytes(raw_len(&g.nbrs(v, Version::New)), el);
            }
            if used > ctx.budget {
                return Err(GpuError::OverBudget(format!(
                    "VSGM: the lists within {hop} of {k} hops of the batch take more than {used} \
                     bytes, over the cache budget of {} bytes",
                    ctx.budget
                )));
            }
            out.extend_from_slice(&frontier);
            if hop == k {
                break;
            }
            hop += 1;
            let mut next = Vec::new();
            for &v in &frontier {
                let nb = g.nbrs(v, Version::New);
                for &w in nb.base.iter().chain(nb.delta) {
                    let w = w & !csm_graph::view::MARK;
                    if !seen[w as usize] {
                        seen[w as usize] = true;
                        next.push(w);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        Ok(out)
    }
}

/// GCSM-style access-frequency estimate from random walks on the execution
/// tree (Sec. IV), run as one merged execution per seed.
///
/// Every seed (root) starts `walks` walks. At a node reached by `B` walks
/// with weight `w`, each list the node reads gets `B · w`; the node's
/// children (computed with the planner's executor, i.e. the kernel's
/// filters) share the `B` walks uniformly at random, and a child's weight is
/// `w · |children|`. This is Knuth's path estimator: a walk reaches a node
/// with probability `1 / Π |children|` along its path, so every read is
/// counted with its inverse probability and the sums are unbiased estimates
/// of the access counts (times `walks`). Unlike the paper's `1/D` stopping
/// rule (Sec. IV-A), walks never stop early, so the cost per seed is at most
/// `walks · (depth - 2)` candidate computations however skewed the degrees
/// are; with `D` in the hundreds of thousands (R-MAT hubs) the paper's walks
/// almost never get past the first level. Vertices are ranked by estimate.
///
/// A stand-in for csm-sampler's policy (plug that in through
/// [`CacheSelector`]).
pub struct WalkSelector {
    /// Walks per seed (at most).
    pub walks: u64,
    /// Walks per batch (at most; `None`: no cap): with many seeds each gets
    /// `max(min_walks, total / seeds)` walks, so that the estimate's cost
    /// grows slower than the batch.
    pub max_total_walks: Option<u64>,
    /// Walks per seed when the total cap applies (at least 1).
    pub min_walks: u64,
    /// Adaptive cost bound (`None`: off): the estimate gets at most this
    /// fraction of the predicted kernel time, and the cache at most the bytes
    /// the copy moves in this fraction of it. The predictions come from
    /// earlier batches ([`CacheSelector::observe`]): kernel time per seed,
    /// estimate time per walk, copy time per byte. When not even one walk
    /// per seed fits, a stride of the seeds is walked; when no walk fits,
    /// nothing is cached (the batch runs zero-copy only).
    pub cost_fraction: Option<f64>,
    /// The estimate's own fraction of the predicted kernel time (`None`:
    /// `cost_fraction`); the copy keeps `cost_fraction`.
    pub walk_fraction: Option<f64>,
    /// Nothing is estimated or cached when the predicted kernel time of the
    /// batch (kernel time per seed of earlier batches times the seeds) is
    /// below this many seconds: the estimate's and the copy's fixed costs
    /// (0.5-2 ms) would outweigh what the cache saves (`None`: always
    /// estimate; with nothing predicted yet, see `cold_skip_seeds`). Default
    /// 10 ms (match v4: 5 ms; 5-50 ms were compared side by side on match
    /// v5's kernels, docs/GPU_NOTES.md "match v5, skip threshold").
    pub skip_below: Option<f64>,
    /// With `skip_below` set and nothing predicted yet (the query's first
    /// batch), batches of fewer seeds than this skip the estimate too
    /// (match v6: 512; `None`: the first batch always estimates, match
    /// v5). The next batch's prediction comes from the uncached kernel.
    pub cold_skip_seeds: Option<usize>,
    /// Fill what the walk-ranked lists leave of the budget with the longest
    /// lists (match v4): the walks see only part of the lists a large batch
    /// reads, and a degree-ranked cache ("Naive") reads fewer host bytes on
    /// the heavy rows. Only under the adaptive byte bound (after a batch of
    /// the query was observed), so the copy stays within its share.
    pub degree_fill: bool,
    /// Predict conservatively (match v4; see `observe`); off: plain moving
    /// averages (match v2).
    pub conservative: bool,
    hubs: std::sync::Arc<Vec<VertexId>>,
    pub seed: u64,
    batch: u64,
    kernel_per_seed: Option<f64>,
    fe_per_walk: Option<f64>,
    dc_per_byte: Option<f64>,
    last_walks: u64,
}

impl Default for WalkSelector {
    fn default() -> Self {
        WalkSelector {
            walks: 16,
            max_total_walks: Some(1 << 15),
            min_walks: 4,
            cost_fraction: Some(0.05),
            walk_fraction: None,
            skip_below: Some(0.010),
            cold_skip_seeds: Some(512),
            degree_fill: true,
            conservative: true,
            hubs: std::sync::Arc::new(Vec::new()),
            seed: 0x6c73_6d63,
            batch: 0,
            kernel_per_seed: None,
            fe_per_walk: None,
            dc_per_byte: None,
            last_walks: 0,
        }
    }
}

impl WalkSelector {
    /// A selector starting `walks` walks per seed.
    pub fn with_walks(walks: u64) -> Self {
        WalkSelector {
            walks: walks.max(1),
            ..Self::default()
        }
    }

    /// Caps the walks of one batch (`None`: `walks` per seed however many
    /// seeds there are).
    pub fn with_total(mut self, total: Option<u64>) -> Self {
        self.max_total_walks = total;
        self
    }

    /// Sets (or turns off) the adaptive cost bound ([`Self::cost_fraction`]).
    pub fn with_cost_fraction(mut self, f: Option<f64>) -> Self {
        self.cost_fraction = f;
        self
    }

    /// Sets (or turns off) the small-batch skip ([`Self::skip_below`]).
    pub fn with_skip_below(mut self, s: Option<f64>) -> Self {
        self.skip_below = s;
        self
    }

    /// Sets (or turns off) the first batch's skip ([`Self::cold_skip_seeds`]).
    pub fn with_cold_skip(mut self, seeds: Option<usize>) -> Self {
        self.cold_skip_seeds = seeds;
        self
    }

    /// Turns the conservative predictions on or off ([`Self::conservative`]).
    pub fn with_conservative(mut self, on: bool) -> Self {
        self.conservative = on;
        self
    }

    /// Sets the estimate's own fraction ([`Self::walk_fraction`]).
    pub fn with_walk_fraction(mut self, f: Option<f64>) -> Self {
        self.walk_fraction = f;
        self
    }

    /// Sets (or turns off) the degree fill ([`Self::degree_fill`]).
    pub fn with_degree_fill(mut self, on: bool) -> Self {
        self.degree_fill = on;
        self
    }

    /// Ranks the longest lists of `g` for the degree fill now (otherwise the
    /// first batch that fills does it, inside its estimate time).
    pub fn prepare<G: GraphView + ?Sized>(&mut self, g: &G) {
        self.hubs = std::sync::Arc::new(top_degree(g, 1 << 20));
    }

    /// Shares a ranking made by [`Self::prepare`] (or [`top_degree`]).
    pub fn with_hubs(mut self, hubs: std::sync::Arc<Vec<VertexId>>) -> Self {
        self.hubs = hubs;
        self
    }

    /// The ranking of the degree fill.
    pub fn hubs(&self) -> std::sync::Arc<Vec<VertexId>> {
        self.hubs.clone()
    }

    /// Whether a batch of `seeds` seeds is predicted too light to be worth
    /// an estimate ([`Self::skip_below`]).
    pub fn skips(&self, seeds: usize) -> bool {
        match (self.skip_below, self.kernel_per_seed) {
            (Some(t), Some(kps)) => kps * seeds as f64 <= t,
            (Some(_), None) => self.cold_skip_seeds.is_some_and(|n| seeds < n),
            _ => false,
        }
    }

    /// `(walks per seed, seed stride)` for a batch of `seeds` seeds after
    /// the caps and the adaptive bound; 0 walks: estimate nothing.
    pub fn plan_walks(&self, seeds: usize) -> (u64, usize) {
        let w = self.walks_per_seed(seeds);
        let (Some(f), Some(kps), Some(fpw)) = (self.cost_fraction, self.kernel_per_seed, self.fe_per_walk) else {
            return (w, 1);
        };
        let f = self.walk_fraction.unwrap_or(f);
        let n = seeds.max(1) as f64;
        let afford = (f * kps * n / fpw.max(1e-12)).floor();
        if afford >= n {
            (((afford / n) as u64).clamp(1, w), 1)
        } else if afford >= 1.0 {
            (1, (n / afford).ceil() as usize)
        } else {
            (0, 1)
        }
    }

    /// Bytes the copy may move for a batch of `seeds` seeds under the
    /// adaptive bound (None: no bound yet).
    pub fn byte_bound(&self, seeds: usize) -> Option<usize> {
        let (f, kps, dpb) = (self.cost_fraction?, self.kernel_per_seed?, self.dc_per_byte?);
        Some((f * kps * seeds.max(1) as f64 / dpb.max(1e-15)) as usize)
    }

    /// Walks per seed for a batch of `seeds` seeds.
    pub fn walks_per_seed(&self, seeds: usize) -> u64 {
        let w = self.walks.max(1);
        match self.max_total_walks {
            Some(t) => w.min((t / seeds.max(1) as u64).max(self.min_walks.max(1))),
            None => w,
        }
    }
}

struct Walker<'a, G: GraphView + ?Sized> {
    g: &'a G,
    plan: &'a csm_planner::Plan,
    ex: Executor,
    rng: ChaCha8Rng,
    acc: HashMap<VertexId, f64>,
    bufs: Vec<Vec<VertexId>>,
}

impl<G: GraphView + ?Sized> Walker<'_, G> {
    fn walk(&mut self, emb: &mut [VertexId; crate::plan::MAXQ], d: usize, b: u64, w: f64) {
        let level = &self.plan.levels[d];
        let inc = b as f64 * w;
        for r in &level.reads {
            *self.acc.entry(emb[r.pos as usize]).or_insert(0.0) += inc;
        }
        if d + 1 >= self.plan.depth() {
            return; // the children are leaves: they read nothing
        }
        let mut buf = std::mem::take(&mut self.bufs[d]);
        self.ex.candidates(self.g, self.plan, &emb[..d], &mut buf);
        let k = buf.len();
        if k > 0 {
            // Share the b walks uniformly among the k children: b / k each,
            // and the remainder to uniformly drawn children.
            let each = b / k as u64;
            let mut picks: Vec<u32> = (0..b % k as u64).map(|_| self.rng.random_range(0..k as u32)).collect();
            picks.sort_unstable();
            let mut shares: Vec<(usize, u64)> = Vec::new();
            if each > 0 {
                shares.extend((0..k).map(|i| (i, each)));
                for &i in &picks {
                    shares[i as usize].1 += 1;
                }
            } else {
                for &i in &picks {
                    match shares.last_mut() {
                        Some((j, n)) if *j == i as usize => *n += 1,
                        _ => shares.push((i as usize, 1)),
                    }
                }
            }
            let cw = w * k as f64;
            for (i, n) in shares {
                emb[d] = buf[i];
                self.walk(emb, d + 1, n, cw);
            }
        }
        self.bufs[d] = buf;
    }
}

impl CacheSelector for WalkSelector {
    fn name(&self) -> &str {
        "walk"
    }
    fn select(&mut self, ctx: &SelectCtx<'_>) -> GpuResult<Vec<VertexId>> {
        let g = ctx.graph;
        let roots = ctx.seeds;
        if roots.is_empty() {
            return Ok(Vec::new());
        }
        self.batch += 1;
        let seed = self.seed ^ self.batch.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let (walks, stride) = self.plan_walks(roots.len());
        self.last_walks = 0;
        if walks == 0 || self.skips(roots.len()) {
            return Ok(Vec::new());
        }
        let strided: Vec<Seed>;
        let roots: &[Seed] = if stride > 1 {
            strided = roots.iter().step_by(stride).copied().collect();
            &strided
        } else {
            roots
        };
        self.last_walks = walks * roots.len() as u64;
        let plans = &ctx.query.plans;
        // Chunks small enough to keep every thread busy on small batches
        // (a seed's walks are sequential, and one seed can take milliseconds).
        let per = roots
            .len()
            .div_ceil(4 * rayon::current_num_threads().max(1))
            .clamp(1, 16);
        let acc: HashMap<VertexId, f64> = roots
            .par_chunks(per)
            .enumerate()
            .map(|(ci, chunk)| {
                let mut acc: HashMap<VertexId, f64> = HashMap::new();
                let mut ex = Executor::new();
                let mut bufs = vec![Vec::new(); crate::plan::MAXQ];
                for (j, s) in chunk.iter().enumerate() {
                    let plan = &plans[s.plan as usize].plan;
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    rng.set_stream((ci * per + j) as u64);
                    let mut wk = Walker {
                        g,
                        plan,
                        ex,
                        rng,
                        acc,
                        bufs,
                    };
                    let mut emb = [0 as VertexId; crate::plan::MAXQ];
                    emb[0] = s.x;
                    emb[1] = s.y;
                    if plan.depth() > 2 {
                        wk.walk(&mut emb, 2, walks, f64::from(s.weight.max(1)));
                    }
                    acc = wk.acc;
                    ex = wk.ex;
                    bufs = wk.bufs;
                }
                acc
            })
            .reduce(HashMap::new, |mut a, mut b| {
                if a.len() < b.len() {
                    std::mem::swap(&mut a, &mut b);
                }
                for (k, v) in b {
                    *a.entry(k).or_insert(0.0) += v;
                }
                a
            });
        let mut ranked: Vec<(VertexId, f64)> = acc.into_iter().collect();
        ranked.par_sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut out: Vec<VertexId> = ranked.into_iter().map(|(v, _)| v).collect();
        if let Some(max) = self.byte_bound(ctx.seeds.len()) {
            let el = g.edge_labelled();
            if self.degree_fill {
                if self.hubs.is_empty() {
                    self.prepare(g);
                }
                // Walk-ranked first, then the longest lists until the budget
                // (or the byte bound) is reached; within_budget skips repeats.
                let cap = max.min(ctx.budget);
                let mut used: usize = out
                    .iter()
                    .map(|&v| entry_bytes(raw_len(&g.nbrs(v, Version::New)), el))
                    .sum();
                for &v in self.hubs.iter() {
                    if used > cap {
                        break;
                    }
                    if (v as usize) < g.num_vertices() {
                        used += entry_bytes(raw_len(&g.nbrs(v, Version::New)), el);
                        out.push(v);
                    }
                }
            }
            let mut used = 0usize;
            let keep = out
                .iter()
                .take_while(|&&v| {
                    used += entry_bytes(raw_len(&g.nbrs(v, Version::New)), el);
                    used <= max
                })
                .count();
            out.truncate(keep);
        }
        Ok(out)
    }

    fn observe(&mut self, run: &Observed) {
        let ema = |old: Option<f64>, x: f64| Some(old.map_or(x, |o| 0.5 * o + 0.5 * x));
        let c = self.conservative;
        // Conservative predictions (match v4): a kernel time per seed is
        // the lower of the average and the last batch (one heavy-tailed
        // batch should not open the estimate's and copy's bounds for the
        // next ones); estimate and copy costs the higher.
        if run.seeds > 0 && run.kernel_seconds > 0.0 {
            let x = run.kernel_seconds / run.seeds as f64;
            self.kernel_per_seed = ema(self.kernel_per_seed, x).map(|e| if c { e.min(x) } else { e });
        }
        // Few walks or bytes measure mostly fixed costs: learn from big runs.
        if self.last_walks >= 256 && run.fe_seconds > 0.0 {
            let x = run.fe_seconds / self.last_walks as f64;
            self.fe_per_walk = ema(self.fe_per_walk, x).map(|e| if c { e.max(x) } else { e });
        }
        if run.cache_bytes >= 1 << 20 && run.dc_seconds > 0.0 {
            let x = run.dc_seconds / run.cache_bytes as f64;
            self.dc_per_byte = ema(self.dc_per_byte, x).map(|e| if c { e.max(x) } else { e });
        }
    }
}

/// csm-sampler's cache policies ([`csm_sampler::CachePolicy`]) as a
/// [`CacheSelector`]: the plug for the sampler crate.
pub struct SamplerSelector {
    name: String,
    kind: SamplerKind,
    batch: u64,
}

enum SamplerKind {
    /// Any policy, as is.
    Policy(Box<dyn csm_sampler::CachePolicy>),
    /// The sampled (GCSM) policy with `walks_per_root` walks per root of
    /// each batch's execution tree (`None`: the policy's own rule).
    Sampled {
        policy: csm_sampler::SampledPolicy,
        walks_per_root: Option<u64>,
    },
}

impl SamplerSelector {
    /// Wraps any csm-sampler policy.
    pub fn policy(policy: Box<dyn csm_sampler::CachePolicy>) -> SamplerSelector {
        SamplerSelector {
            name: format!("sampler:{}", policy.name()),
            kind: SamplerKind::Policy(policy),
            batch: 0,
        }
    }

    /// csm-sampler's GCSM policy (merged walks of Sec. IV-B, parallel):
    /// `walks_per_root = Some(k)` draws `k` walks per execution-tree root,
    /// `None` the paper's `|ΔE| D^(n-2) / 32^n`.
    pub fn sampled(walks_per_root: Option<u64>) -> SamplerSelector {
        let mut policy = csm_sampler::SampledPolicy::default();
        policy.walk.parallel = true;
        SamplerSelector {
            name: "sampler:sampled".into(),
            kind: SamplerKind::Sampled { policy, walks_per_root },
            batch: 0,
        }
    }
}

impl CacheSelector for SamplerSelector {
    fn name(&self) -> &str {
        &self.name
    }
    fn select(&mut self, ctx: &SelectCtx<'_>) -> GpuResult<Vec<VertexId>> {
        self.batch += 1;
        let sctx = csm_sampler::SelectionContext {
            graph: ctx.graph,
            delta: ctx.delta,
            plans: &ctx.query.plans,
            budget_bytes: ctx.budget,
            seed: self.batch,
        };
        let report = match &self.kind {
            SamplerKind::Policy(p) => p.select_report(&sctx),
            SamplerKind::Sampled { policy, walks_per_root } => {
                let mut p = *policy;
                if let Some(k) = walks_per_root {
                    let roots = sctx.tree().num_roots() as u64;
                    p.rule = csm_sampler::WalkRule::Fixed(k.saturating_mul(roots.max(1)));
                }
                csm_sampler::CachePolicy::select_report(&p, &sctx)
            }
        };
        report
            .map(|s| s.vertices)
            .map_err(|e| GpuError::OverBudget(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first batch (nothing predicted) estimates unless the cold skip
    /// says it is small; afterwards the prediction decides.
    #[test]
    fn cold_skip_applies_only_before_the_first_prediction() {
        let w = WalkSelector::default().with_cold_skip(None);
        assert!(!w.skips(10), "without the cold skip the first batch estimates");
        let mut w = w.with_cold_skip(Some(100));
        assert!(w.skips(10) && !w.skips(100));
        w.observe(&Observed {
            seeds: 10,
            fe_seconds: 0.0,
            dc_seconds: 0.0,
            kernel_seconds: 0.010,
            cache_bytes: 0,
        });
        // 1 ms per seed: 5 seeds predict 5 ms (below 10 ms), 50 seeds 50 ms.
        assert!(w.skips(5) && !w.skips(50));
        assert!(!w.with_skip_below(None).with_cold_skip(Some(100)).skips(10));
    }
}
