//! Match v12: a batch's hot lists, copied to device memory before its kernel.
//!
//! GCSM caches the lists its sampler ranks most often read (Sec. IV, V-B).
//! At the top of that ranking sit the lists of the batch's own endpoints:
//! every seed binds an endpoint pair, and each node below the seed reads
//! their lists again. Counted exactly (the `resident_rank` example, R-MAT
//! like the bench's, kept triples, batches of 64 to 8,192), those lists take
//! 37-74% of a modelled zero-copy time (a random 128-byte line per list
//! read, then sequential lines), while a resident set ranked by degree or
//! by past accesses serves 15-30% of it: the endpoints change every batch,
//! and the per-batch oracle set that serves most of the rest is mostly them.
//!
//! Their rank needs no estimate: the staged batch names them. So the
//! resident cache's engine can copy the changed lists that its resident
//! set does not serve into a device area before the kernel:
//! one launch of `gather_lists` (kernels/match.cu), a warp per list, reads
//! each list once from pinned host memory with coalesced loads and points
//! its vertex-table entry at the copy (the `HOT` bit in the entry's length
//! tells the kernel the list is in device memory). [`HotLists::restore`]
//! puts the host entries back once the batch's kernels are done.
//!
//! **Measured, it does not pay** (docs/GPU_NOTES.md, match v12; H100, the
//! 500 M-edge split bench): with 40% of the budget as hot area the kernel
//! makes half the host lookups but reads as many host bytes (the smaller
//! resident set loses hub reads), and the kernel was already copying an
//! endpoint's list once per run of siblings into its per-warp staging
//! area, which the line model above ignores; the copy and its wait cost
//! 0.15-1.9 ms a batch. `gcsm-persist-hot` was 0.91x zp where the same
//! run's `gcsm-persist` was 1.27x. So it is off by default: an opt-in
//! policy for other graphs and kernels.

use std::sync::Arc;

use csm_graph::VertexId;
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::device::Gpu;
use crate::error::{GpuError, GpuResult};
use crate::host_graph::{HostGraph, HostMemory};
use crate::nvrtc::{kernel, MATCH_CU};

/// Share of the cache budget the bench's `gcsm-persist-hot` gives the hot
/// area (the resident set gets the rest). [`crate::GpuEngine`] uses none
/// unless told ([`crate::GpuEngine::with_hot_frac`]): see the module docs.
pub const HOT_FRAC: f64 = 0.4;

/// Splits a cache `budget` (bytes) between the hot area and the resident
/// set: `frac` of it (clamped to `[0, 1]`) to hot lists, none when that is
/// less than one 4-byte list entry. Returns `(hot, resident)` bytes, which
/// add up to `budget`.
pub fn split_budget(budget: usize, frac: f64) -> (usize, usize) {
    let hot = (budget as f64 * frac.clamp(0.0, 1.0)) as usize;
    let hot = if hot < 4 { 0 } else { hot.min(budget) };
    (hot, budget - hot)
}

/// What one [`HotLists::stage`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HotLoad {
    /// Lists copied.
    pub lists: usize,
    /// Bytes copied (ids and, for edge-labelled graphs, edge labels).
    pub bytes: usize,
    /// Candidates left out: served by the resident set, empty, or past the
    /// area's capacity.
    pub left: usize,
    /// Wall time of the selection, the job upload and the copy (the copy
    /// waited for).
    pub seconds: f64,
}

/// The lists to copy: `(vertex, word offset)` for candidates of
/// `words(v) > 0` words, shortest first, while they fit in `cap` words.
/// Pure bookkeeping (no device), so that it can be tested anywhere.
pub fn choose(candidates: &[VertexId], words: impl Fn(VertexId) -> usize, cap: usize) -> Vec<(VertexId, u32)> {
    let mut c: Vec<(usize, VertexId)> = candidates
        .iter()
        .map(|&v| (words(v), v))
        .filter(|&(w, _)| w > 0 && w <= cap)
        .collect();
    c.sort_unstable();
    c.dedup_by_key(|x| x.1);
    let mut out = Vec::with_capacity(c.len());
    let mut used = 0usize;
    for (w, v) in c {
        if used + w > cap {
            break;
        }
        out.push((v, used as u32));
        used += w;
    }
    out
}

/// The device area of a batch's hot lists and the vertices it holds.
pub struct HotLists {
    gpu: Arc<Gpu>,
    area: CudaSlice<u32>,
    jobs: Option<CudaSlice<u32>>,
    gather: CudaFunction,
    staged: Vec<VertexId>,
}

impl HotLists {
    /// An area of `bytes` (at least one word) on `gpu`.
    pub fn new(gpu: Arc<Gpu>, bytes: usize) -> GpuResult<HotLists> {
        let area = gpu.alloc_zeros::<u32>((bytes / 4).max(1))?;
        let gather = kernel(&gpu, MATCH_CU, "gather_lists")?;
        Ok(HotLists {
            gpu,
            area,
            jobs: None,
            gather,
            staged: Vec::new(),
        })
    }

