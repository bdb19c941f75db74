//! GPU smoke tests. Each test first asks [`csm_gpu::gpu_available`]; without a
//! usable GPU it prints `SKIPPED (no GPU): <reason>` and passes, so CI (which
//! has no GPU) stays green. On a GPU machine they check the kernels against
//! CPU references and the error paths that need a live device.

use csm_gpu::intersect::PairRange;
use csm_gpu::probe::{copy_add_pinned, fill_pattern_pinned, pattern_value};
use csm_gpu::{compile_source, gpu_available, intersect_counts, Gpu, GpuError};

/// Opens the GPU, or prints the skip line and returns `None`.
fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match gpu_available() {
        Ok(info) => {
            eprintln!(
                "{test}: running on {} (sm_{}{})",
                info.name, info.compute_capability.0, info.compute_capability.1
            );
        }
        Err(e) => {
            let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("SKIPPED (no GPU): {e}\n")); // uncaptured by libtest
            return None;
        }
    }
    match Gpu::open(0) {
        Ok(g) => Some(g),
        Err(e) => panic!("gpu_available() succeeded but Gpu::open(0) failed: {e}"),
    }
}

/// splitmix64; no external RNG needed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Merge-based |A ∩ B| of two sorted duplicate-free lists: the CPU reference.
fn cpu_intersection(a: &[u32], b: &[u32]) -> u32 {
    let (mut i, mut j, mut c) = (0, 0, 0u32);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                c += 1;
                i += 1;
                j += 1;
            }
        }
    }
    c
}

fn sorted_set(rng: &mut Rng, len: usize, universe: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..len).map(|_| rng.below(universe) as u32).collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn cpu_reference_is_sane() {
    // Runs everywhere: the reference itself must be right.
    assert_eq!(cpu_intersection(&[1, 3, 5, 7], &[3, 4, 5, 8]), 2);
    assert_eq!(cpu_intersection(&[], &[1]), 0);
    assert_eq!(cpu_intersection(&[2], &[2]), 1);
}

#[test]
fn intersection_counts_match_cpu_reference() {
    let Some(gpu) = gpu_or_skip("intersection_counts_match_cpu_reference") else {
        return;
    };
    let mut rng = Rng(0xC5A1);
    // Lists of mixed sizes: empty, tiny, around a warp, and long (skewed pairs
    // exercise the shorter/longer swap); small and large id universes give
    // dense and sparse overlaps.
    let sizes = [0usize, 1, 2, 5, 31, 32, 33, 64, 100, 500, 1000, 3000, 10_000];
    let mut lists: Vec<u32> = Vec::new();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for k in 0..400 {
        let len = sizes[k % sizes.len()] + rng.below(3) as usize;
        let universe = if k % 2 == 0 { 4 * len as u64 + 8 } else { 1 << 24 };
        let v = sorted_set(&mut rng, len, universe);
        ranges.push((lists.len() as u32, v.len() as u32));
        lists.extend_from_slice(&v);
    }
    // Identical-list and self pairs as well as random ones.
    let mut pairs: Vec<PairRange> = Vec::new();
    for (i, r) in ranges.iter().enumerate().take(50) {
        pairs.push((r.0, r.1, r.0, r.1));
        let o = ranges[(i + 1) % ranges.len()];
        pairs.push((r.0, r.1, o.0, o.1));
    }
    for _ in 0..4000 {
        let a = ranges[rng.below(ranges.len() as u64) as usize];
        let b = ranges[rng.below(ranges.len() as u64) as usize];
        pairs.push((a.0, a.1, b.0, b.1));
    }
    let got = match intersect_counts(&gpu, &lists, &pairs) {
        Ok(v) => v,
        Err(e) => panic!("intersect_counts failed: {e}"),
    };
    assert_eq!(got.len(), pairs.len());
    let mut nonzero = 0;
    for (i, &(ao, al, bo, bl)) in pairs.iter().enumerate() {
        let a = &lists[ao as usize..(ao + al) as usize];
        let b = &lists[bo as usize..(bo + bl) as usize];
        let want = cpu_intersection(a, b);
        assert_eq!(got[i], want, "pair {i}: |a|={al}, |b|={bl}");
        nonzero += usize::from(want > 0);
    }
    assert!(nonzero > 100, "workload should have many overlapping pairs");

    // Empty inputs and out-of-range pairs.
    assert_eq!(intersect_counts(&gpu, &lists, &[]).ok(), Some(vec![]));
    assert_eq!(intersect_counts(&gpu, &[], &[(0, 0, 0, 0)]).ok(), Some(vec![0]));
    let bad = intersect_counts(&gpu, &lists, &[(0, lists.len() as u32 + 1, 0, 0)]);
    assert!(matches!(bad, Err(GpuError::InvalidInput(_))), "{bad:?}");
}

