//! Process measurements for the ignored benchmark tests: a counting global
//! allocator (live and peak heap bytes; RSS misses allocations that reuse
//! freed heap), CPU seconds and peak RSS from /proc.
//!
//! A test file installs the allocator with
//! `#[global_allocator] static ALLOC: common::measure::Counting = common::measure::Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

pub struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(n: usize) {
    let now = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call forwards to the system allocator unchanged; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                grow(new - l.size());
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

/// Starts a peak measurement; returns the live heap bytes.
pub fn heap_reset() -> usize {
    let live = LIVE.load(Relaxed);
    PEAK.store(live, Relaxed);
    live
}

/// Peak live heap bytes since the last [`heap_reset`].
pub fn heap_peak() -> usize {
    PEAK.load(Relaxed)
}

/// CPU seconds (user + system) this process has used, from /proc/self/stat.
pub fn cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // fields after the parenthesised command name; utime, stime are 14, 15
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

/// Resets the process's peak RSS (Linux: `5` > /proc/self/clear_refs).
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// A /proc/self/status figure in MiB: `VmHWM` (peak RSS since the last
/// reset) or `VmRSS`.
pub fn status_mib(key: &str) -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = s
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// A `CSM_BENCH_*` setting of the ignored benchmark tests.
pub fn bench_env(key: &str) -> Option<usize> {
    std::env::var(key).ok().and_then(|s| s.parse().ok())
}

/// The benchmark tests' graph: R-MAT with 2^`CSM_BENCH_SCALE` vertices
/// (default 17), `CSM_BENCH_EDGES` edges (default 1.2 M) and 16 uniform
/// labels, as data and as CSR.
pub fn bench_graph() -> (csm_graph::GraphData, csm_graph::CsrGraph) {
    use csm_graph::gen::{assign_labels, graph_from_pairs, rmat, Labeller, RMAT_STANDARD};
    let scale = bench_env("CSM_BENCH_SCALE").unwrap_or(17) as u32;
    let m = bench_env("CSM_BENCH_EDGES").unwrap_or(1_200_000);
    let (a, b, c) = RMAT_STANDARD;
    let pairs = rmat(scale, m, a, b, c, 7);
    let labeller = Labeller::Uniform {
        num_labels: 16,
        seed: 7,
    };
    let data = graph_from_pairs(1 << scale, &pairs, assign_labels(1 << scale, &labeller), None);
    let g = csm_graph::CsrGraph::from_data(&data).expect("a generated graph is valid");
    (data, g)
}

/// The benchmark tests' queries: random walks of each size in `CSM_BENCH_K`
/// (default 4,5,6), `CSM_BENCH_SEEDS` each (default 3), induced with
/// `CSM_BENCH_DENSE=1`; as (size, seed, dense, query).
pub fn bench_queries(data: &csm_graph::GraphData) -> Vec<(usize, u64, bool, csm_planner::QueryGraph)> {
    let ks: Vec<usize> = std::env::var("CSM_BENCH_K")
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|_| vec![4, 5, 6]);
    let seeds = bench_env("CSM_BENCH_SEEDS").unwrap_or(3) as u64;
    let dense = std::env::var("CSM_BENCH_DENSE").is_ok_and(|v| v == "1");
    let mut out = Vec::new();
    for &k in &ks {
        for seed in 0..seeds {
            let qd = csm_graph::gen::random_walk_query(data, k, 100 + seed, dense).expect("a walk");
            out.push((
                k,
                seed,
                dense,
                csm_planner::QueryGraph::from_data(&qd).expect("a query"),
            ));
        }
    }
    out
}

/// What [`measured_beside_cpu`] measured of one run.
pub struct Measured<T> {
    pub value: T,
    /// The `cpu` engine's count of the same query (all threads).
    pub cpu_count: u64,
    /// One line of figures: wall and CPU seconds, heap and RSS, and the
    /// `cpu` engine's seconds.
    pub figures: String,
}

/// Runs `run`, measuring its wall and CPU time, peak heap and peak RSS,
/// then counts `q` with the `cpu` engine on all threads beside it.
pub fn measured_beside_cpu<T>(
    g: &csm_graph::CsrGraph,
    q: &csm_planner::QueryGraph,
    run: impl FnOnce() -> T,
) -> Measured<T> {
    use csm_engine::StaticMatcher;
    let base = status_mib("VmRSS:");
    reset_peak();
    let heap0 = heap_reset();
    let c0 = cpu_seconds();
    let t = std::time::Instant::now();
    let value = run();
    let secs = t.elapsed().as_secs_f64();
    let csecs = cpu_seconds() - c0;
    let peak = status_mib("VmHWM:");
    let heap_mib = (heap_peak() - heap0) as f64 / 1048576.0;
    let t = std::time::Instant::now();
    let cpu = csm_baselines::CpuEngine::new(0, std::sync::Arc::new(csm_planner::GcsmOrder)).expect("a pool");
    let cpu_count = cpu.count(g, q).expect("the cpu engine counts");
    let cpu_secs = t.elapsed().as_secs_f64();
    let cpu_csecs = cpu_seconds() - c0 - csecs;
    let figures = format!(
        "total={secs:.3}s cputime={csecs:.2}s heap_before={:.0}MiB engine_heap_peak={heap_mib:.1}MiB \
         rss_before={base:.0}MiB rss_peak={peak:.0}MiB cpu={cpu_secs:.3}s cpu_cputime={cpu_csecs:.2}s",
        heap0 as f64 / 1048576.0
    );
    Measured {
        value,
        cpu_count,
        figures,
    }
}
