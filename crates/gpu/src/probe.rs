//! Read-bandwidth probes (probe v1) and zero-copy round-trip helpers.
//!
//! GCSM's design rests on the gap between device-memory reads and zero-copy
//! reads of pinned host memory over the interconnect, especially for the
//! fine-grained, 128-byte-line accesses of neighbour-list lookups (Sec. II-C;
//! Sec. V-C falls back to zero-copy for lists not cached on the GPU). These
//! probes measure both patterns — sequential streaming and random 128-byte
//! lines — on device memory, pinned device-mapped host memory and managed
//! memory, with the kernels of `kernels/probe.cu`.

use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};
use serde::Serialize;

use crate::device::{Gpu, ManagedBuffer, PinnedBuffer};
use crate::error::{GpuError, GpuResult};
use crate::nvrtc::{kernel, PROBE_CU};

/// Bytes per random read: one warp loads one 128-byte line.
pub const LINE_BYTES: usize = 128;

/// Threads per block of the probe kernels.
const PROBE_BLOCK: u32 = 256;

/// Which memory a probe reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ProbeMemory {
    /// Device (HBM) memory: GCSM's GPU-side cache.
    Device,
    /// Pinned, device-mapped host memory read in place (zero-copy).
    ZeroCopy,
    /// Managed memory, resident on the host before the (single, cold) pass.
    Managed,
}

impl ProbeMemory {
    /// Short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            ProbeMemory::Device => "device",
            ProbeMemory::ZeroCopy => "zero-copy (pinned, mapped)",
            ProbeMemory::Managed => "managed (cold, host-resident)",
        }
    }
}

/// Outcome of one probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeResult {
    /// Memory read.
    pub memory: ProbeMemory,
    /// Random 128-byte lines (`true`) or sequential.
    pub random: bool,
    /// Bytes read by one pass.
    pub bytes: u64,
    /// Number of timed passes.
    pub reps: u32,
    /// Fastest pass, ms.
    pub best_ms: f64,
    /// Median pass, ms.
    pub median_ms: f64,
    /// `bytes / best_ms`, in GB/s (10^9 bytes per second).
    pub best_gbps: f64,
    /// `bytes / median_ms`, in GB/s.
    pub median_gbps: f64,
}

/// Zero-copy read bandwidth in GB/s: a kernel reads `bytes` of pinned,
/// device-mapped host memory either sequentially or as random 128-byte lines
/// (median of 5 passes after one warm-up).
pub fn probe_bandwidth(gpu: &Gpu, bytes: usize, random: bool) -> GpuResult<f64> {
    probe_memory(gpu, ProbeMemory::ZeroCopy, bytes, random, 5).map(|r| r.median_gbps)
}

/// Words (u32) actually probed for a request of `bytes`: a multiple of 4 words
/// (16 B) for sequential reads; a power-of-two number of 128-byte lines, at
/// most 2^32, for random reads.
pub fn probe_words(bytes: usize, random: bool) -> GpuResult<usize> {
    if random {
        let lines = (bytes / LINE_BYTES).min(1usize << 32);
        if lines == 0 {
            return Err(GpuError::InvalidInput(format!(
                "random probe needs at least {LINE_BYTES} bytes, got {bytes}"
            )));
        }
        let pow2 = 1usize << (usize::BITS - 1 - lines.leading_zeros());
        Ok(pow2 * (LINE_BYTES / 4))
    } else {
        let vecs = bytes / 16;
        if vecs == 0 {
            return Err(GpuError::InvalidInput(format!(
                "sequential probe needs at least 16 bytes, got {bytes}"
            )));
        }
        Ok(vecs * 4)
    }
}

/// Runs one probe: `reps` timed passes (after one untimed warm-up, except for
/// managed memory, whose single pass is the cold first touch that migrates
/// pages to the device).
pub fn probe_memory(gpu: &Gpu, memory: ProbeMemory, bytes: usize, random: bool, reps: u32) -> GpuResult<ProbeResult> {
    let words = probe_words(bytes, random)?;
    let reps = if memory == ProbeMemory::Managed { 1 } else { reps.max(1) };
    let mut sink = gpu.alloc_zeros::<u32>(1)?;
    let times = match memory {
        ProbeMemory::Device => {
            let mut buf = gpu.alloc_zeros::<u32>(words)?;
            fill_device(gpu, &mut buf, 7)?;
            let (ptr, _sync) = buf.device_ptr(gpu.stream());
            time_passes(gpu, ptr, words, random, reps, true, &mut sink)?
        }
        ProbeMemory::ZeroCopy => {
            let mut buf: PinnedBuffer<u32> = gpu.alloc_pinned(words)?;
            host_fill(buf.as_mut_slice());
            time_passes(gpu, buf.device_ptr(), words, random, reps, true, &mut sink)?
        }
        ProbeMemory::Managed => {
            let mut buf: ManagedBuffer<u32> = gpu.alloc_managed(words)?;
            host_fill(buf.as_mut_slice());
            time_passes(gpu, buf.device_ptr(), words, random, reps, false, &mut sink)?
        }
    };
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let best_ms = sorted[0];
    let median_ms = sorted[sorted.len() / 2];
    let moved = (words * 4) as u64;
    let gbps = |ms: f64| moved as f64 / (ms * 1e-3) / 1e9;
    Ok(ProbeResult {
        memory,
        random,
        bytes: moved,
        reps,
        best_ms,
        median_ms,
        best_gbps: gbps(best_ms),
        median_gbps: gbps(median_ms),
    })
}

