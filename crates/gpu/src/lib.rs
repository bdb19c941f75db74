//! `csm-gpu`: the CUDA device layer of csm.
//!
//! GCSM (paper 000) runs incremental matching on the GPU with most adjacency
//! data left in CPU memory. Sec. II-C compares the three ways a kernel can
//! reach host data — DMA copies, unified (managed) memory migrated in 4 KB
//! pages, and zero-copy loads of pinned, device-mapped host memory in 128-byte
//! lines — and GCSM combines a DMA-filled device cache of hot neighbour lists
//! (Sec. V-B) with zero-copy access for the rest (Sec. V-A, V-C). This crate
//! provides those pieces:
//!
//! * [`Gpu`] / [`gpu_available`]: driver and device detection that never
//!   panics (no driver → [`GpuError::NoDriver`]), the primary context and one
//!   stream, device copies ([`Gpu::upload`], [`Gpu::download`]);
//! * [`PinnedBuffer`] (zero-copy, `cuMemHostAlloc(DEVICEMAP | PORTABLE)`) and
//!   [`ManagedBuffer`] (`cuMemAllocManaged`, refused beyond free memory);
//! * [`compile_source`]: NVRTC compilation of the embedded `kernels/*.cu` to a
//!   CUBIN for the device's architecture, cached per process;
//! * kernels: [`intersect_counts`] (warp-cooperative sorted-set intersection,
//!   the matching kernel's building block) and the bandwidth probes
//!   ([`probe_bandwidth`], [`probe_memory`]);
//! * the matcher ([`GpuEngine`], `kernels/match.cu`): the host graph in
//!   pinned (or managed) memory with a device vertex table ([`HostGraph`],
//!   Sec. V-A), the DCSR cache and its policies ([`cache`], Sec. IV, V-B),
//!   the STMatch-style warp-per-seed kernel ([`DeviceMatcher`], Sec. V-C),
//!   in the variants of Sec. VI ([`Variant`]: ZP, UM, VSGM, Naive, GCSM).
//!
//! CUDA libraries are loaded at run time (cudarc `dynamic-loading`), so the
//! crate builds and its tests pass on machines without CUDA: GPU tests call
//! [`gpu_available`] first and skip on `Err`.

mod batch_seeds;
pub mod cache;
pub mod device;
pub mod emulate;
pub mod engine;
pub mod error;
pub mod host_graph;
pub mod hot;
pub mod intersect;
mod list_write;
pub mod matcher;
pub mod nvrtc;
pub mod overlap;
pub mod plan;
pub mod probe;
pub mod resident;
pub mod route;
pub mod shared_ptr;
pub mod shares;

pub use cache::{CacheSelector, DeviceCache, KernelCache, SelectCtx};
pub use device::{gpu_available, DeviceInfo, Gpu, ManagedBuffer, MemInfo, PinnedBuffer};
pub use engine::{run_staged, Budget, GpuEngine, StagedRun, Variant};
pub use error::{GpuError, GpuResult};
pub use host_graph::{HostGraph, HostMemory};
pub use hot::{HotLists, HotLoad};
pub use intersect::{intersect_counts, intersect_counts_timed, launch_intersect, PairRange};
pub use matcher::{DeviceMatcher, KernelStats, MatcherConfig, Seeds, SETTINGS as KERNEL_SETTINGS};
pub use nvrtc::{compile_source, KernelSource};
pub use plan::{QueryPlans, Seed};
pub use probe::{probe_bandwidth, probe_memory, ProbeMemory, ProbeResult};
pub use resident::{ResidentCache, ResidentLayout};

/// Re-export of the pinned cudarc version, for crates that launch their own
/// kernels on a [`Gpu`]'s context and stream.
pub use cudarc;