    /// Capacity in bytes.
    pub fn capacity_bytes(&self) -> usize {
        4 * self.area.len()
    }

    /// The vertices whose lists the last [`Self::stage`] copied (sorted).
    pub fn staged(&self) -> &[VertexId] {
        &self.staged
    }

    /// Copies the lists of `candidates` that `served` (the resident set)
    /// does not cover into the area and points their table entries at the
    /// copies; waits for the copy. Nothing for lists outside pinned memory.
    /// Call [`Self::restore`] before the host graph's next change.
    pub fn stage(
        &mut self,
        host: &mut HostGraph,
        candidates: &[VertexId],
        served: impl Fn(VertexId) -> bool,
    ) -> GpuResult<HotLoad> {
        let t = std::time::Instant::now();
        if !self.staged.is_empty() {
            self.restore(host)?;
        }
        if host.memory() != HostMemory::Pinned {
            return Ok(HotLoad {
                left: candidates.len(),
                ..HotLoad::default()
            });
        }
        let factor = if host.edge_labelled() { 2 } else { 1 };
        let words = |v: VertexId| {
            if served(v) {
                return 0;
            }
            host.entry(v).map_or(0, |e| factor * e.len as usize)
        };
        let chosen = choose(candidates, words, self.area.len());
        let mut load = HotLoad {
            lists: chosen.len(),
            left: candidates.len() - chosen.len(),
            ..HotLoad::default()
        };
        if chosen.is_empty() {
            load.seconds = t.elapsed().as_secs_f64();
            return Ok(load);
        }
        // the lists lie back to back: the last one ends where the copy does
        let &(last, off) = chosen.last().expect("not empty");
        load.bytes = 4 * (off as usize + words(last));
        let jobs: Vec<u32> = chosen.iter().flat_map(|&(v, off)| [v, off]).collect();
        if self.jobs.as_ref().map_or(true, |j| j.len() < jobs.len()) {
            self.jobs = None;
            self.jobs = Some(self.gpu.alloc_zeros::<u32>(jobs.len().next_power_of_two())?);
        }
        let d_jobs = self.jobs.as_mut().expect("allocated");
        let s = self.gpu.stream().clone();
        s.memcpy_htod(&jobs[..], &mut d_jobs.slice_mut(0..jobs.len()))
            .map_err(|e| GpuError::driver("cuMemcpyHtoD (hot jobs)", e))?;
        let k = chosen.len() as u32;
        let labelled = u32::from(host.edge_labelled());
        // 8 warps a block, one list a warp
        let cfg = LaunchConfig {
            grid_dim: (k.div_ceil(8).clamp(1, 4096), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = s.launch_builder(&self.gather);
        b.arg(host.table_mut())
            .arg(&*d_jobs)
            .arg(&k)
            .arg(&mut self.area)
            .arg(&labelled);
        // SAFETY: argument types match `gather_lists`; every job's vertex is
        // below the table's length (`host.entry` knew it) and its words fit
        // in the area (`choose`).
        unsafe { b.launch(cfg) }.map_err(|e| GpuError::driver("launching gather_lists", e))?;
        self.gpu.synchronize()?;
        self.staged = chosen.iter().map(|&(v, _)| v).collect();
        self.staged.sort_unstable();
        load.seconds = t.elapsed().as_secs_f64();
        Ok(load)
    }

    /// Points the staged vertices' table entries back at their host lists.
    pub fn restore(&mut self, host: &mut HostGraph) -> GpuResult<()> {
        let staged = std::mem::take(&mut self.staged);
        host.restore_entries(&staged)
    }
}

#[cfg(test)]
mod tests {
    use super::{choose, split_budget};

    #[test]
    fn budget_splits_add_up_and_skip_areas_under_one_entry() {
        assert_eq!(split_budget(1000, 0.4), (400, 600));
        assert_eq!(split_budget(1000, 0.0), (0, 1000));
        assert_eq!(split_budget(1000, 0.003), (0, 1000));
        assert_eq!(split_budget(1000, 0.004), (4, 996));
        assert_eq!(split_budget(1000, 7.0), (1000, 0));
        assert_eq!(split_budget(1000, -1.0), (0, 1000));
    }

    #[test]
    fn choose_takes_the_shortest_lists_that_fit() {
        let len = |v: u32| [0usize, 5, 3, 9, 4, 2][v as usize];
        // 0 is empty; capacity 10 takes 5 (2), 2 (3), then 4 (4) would make 9
        let c = choose(&[0, 1, 2, 3, 4, 5, 2], len, 10);
        assert_eq!(c, vec![(5, 0), (2, 2), (4, 5)]);
        // a list longer than the area is left out, shorter ones still fit
        let c = choose(&[3, 5], len, 8);
        assert_eq!(c, vec![(5, 0)]);
        assert!(choose(&[1, 3], len, 0).is_empty());
    }
}