fn host_fill(words: &mut [u32]) {
    for (i, w) in words.iter_mut().enumerate() {
        *w = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(7);
    }
}

fn grid(gpu: &Gpu) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (gpu.info().multiprocessors.max(1) * 8, 1, 1),
        block_dim: (PROBE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Times `reps` passes of the probe kernel over `words` u32 at device address
/// `ptr`, returning each pass's ms.
fn time_passes(
    gpu: &Gpu,
    ptr: u64,
    words: usize,
    random: bool,
    reps: u32,
    warm_up: bool,
    sink: &mut CudaSlice<u32>,
) -> GpuResult<Vec<f64>> {
    let name = if random { "probe_rand" } else { "probe_seq" };
    let f = kernel(gpu, PROBE_CU, name)?;
    let cfg = grid(gpu);
    let n_vec = (words / 4) as u64;
    let lines = words / (LINE_BYTES / 4);
    let line_mask = u32::try_from(lines.saturating_sub(1))
        .map_err(|_| GpuError::InvalidInput("too many lines for the random probe".into()))?;
    let n_reads = lines as u64;
    let mut seed: u32 = 0x1234_5678;
    let mut pass = |seed: u32| -> GpuResult<f64> {
        let ((), ms) = gpu.timed(|| {
            let mut b = gpu.stream().launch_builder(&f);
            if random {
                b.arg(&ptr).arg(&line_mask).arg(&n_reads).arg(&seed).arg(&mut *sink);
            } else {
                b.arg(&ptr).arg(&n_vec).arg(&mut *sink);
            }
            // SAFETY: argument types match the kernel; `ptr` addresses
            // `words` readable u32 (n_vec * 16 or lines * 128 bytes).
            unsafe { b.launch(cfg) }
                .map(|_| ())
                .map_err(|e| GpuError::driver(&format!("launching {name}"), e))
        })?;
        Ok(f64::from(ms))
    };
    if warm_up {
        pass(seed)?;
    }
    let mut times = Vec::with_capacity(reps as usize);
    for _ in 0..reps {
        seed = seed.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
        times.push(pass(seed)?);
    }
    gpu.synchronize()?;
    Ok(times)
}

/// Value that `fill_pattern` writes at index `i` with `seed`.
pub fn pattern_value(i: usize, seed: u32) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed)
}

fn launch_fill(gpu: &Gpu, ptr: u64, n: u64, seed: u32) -> GpuResult<()> {
    let f = kernel(gpu, PROBE_CU, "fill_pattern")?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&ptr).arg(&n).arg(&seed);
    // SAFETY: `ptr` addresses `n` writable u32 (checked by the callers).
    unsafe { b.launch(grid(gpu)) }.map_err(|e| GpuError::driver("launching fill_pattern", e))?;
    Ok(())
}

fn fill_device(gpu: &Gpu, buf: &mut CudaSlice<u32>, seed: u32) -> GpuResult<()> {
    let n = buf.len() as u64;
    let f = kernel(gpu, PROBE_CU, "fill_pattern")?;
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(&mut *buf).arg(&n).arg(&seed);
    // SAFETY: `buf` holds `n` u32.
    unsafe { b.launch(grid(gpu)) }.map_err(|e| GpuError::driver("launching fill_pattern", e))?;
    Ok(())
}

/// A kernel writes [`pattern_value`]`(i, seed)` into every element of `buf`
/// through its device pointer (zero-copy writes); returns after the kernel
/// finished, so the host slice shows the result.
pub fn fill_pattern_pinned(gpu: &Gpu, buf: &mut PinnedBuffer<u32>, seed: u32) -> GpuResult<()> {
    if !buf.is_empty() {
        launch_fill(gpu, buf.device_ptr(), buf.len() as u64, seed)?;
    }
    gpu.synchronize()
}

