//! `csm-gpu-probe`: prints the device, the read bandwidth of device, zero-copy
//! and managed memory (sequential and random 128-byte lines; GCSM Sec. II-C),
//! and the throughput of the intersection kernel, as Markdown tables.
//!
//! Usage: `csm-gpu-probe [--bytes N] [--managed-bytes N] [--json PATH] [--enqueue]`
//! (sizes in bytes; defaults 1 GiB and 256 MiB). Exits with status 2 when no
//! GPU is available, 64 on bad arguments.

use std::process::ExitCode;

use clap::Parser;

use csm_gpu::intersect::PairRange;
use csm_gpu::probe::{enqueue_latency, probe_memory, Pause, ProbeMemory, ProbeResult};
use csm_gpu::{gpu_available, intersect_counts_timed, Gpu, GpuError};

/// Command line.
#[derive(Parser, Debug)]
#[command(
    name = "csm-gpu-probe",
    about = "The device, the read bandwidth of device, zero-copy and managed memory, and the \
             intersection kernel's throughput, as Markdown tables (exit status 2 without a GPU)"
)]
struct Args {
    /// Bytes read per device and zero-copy probe.
    #[arg(long, default_value_t = 1 << 30)]
    bytes: usize,
    /// Bytes read per managed-memory probe.
    #[arg(long, default_value_t = 256 << 20)]
    managed_bytes: usize,
    /// Also write the figures to this JSON file.
    #[arg(long)]
    json: Option<String>,
    /// Only time a small queued copy after each kind of host work (the
    /// first GPU call of a batch), then exit.
    #[arg(long)]
    enqueue: bool,
}

/// Paper/brief reference figures for the table (GB/s).
fn reference(memory: ProbeMemory, random: bool) -> &'static str {
    match (memory, random) {
        (ProbeMemory::ZeroCopy, false) => "51",
        (ProbeMemory::ZeroCopy, true) => "~6",
        (ProbeMemory::Device, false) => "3200",
        (ProbeMemory::Device, true) => "830",
        (ProbeMemory::Managed, _) => "-",
    }
}

/// splitmix64 stream for the synthetic intersection workload.
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

/// `n_lists` sorted, duplicate-free lists over a universe of `universe` ids
/// with skewed lengths (most short, a few up to `max_len`), and `n_pairs`
/// random pairs of them.
fn workload(n_lists: usize, max_len: u64, universe: u64, n_pairs: usize) -> (Vec<u32>, Vec<PairRange>) {
    let mut rng = Rng(42);
    let mut lists = Vec::new();
    let mut ranges = Vec::with_capacity(n_lists);
    for _ in 0..n_lists {
        // Length ~ max_len^u, u uniform: log-uniform, heavy tail.
        let u = rng.below(1 << 20) as f64 / f64::from(1u32 << 20);
        let len = ((max_len as f64).powf(u) as u64).clamp(1, max_len);
        let mut v: Vec<u32> = (0..len).map(|_| rng.below(universe) as u32).collect();
        v.sort_unstable();
        v.dedup();
        ranges.push((lists.len() as u32, v.len() as u32));
        lists.extend_from_slice(&v);
    }
    let pairs = (0..n_pairs)
        .map(|_| {
            let a = ranges[rng.below(n_lists as u64) as usize];
            let b = ranges[rng.below(n_lists as u64) as usize];
            (a.0, a.1, b.0, b.1)
        })
        .collect();
    (lists, pairs)
}