#[test]
fn pinned_buffer_device_pointer_round_trip() {
    let Some(gpu) = gpu_or_skip("pinned_buffer_device_pointer_round_trip") else {
        return;
    };
    let n = (1 << 20) + 3;
    // Kernel writes through the device pointer, host reads the slice.
    let mut a = gpu.alloc_pinned::<u32>(n).expect("pinned alloc");
    assert_ne!(a.device_ptr(), 0);
    assert!(a.as_slice().iter().all(|&x| x == 0), "pinned memory starts zeroed");
    fill_pattern_pinned(&gpu, &mut a, 11).expect("fill kernel");
    for i in [0, 1, 12345, n - 1] {
        assert_eq!(a.as_slice()[i], pattern_value(i, 11), "index {i}");
    }
    assert!(a.as_slice().iter().enumerate().all(|(i, &x)| x == pattern_value(i, 11)));
    // Host writes, kernel reads one pinned buffer and writes another.
    for (i, x) in a.as_mut_slice().iter_mut().enumerate() {
        *x = (i as u32) ^ 0xABCD;
    }
    let mut b = gpu.alloc_pinned::<u32>(n).expect("pinned alloc");
    copy_add_pinned(&gpu, &a, &mut b, 5).expect("copy kernel");
    assert!(b
        .as_slice()
        .iter()
        .enumerate()
        .all(|(i, &x)| x == ((i as u32) ^ 0xABCD).wrapping_add(5)));
    // Length mismatch is an input error, not a launch.
    let mut c = gpu.alloc_pinned::<u32>(3).expect("pinned alloc");
    assert!(matches!(
        copy_add_pinned(&gpu, &a, &mut c, 0),
        Err(GpuError::InvalidInput(_))
    ));
    // An empty buffer is fine.
    let e = gpu.alloc_pinned::<u64>(0).expect("empty pinned alloc");
    assert!(e.is_empty() && e.as_slice().is_empty());
}

#[test]
fn managed_alloc_refuses_impossible_size() {
    let Some(gpu) = gpu_or_skip("managed_alloc_refuses_impossible_size") else {
        return;
    };
    let mem = gpu.mem_info().expect("mem info");
    // More than the whole card: refused before cuMemAllocManaged is called.
    let too_big = mem.total + (1 << 30);
    match gpu.alloc_managed::<u8>(too_big) {
        Err(GpuError::OutOfMemory { requested, free }) => {
            assert_eq!(requested, too_big);
            assert!(free <= mem.total);
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // A small managed buffer works from the host.
    let mut m = gpu.alloc_managed::<u32>(1000).expect("small managed alloc");
    assert!(m.as_slice().iter().all(|&x| x == 0));
    m.as_mut_slice()[999] = 7;
    assert_eq!(m.as_slice()[999], 7);
    // Device allocations beyond free memory map to OutOfMemory as well.
    match gpu.alloc_zeros::<u8>(too_big) {
        Err(GpuError::OutOfMemory { .. }) => {}
        other => panic!("expected OutOfMemory for device alloc, got {other:?}"),
    }
}

#[test]
fn nvrtc_compile_error_is_reported() {
    let Some(gpu) = gpu_or_skip("nvrtc_compile_error_is_reported") else {
        return;
    };
    let broken = "extern \"C\" __global__ void broken(int* p) { p[0] = undeclared_name; }";
    match compile_source(&gpu, "broken.cu", broken) {
        Err(GpuError::Compile { kernel, log }) => {
            assert_eq!(kernel, "broken.cu");
            assert!(log.contains("undeclared_name"), "log should name the error:\n{log}");
            eprintln!("NVRTC log as reported:\n{log}");
        }
        other => panic!("expected GpuError::Compile, got {other:?}"),
    }
    // And a good source compiles and loads (and is cached: same module twice).
    let ok = "extern \"C\" __global__ void fine(int* p) { p[0] = 1; }";
    let m1 = compile_source(&gpu, "fine.cu", ok).expect("valid source compiles");
    let m2 = compile_source(&gpu, "fine.cu", ok).expect("cached");
    assert!(std::sync::Arc::ptr_eq(&m1, &m2));
    assert!(m1.load_function("fine").is_ok());
}

#[test]
fn probe_reports_positive_bandwidth() {
    let Some(gpu) = gpu_or_skip("probe_reports_positive_bandwidth") else {
        return;
    };
    for random in [false, true] {
        let gbps = csm_gpu::probe_bandwidth(&gpu, 64 << 20, random).expect("probe");
        eprintln!("zero-copy 64 MiB random={random}: {gbps:.1} GB/s");
        assert!(gbps.is_finite() && gbps > 0.0);
    }
}

#[test]
fn empty_launch_waits_and_leaves_the_matcher_usable() {
    let Some(gpu) = gpu_or_skip("empty_launch_waits_and_leaves_the_matcher_usable") else {
        return;
    };
    let gpu = std::sync::Arc::new(gpu);
    let mut m = csm_gpu::DeviceMatcher::new(gpu, csm_gpu::MatcherConfig::default()).expect("matcher");
    for _ in 0..3 {
        let secs = m.wake().expect("an empty launch");
        eprintln!("empty launch: {:.3} ms", secs * 1e3);
        assert!(secs.is_finite() && secs > 0.0 && secs < 10.0, "{secs}");
    }
}