/// A kernel computes `dst[i] = src[i] + add` reading and writing pinned host
/// memory through device pointers (a zero-copy round trip); returns after the
/// kernel finished.
pub fn copy_add_pinned(gpu: &Gpu, src: &PinnedBuffer<u32>, dst: &mut PinnedBuffer<u32>, add: u32) -> GpuResult<()> {
    if src.len() != dst.len() {
        return Err(GpuError::InvalidInput(format!(
            "copy_add_pinned: source has {} elements, destination {}",
            src.len(),
            dst.len()
        )));
    }
    if !src.is_empty() {
        let f = kernel(gpu, PROBE_CU, "copy_add")?;
        let (s, d, n) = (src.device_ptr(), dst.device_ptr(), src.len() as u64);
        let mut b = gpu.stream().launch_builder(&f);
        b.arg(&s).arg(&d).arg(&n).arg(&add);
        // SAFETY: both buffers hold `n` u32; they are distinct allocations.
        unsafe { b.launch(grid(gpu)) }.map_err(|e| GpuError::driver("launching copy_add", e))?;
    }
    gpu.synchronize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_sizes() {
        assert_eq!(probe_words(1 << 30, false).ok(), Some(1 << 28));
        assert_eq!(probe_words(1 << 30, true).ok(), Some(1 << 28));
        // 3 lines round down to 2.
        assert_eq!(probe_words(3 * 128 + 5, true).ok(), Some(2 * 32));
        assert_eq!(probe_words(31, false).ok(), Some(4));
        assert!(probe_words(100, true).is_err());
        assert!(probe_words(15, false).is_err());
    }

    #[test]
    fn pattern_matches_kernel_formula() {
        assert_eq!(pattern_value(0, 9), 9);
        assert_eq!(pattern_value(1, 0), 2_654_435_761);
    }
}

/// Host work before a timed enqueue ([`enqueue_latency`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Pause {
    /// None: enqueues back to back.
    None,
    /// The thread sleeps.
    Sleep,
    /// A busy loop in registers.
    Spin,
    /// Random reads over a large host buffer (as a batch's staging does
    /// over the graph): the host's caches and TLB lose the driver's data.
    Memory,
}

impl Pause {
    /// Short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Pause::None => "none (back to back)",
            Pause::Sleep => "sleep",
            Pause::Spin => "busy loop in registers",
            Pause::Memory => "random reads over host memory",
        }
    }
}

/// Host seconds (median and best of the repetitions) of queueing a small
/// refresh-like sequence (event, 256-byte pinned copy, event) on the
/// stream after `pause_ms` of the `pause` kind of host work. The GPU
/// engine's first call of a batch (the resident refresh, or `zp`'s task
/// upload) comes after the batch's staging; at 64 updates its enqueue took
/// 0.06-0.09 ms on the H200 where a later one took about 0.01 ms.
pub fn enqueue_latency(
    gpu: &Gpu,
    pause: Pause,
    pause_ms: f64,
    reps: usize,
    memory: &mut [u64],
) -> GpuResult<(f64, f64)> {
    let ctx = gpu.context();
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let ev = |()| ctx.new_event(timing).map_err(|e| GpuError::driver("cuEventCreate", e));
    let (a, b) = (ev(())?, ev(())?);
    let src = gpu.alloc_pinned::<u32>(64)?;
    let dst = gpu.alloc_zeros::<u32>(64)?;
    let s = gpu.stream();
    let (dptr, _guard) = dst.device_ptr(s);
    let mut times = Vec::with_capacity(reps);
    let mut sink = 0u64;
    for _ in 0..reps {
        let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(pause_ms * 1e-3);
        match pause {
            Pause::None => {}
            Pause::Sleep => std::thread::sleep(std::time::Duration::from_secs_f64(pause_ms * 1e-3)),
            Pause::Spin => {
                while std::time::Instant::now() < until {
                    for _ in 0..1000 {
                        sink = std::hint::black_box(sink.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                }
            }
            Pause::Memory => {
                let n = memory.len().max(1);
                while std::time::Instant::now() < until {
                    for _ in 0..1000 {
                        sink = sink.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let i = (sink >> 17) as usize % n;
                        memory[i] = memory[i].wrapping_add(sink);
                    }
                }
            }
        }
        let t = std::time::Instant::now();
        a.record(s).map_err(|e| GpuError::driver("cuEventRecord", e))?;
        // SAFETY: `dst` holds 64 u32; the pinned source outlives the copy
        // (the stream is synchronised below, before it is dropped).
        unsafe { cudarc::driver::result::memcpy_htod_async(dptr, src.as_slice(), s.cu_stream()) }
            .map_err(|e| GpuError::driver("cuMemcpyHtoDAsync", e))?;
        b.record(s).map_err(|e| GpuError::driver("cuEventRecord", e))?;
        times.push(t.elapsed().as_secs_f64());
        gpu.synchronize()?;
    }
    std::hint::black_box(sink);
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], times[0]))
}