fn cpu_count(lists: &[u32], p: PairRange) -> u32 {
    let a = &lists[p.0 as usize..(p.0 + p.1) as usize];
    let b = &lists[p.2 as usize..(p.2 + p.3) as usize];
    let (mut i, mut j, mut c) = (0, 0, 0);
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

/// `--enqueue`: the host time of a small queued copy after host work.
fn enqueue_table(gpu: &Gpu) -> Result<(), GpuError> {
    println!("## Enqueue after host work\n");
    println!("| host work before | for ms | median enqueue ms | best ms |");
    println!("|---|---:|---:|---:|");
    let mut memory = vec![1u64; 1 << 27];
    for (pause, ms) in [
        (Pause::None, 0.0),
        (Pause::Sleep, 3.0),
        (Pause::Spin, 3.0),
        (Pause::Memory, 0.3),
        (Pause::Memory, 3.0),
        (Pause::None, 0.0),
    ] {
        let (median, best) = enqueue_latency(gpu, pause, ms, 200, &mut memory)?;
        println!("| {} | {ms} | {:.4} | {:.4} |", pause.label(), median * 1e3, best * 1e3);
    }
    Ok(())
}

fn run(args: &Args) -> Result<(), GpuError> {
    let gpu = Gpu::open(0)?;
    if args.enqueue {
        return enqueue_table(&gpu);
    }
    let info = gpu.info();
    println!("## Device\n");
    println!(
        "{} (sm_{}{}), {} SMs, L2 {} MiB, {:.1} GiB total / {:.1} GiB free, driver CUDA {}.{}, \
         can map host memory: {}, concurrent managed access: {}\n",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.multiprocessors,
        info.l2_cache_bytes >> 20,
        info.total_mem as f64 / f64::from(1u32 << 30),
        info.free_mem as f64 / f64::from(1u32 << 30),
        info.driver_version.0,
        info.driver_version.1,
        info.can_map_host_memory,
        info.concurrent_managed_access,
    );

    println!("## Read bandwidth (probe v1)\n");
    println!("| memory | pattern | bytes/pass | passes | best GB/s | median GB/s | reference GB/s |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut results: Vec<ProbeResult> = Vec::new();
    let plan = [
        (ProbeMemory::Device, false, args.bytes),
        (ProbeMemory::Device, true, args.bytes),
        (ProbeMemory::ZeroCopy, false, args.bytes),
        (ProbeMemory::ZeroCopy, true, args.bytes),
        (ProbeMemory::Managed, false, args.managed_bytes),
        (ProbeMemory::Managed, true, args.managed_bytes),
    ];
    for (memory, random, bytes) in plan {
        match probe_memory(&gpu, memory, bytes, random, 5) {
            Ok(r) => {
                println!(
                    "| {} | {} | {} | {} | {:.1} | {:.1} | {} |",
                    memory.label(),
                    if random { "random 128-B lines" } else { "sequential" },
                    r.bytes,
                    r.reps,
                    r.best_gbps,
                    r.median_gbps,
                    reference(memory, random)
                );
                results.push(r);
            }
            Err(e) => println!(
                "| {} | {} | {bytes} | - | error | {e} | |",
                memory.label(),
                if random { "random" } else { "sequential" }
            ),
        }
    }

    println!("\n## Intersection (intersect v1)\n");
    println!("| lists | pairs | max len | sum of shorter lens | kernel ms | Mpairs/s | G shorter-elems/s | checked |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---|");
    for (n_lists, max_len, n_pairs) in [(20_000usize, 64u64, 1usize << 20), (20_000, 4096, 1 << 20)] {
        let (lists, pairs) = workload(n_lists, max_len, 1 << 22, n_pairs);
        // First call compiles and warms up; time the second.
        intersect_counts_timed(&gpu, &lists, &pairs)?;
        let (counts, ms) = intersect_counts_timed(&gpu, &lists, &pairs)?;
        let shorter: u64 = pairs.iter().map(|p| u64::from(p.1.min(p.3))).sum();
        let mut ok = true;
        for i in (0..pairs.len()).step_by(97) {
            if counts[i] != cpu_count(&lists, pairs[i]) {
                ok = false;
                break;
            }
        }
        let s = f64::from(ms) * 1e-3;
        println!(
            "| {n_lists} | {n_pairs} | {max_len} | {shorter} | {ms:.3} | {:.1} | {:.2} | {} |",
            n_pairs as f64 / s / 1e6,
            shorter as f64 / s / 1e9,
            if ok { "sample matches CPU" } else { "MISMATCH" }
        );
        if !ok {
            return Err(GpuError::Driver(
                "intersection result differs from the CPU reference".into(),
            ));
        }
    }

    if let Some(path) = &args.json {
        let body = serde_json::json!({ "device": info, "probes": results });
        std::fs::write(path, format!("{body:#}\n"))
            .map_err(|e| GpuError::InvalidInput(format!("cannot write {path}: {e}")))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    // Bad arguments exit with 64, not clap's 2, which means "no GPU" here.
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(64)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if let Err(e) = gpu_available() {
        eprintln!("csm-gpu-probe: {e}");
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("csm-gpu-probe: {e}");
            ExitCode::FAILURE
        }
    }
}
