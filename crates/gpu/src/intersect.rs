//! Sorted-set intersection counts on the GPU (intersect v1).
//!
//! The set intersection of sorted neighbour lists is the inner operation of
//! GCSM's matching kernel (Sec. V-C, built on STMatch's SIMD intersections).
//! This module runs one warp per pair of lists: each lane binary-searches its
//! share of the shorter list in the longer one and the counts are summed with
//! a warp reduction (`kernels/intersect.cu`).

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use crate::device::Gpu;
use crate::error::{GpuError, GpuResult};
use crate::nvrtc::{kernel, INTERSECT_CU};

/// One pair of lists as `(a_offset, a_len, b_offset, b_len)` ranges of the
/// shared `lists` array.
pub type PairRange = (u32, u32, u32, u32);

/// Threads per block of the intersection kernel (8 warps).
pub const INTERSECT_BLOCK: u32 = 256;

/// Checks that every range of `pairs` lies inside `lists_len` elements and
/// that the number of pairs fits the kernel's `u32` counter. Lists are assumed
/// sorted ascending (not checked: O(total length)).
pub fn validate_pairs(lists_len: usize, pairs: &[PairRange]) -> GpuResult<()> {
    if u32::try_from(pairs.len()).is_err() {
        return Err(GpuError::InvalidInput(format!(
            "{} pairs exceed the kernel's limit of {}",
            pairs.len(),
            u32::MAX
        )));
    }
    for (i, &(ao, al, bo, bl)) in pairs.iter().enumerate() {
        for (off, len, which) in [(ao, al, 'a'), (bo, bl, 'b')] {
            let end = u64::from(off) + u64::from(len);
            if end > lists_len as u64 {
                return Err(GpuError::InvalidInput(format!(
                    "pair {i}: list {which} = [{off}, {end}) is outside lists[0..{lists_len})"
                )));
            }
        }
    }
    Ok(())
}

/// Grid for `n_pairs` pairs: one warp per pair, capped at 32 blocks per
/// multiprocessor (the kernel strides over the rest).
pub fn intersect_launch_config(gpu: &Gpu, n_pairs: u32) -> LaunchConfig {
    let warps_per_block = INTERSECT_BLOCK / 32;
    let cap = gpu.info().multiprocessors.max(1).saturating_mul(32);
    let blocks = n_pairs.div_ceil(warps_per_block).clamp(1, cap);
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (INTERSECT_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Flattens pairs into the kernel's 16-byte descriptors.
fn flatten(pairs: &[PairRange]) -> Vec<u32> {
    pairs.iter().flat_map(|&(a, b, c, d)| [a, b, c, d]).collect()
}

/// Queues the intersection kernel on device-resident data: `pairs` holds
/// `4 * n_pairs` words (see [`PairRange`]), `out` at least `n_pairs` words.
/// Nothing is validated here beyond the buffer sizes; use [`validate_pairs`]
/// on the host copy.
pub fn launch_intersect(
    gpu: &Gpu,
    lists: &CudaSlice<u32>,
    pairs: &CudaSlice<u32>,
    n_pairs: u32,
    out: &mut CudaSlice<u32>,
) -> GpuResult<()> {
    if n_pairs == 0 {
        return Ok(());
    }
    if pairs.len() < 4 * n_pairs as usize || out.len() < n_pairs as usize {
        return Err(GpuError::InvalidInput(format!(
            "buffers too small for {n_pairs} pairs (pairs: {} words, out: {})",
            pairs.len(),
            out.len()
        )));
    }
    let f = kernel(gpu, INTERSECT_CU, "intersect_count_warp")?;
    let cfg = intersect_launch_config(gpu, n_pairs);
    let mut b = gpu.stream().launch_builder(&f);
    b.arg(lists).arg(pairs).arg(&n_pairs).arg(out);
    // SAFETY: argument types match `intersect_count_warp`; ranges were
    // validated by the caller against `lists`; `out` holds n_pairs words.
    unsafe { b.launch(cfg) }.map_err(|e| GpuError::driver("launching intersect_count_warp", e))?;
    Ok(())
}

/// For each pair `(a_off, a_len, b_off, b_len)`, the number of elements of the
/// shorter list that occur in the longer one, i.e. `|A ∩ B|` for sorted,
/// duplicate-free lists (`lists[a_off..a_off+a_len]` etc.).
pub fn intersect_counts(gpu: &Gpu, lists: &[u32], pairs: &[PairRange]) -> GpuResult<Vec<u32>> {
    intersect_counts_timed(gpu, lists, pairs).map(|(v, _)| v)
}

/// [`intersect_counts`] plus the kernel's own GPU time in milliseconds
/// (transfers excluded).
pub fn intersect_counts_timed(gpu: &Gpu, lists: &[u32], pairs: &[PairRange]) -> GpuResult<(Vec<u32>, f32)> {
    validate_pairs(lists.len(), pairs)?;
    if pairs.is_empty() {
        return Ok((Vec::new(), 0.0));
    }
    let n_pairs = u32::try_from(pairs.len()).map_err(|_| GpuError::InvalidInput("too many pairs".into()))?;
    // Every range is empty when `lists` is; upload one dummy word then.
    let d_lists = if lists.is_empty() {
        gpu.upload(&[0u32])?
    } else {
        gpu.upload(lists)?
    };
    let d_pairs = gpu.upload(&flatten(pairs))?;
    let mut d_out = gpu.alloc_zeros::<u32>(pairs.len())?;
    // Compile/load before timing.
    kernel(gpu, INTERSECT_CU, "intersect_count_warp")?;
    let ((), ms) = gpu.timed(|| launch_intersect(gpu, &d_lists, &d_pairs, n_pairs, &mut d_out))?;
    let out = gpu.download(&d_out)?;
    Ok((out, ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_catches_out_of_range_lists() {
        assert!(validate_pairs(10, &[(0, 5, 5, 5)]).is_ok());
        assert!(validate_pairs(0, &[(0, 0, 0, 0)]).is_ok());
        let e = validate_pairs(10, &[(0, 5, 6, 5)]).unwrap_err();
        assert!(matches!(e, GpuError::InvalidInput(_)), "{e}");
        assert!(e.to_string().contains("pair 0: list b"), "{e}");
        // u32 overflow of offset + len must not wrap.
        assert!(validate_pairs(10, &[(u32::MAX, 2, 0, 0)]).is_err());
    }

    #[test]
    fn flatten_keeps_descriptor_order() {
        assert_eq!(flatten(&[(1, 2, 3, 4), (5, 6, 7, 8)]), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
