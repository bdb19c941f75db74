//! Device discovery, the context/stream pair, and memory of the three kinds
//! GCSM uses (Sec. II-C "CPU-GPU Communication"):
//!
//! * **device memory** ([`Gpu::upload`], [`Gpu::alloc_zeros`]): the GPU-side
//!   cache of frequently accessed neighbour lists, filled by one DMA copy
//!   (Sec. V-B, DCSR arrays);
//! * **pinned, device-mapped host memory** ([`PinnedBuffer`]): host memory
//!   allocated with `cuMemHostAlloc(DEVICEMAP | PORTABLE)` and read by kernels
//!   through `cuMemHostGetDevicePointer` in 128-byte lines, i.e. GCSM's
//!   *zero-copy* access to the CPU-resident adjacency lists (Sec. V-A,
//!   `pHost`/`pDevice` arrays; the "ZP" baseline of Sec. VI-A);
//! * **managed (unified) memory** ([`ManagedBuffer`]): `cuMemAllocManaged`,
//!   migrated in pages on demand (the "UM" baseline of Sec. VI-A).
//!
//! Nothing here panics when no driver or device is present: [`Gpu::open`] and
//! [`gpu_available`] return [`GpuError::NoDriver`] / [`GpuError::NoDevice`].

use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext, CudaModule, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use serde::Serialize;

use crate::error::{describe, DriverContext, GpuError, GpuResult};

/// Environment variable that, when set to anything but `0` or the empty
/// string, makes [`Gpu::open`] report [`GpuError::NoDriver`] (forces the CPU
/// paths on a machine that has a GPU).
pub const DISABLE_ENV: &str = "CSM_GPU_DISABLE";

/// What [`gpu_available`] and [`Gpu::info`] report about a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability (major, minor); (9, 0) on Hopper.
    pub compute_capability: (u32, u32),
    /// Total device memory in bytes.
    pub total_mem: usize,
    /// Free device memory in bytes when the device was opened.
    pub free_mem: usize,
    /// Number of streaming multiprocessors.
    pub multiprocessors: u32,
    /// L2 cache size in bytes.
    pub l2_cache_bytes: u32,
    /// Driver's CUDA version (major, minor), e.g. (13, 0).
    pub driver_version: (u32, u32),
    /// Whether the device can map pinned host memory (zero-copy).
    pub can_map_host_memory: bool,
    /// Whether host and device may access managed memory concurrently.
    pub concurrent_managed_access: bool,
}

impl DeviceInfo {
    /// NVRTC target architecture of the device, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        arch_name(self.compute_capability)
    }
}

/// `sm_XY` for compute capability (X, Y).
pub(crate) fn arch_name((major, minor): (u32, u32)) -> String {
    format!("sm_{major}{minor}")
}

/// Free and total device memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MemInfo {
    /// Free bytes.
    pub free: usize,
    /// Total bytes.
    pub total: usize,
}

/// Opens device 0 and reports what it is, or why there is no usable GPU.
///
/// Never panics: a missing `libcuda.so`, a driver without devices, or a failed
/// initialisation all come back as `Err`, and [`GpuError::is_unavailable`]
/// tells those apart from failures on a working GPU.
pub fn gpu_available() -> GpuResult<DeviceInfo> {
    Gpu::open(0).map(|gpu| gpu.info().clone())
}

/// Runs `f`, turning a panic inside cudarc (its dynamic loader panics when a
/// library or symbol is missing) into an error built by `on_panic`.
pub(crate) fn guard<R>(f: impl FnOnce() -> GpuResult<R>, on_panic: impl FnOnce(String) -> GpuError) -> GpuResult<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = if let Some(s) = payload.downcast_ref::<&str>() {
                (*s).to_string()
            } else if let Some(s) = payload.downcast_ref::<String>() {
                s.clone()
            } else {
                "unknown panic".to_string()
            };
            Err(on_panic(msg))
        }
    }
}

fn driver_panic(op: &'static str) -> impl FnOnce(String) -> GpuError {
    move |msg| GpuError::Driver(format!("{op}: CUDA library call panicked: {msg}"))
}

/// An opened CUDA device: its primary context, one stream on which all work of
/// this handle is queued, and the kernel modules loaded into the context.
///
/// `Gpu` is `Send + Sync`; work submitted from several threads is serialised
/// on the one stream.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    pub(crate) modules: Mutex<HashMap<String, Arc<CudaModule>>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).finish()
    }
}

impl Gpu {
    /// Detects the driver and device `ordinal`, retains the device's primary
    /// context and creates one stream.
    pub fn open(ordinal: usize) -> GpuResult<Gpu> {
        if let Ok(v) = std::env::var(DISABLE_ENV) {
            if !v.is_empty() && v != "0" {
                return Err(GpuError::NoDriver(format!("disabled by {DISABLE_ENV}={v}")));
            }
        }
        // SAFETY: only tries to dlopen the candidate library names.
        let present = catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false);
        if !present {
            return Err(GpuError::NoDriver("libcuda.so could not be loaded".to_string()));
        }
        guard(
            || Self::open_inner(ordinal),
            |msg| GpuError::NoDriver(format!("the CUDA driver library is unusable: {msg}")),
        )
    }

    fn open_inner(ordinal: usize) -> GpuResult<Gpu> {
        if let Err(e) = result::init() {
            return Err(match e.0 {
                sys::CUresult::CUDA_ERROR_NO_DEVICE => GpuError::NoDevice { ordinal, count: 0 },
                _ => GpuError::NoDriver(format!("cuInit failed: {}", describe(e))),
            });
        }
        let count = result::device::get_count().ctx("cuDeviceGetCount")?;
        let count = usize::try_from(count).unwrap_or(0);
        if ordinal >= count {
            return Err(GpuError::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).ctx("retaining the primary context")?;
        let stream = ctx.new_stream().ctx("cuStreamCreate")?;
        let info = query_info(&ctx, ordinal)?;
        Ok(Gpu {
            ctx,
            stream,
            info,
            modules: Mutex::new(HashMap::new()),
        })
    }

    /// What the device is (free memory as of [`Gpu::open`]).
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The cudarc context (primary context of the device).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream all wrappers of this crate queue their work on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Free and total device memory now.
    pub fn mem_info(&self) -> GpuResult<MemInfo> {
        let (free, total) = self.ctx.mem_get_info().ctx("cuMemGetInfo")?;
        Ok(MemInfo { free, total })
    }

    /// Blocks until all work queued on [`Gpu::stream`] has finished.
    pub fn synchronize(&self) -> GpuResult<()> {
        self.stream.synchronize().ctx("cuStreamSynchronize")
    }

    /// Refuses a device allocation of `bytes` that exceeds free memory.
    fn check_fits(&self, bytes: usize) -> GpuResult<()> {
        let free = self.mem_info()?.free;
        if bytes > free {
            return Err(GpuError::OutOfMemory { requested: bytes, free });
        }
        Ok(())
    }

    /// Maps a failed allocation of `bytes` to `OutOfMemory` when the driver
    /// says so, with the free memory at the time of the failure.
    fn alloc_error(&self, op: &str, bytes: usize, e: result::DriverError) -> GpuError {
        if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let free = self.mem_info().map(|m| m.free).unwrap_or(0);
            GpuError::OutOfMemory { requested: bytes, free }
        } else {
            GpuError::driver(op, e)
        }
    }

    /// Copies `data` into a new device allocation (one DMA transfer, as GCSM
    /// ships the packed DCSR cache, Sec. V-B). `data` must not be empty;
    /// more than the free device memory is refused with `OutOfMemory`.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> GpuResult<CudaSlice<T>> {
        if data.is_empty() {
            return Err(GpuError::InvalidInput(
                "cannot upload an empty slice to the device".into(),
            ));
        }
        let bytes = std::mem::size_of_val(data);
        self.check_fits(bytes)?;
        self.stream
            .clone_htod(data)
            .map_err(|e| self.alloc_error("cuMemcpyHtoD", bytes, e))
    }

    /// A new zero-filled device allocation of `len > 0` elements (refused with
    /// `OutOfMemory` beyond the free device memory).
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> GpuResult<CudaSlice<T>> {
        let bytes = checked_bytes::<T>(len)?;
        if len == 0 {
            return Err(GpuError::InvalidInput(
                "cannot allocate zero elements on the device".into(),
            ));
        }
        self.check_fits(bytes)?;
        self.stream
            .alloc_zeros(len)
            .map_err(|e| self.alloc_error("cuMemAlloc", bytes, e))
    }

    /// Copies a device allocation back to the host (and waits for it).
    pub fn download<T: DeviceRepr>(&self, src: &CudaSlice<T>) -> GpuResult<Vec<T>> {
        let v = self.stream.clone_dtoh(src).ctx("cuMemcpyDtoH")?;
        self.synchronize()?;
        Ok(v)
    }

    /// Allocates `len` zeroed elements of pinned host memory mapped into the
    /// device address space (GCSM's zero-copy buffers, Sec. II-C / V-A).
    pub fn alloc_pinned<T: DeviceRepr + ValidAsZeroBits + Copy>(&self, len: usize) -> GpuResult<PinnedBuffer<T>> {
        PinnedBuffer::new(self, len)
    }

    /// Allocates `len` zeroed elements of managed memory (GCSM's "UM"
    /// baseline). Refuses with [`GpuError::OutOfMemory`] when more than the
    /// free device memory is requested: oversubscribing managed memory can
    /// hang the GPU, not only this process.
    pub fn alloc_managed<T: DeviceRepr + ValidAsZeroBits + Copy>(&self, len: usize) -> GpuResult<ManagedBuffer<T>> {
        ManagedBuffer::new(self, len)
    }

    /// Runs `f` (which queues work on [`Gpu::stream`]) between two timing
    /// events and returns its result with the elapsed GPU time in ms.
    pub fn timed<R>(&self, f: impl FnOnce() -> GpuResult<R>) -> GpuResult<(R, f32)> {
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.stream.record_event(flags).ctx("cuEventRecord")?;
        let r = f()?;
        let end = self.stream.record_event(flags).ctx("cuEventRecord")?;
        let ms = start.elapsed_ms(&end).ctx("cuEventElapsedTime")?;
        Ok((r, ms))
    }
}

fn query_info(ctx: &Arc<CudaContext>, ordinal: usize) -> GpuResult<DeviceInfo> {
    use sys::CUdevice_attribute as A;
    let attr = |a: A| -> GpuResult<u32> {
        let v = ctx.attribute(a).ctx("cuDeviceGetAttribute")?;
        Ok(u32::try_from(v).unwrap_or(0))
    };
    let name = ctx.name().ctx("cuDeviceGetName")?;
    let (major, minor) = ctx.compute_capability().ctx("compute capability")?;
    let (free_mem, total_mem) = ctx.mem_get_info().ctx("cuMemGetInfo")?;
    let mut version: i32 = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .ctx("cuDriverGetVersion")?;
    let version = u32::try_from(version).unwrap_or(0);
    Ok(DeviceInfo {
        ordinal,
        name,
        compute_capability: (u32::try_from(major).unwrap_or(0), u32::try_from(minor).unwrap_or(0)),
        total_mem,
        free_mem,
        multiprocessors: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        l2_cache_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
        driver_version: (version / 1000, (version % 1000) / 10),
        can_map_host_memory: attr(A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)? != 0,
        concurrent_managed_access: attr(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)? != 0,
    })
}

/// `len * size_of::<T>()`, or `InvalidInput` on overflow.
fn checked_bytes<T>(len: usize) -> GpuResult<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        GpuError::InvalidInput(format!(
            "{len} elements of {} bytes overflow the address space",
            std::mem::size_of::<T>()
        ))
    })
}

/// Pinned host memory mapped into the device address space: GCSM's zero-copy
/// storage for CPU-resident neighbour lists (Sec. II-C; Sec. V-A allocates
/// each list with `cudaHostAlloc` and keeps its `cudaHostGetDevicePointer`
/// address in `pDevice`).
///
/// The host side is an ordinary slice ([`PinnedBuffer::as_slice`]); kernels
/// get [`PinnedBuffer::device_ptr`] and load from it over the interconnect in
/// 128-byte lines without any copy call. The memory is zero-initialised and
/// freed on drop.
///
/// Kernels access the memory asynchronously: after queueing a kernel that
/// writes (or reads) the buffer, call [`Gpu::synchronize`] before touching the
/// host slice again. Host writes are visible to kernels launched afterwards.
pub struct PinnedBuffer<T> {
    host: NonNull<T>,
    len: usize,
    bytes: usize,
    device: sys::CUdeviceptr,
    ctx: Arc<CudaContext>,
    _owns: PhantomData<T>,
}

// SAFETY: the buffer owns its allocation like a `Vec<T>`; the context handle is
// thread-safe.
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
// SAFETY: shared access only hands out `&[T]`.
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}

impl<T: DeviceRepr + ValidAsZeroBits + Copy> PinnedBuffer<T> {
    fn new(gpu: &Gpu, len: usize) -> GpuResult<Self> {
        let bytes = checked_bytes::<T>(len)?;
        // cuMemHostAlloc rejects 0 bytes; keep at least one element's worth.
        let alloc_bytes = bytes.max(std::mem::size_of::<T>()).max(1);
        let ctx = gpu.ctx.clone();
        guard(
            || {
                ctx.bind_to_thread().ctx("cuCtxSetCurrent")?;
                let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
                // SAFETY: fresh allocation; zeroed below before any read.
                let raw = unsafe { result::malloc_host(alloc_bytes, flags) }.map_err(|e| {
                    if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                        GpuError::Driver(format!("cuMemHostAlloc: cannot pin {alloc_bytes} bytes of host memory"))
                    } else {
                        GpuError::driver("cuMemHostAlloc", e)
                    }
                })?;
                let host = NonNull::new(raw.cast::<T>())
                    .ok_or_else(|| GpuError::Driver("cuMemHostAlloc returned a null pointer".into()))?;
                let mut device: sys::CUdeviceptr = 0;
                // SAFETY: `raw` was returned by cuMemHostAlloc with DEVICEMAP.
                let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, raw, 0) }.result();
                if let Err(e) = r {
                    // SAFETY: `raw` came from cuMemHostAlloc and is not used again.
                    let _ = unsafe { result::free_host(raw) };
                    return Err(GpuError::driver("cuMemHostGetDevicePointer", e));
                }
                // SAFETY: `alloc_bytes` writable bytes at `raw`.
                unsafe { std::ptr::write_bytes(raw.cast::<u8>(), 0, alloc_bytes) };
                Ok(PinnedBuffer {
                    host,
                    len,
                    bytes,
                    device,
                    ctx: ctx.clone(),
                    _owns: PhantomData,
                })
            },
            driver_panic("cuMemHostAlloc"),
        )
    }
}

impl<T> PinnedBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.bytes
    }

    /// Device-side address of the buffer (the `pDevice` entry of GCSM
    /// Sec. V-A): pass it to kernels as a `const T*` / `T*` argument.
    pub fn device_ptr(&self) -> u64 {
        self.device
    }

    /// Host view of the buffer.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `len` initialised (zeroed, `T: ValidAsZeroBits`) elements.
        unsafe { std::slice::from_raw_parts(self.host.as_ptr(), self.len) }
    }

    /// Mutable host view of the buffer.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` is unique on the host side.
        unsafe { std::slice::from_raw_parts_mut(self.host.as_ptr(), self.len) }
    }
}

impl<T> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemHostAlloc in `new`, freed once.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
            result::free_host(self.host.as_ptr().cast::<c_void>())
        }));
    }
}

impl<T> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .field("device_ptr", &format_args!("{:#x}", self.device))
            .finish()
    }
}

/// Managed (unified) memory, `cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL)`: one
/// address valid on host and device, migrated in pages on first touch (GCSM's
/// "UM" baseline, Sec. II-C / VI-A). Zero-initialised on the host, freed on
/// drop.
///
/// As with [`PinnedBuffer`], synchronise before reading on the host what a
/// kernel wrote.
pub struct ManagedBuffer<T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    bytes: usize,
    ctx: Arc<CudaContext>,
    _owns: PhantomData<T>,
}

// SAFETY: owns its allocation like a `Vec<T>`.
unsafe impl<T: Send> Send for ManagedBuffer<T> {}
// SAFETY: shared access only hands out `&[T]`.
unsafe impl<T: Sync> Sync for ManagedBuffer<T> {}

impl<T: DeviceRepr + ValidAsZeroBits + Copy> ManagedBuffer<T> {
    fn new(gpu: &Gpu, len: usize) -> GpuResult<Self> {
        let bytes = checked_bytes::<T>(len)?;
        let alloc_bytes = bytes.max(std::mem::size_of::<T>()).max(1);
        let free = gpu.mem_info()?.free;
        if alloc_bytes > free {
            return Err(GpuError::OutOfMemory {
                requested: alloc_bytes,
                free,
            });
        }
        let ctx = gpu.ctx.clone();
        guard(
            || {
                ctx.bind_to_thread().ctx("cuCtxSetCurrent")?;
                // SAFETY: fresh allocation; zeroed below before any read.
                let ptr = unsafe { result::malloc_managed(alloc_bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL) }
                    .map_err(|e| gpu.alloc_error("cuMemAllocManaged", alloc_bytes, e))?;
                if ptr == 0 {
                    return Err(GpuError::Driver("cuMemAllocManaged returned a null pointer".into()));
                }
                // SAFETY: managed memory is host-addressable at the same
                // address; no kernel uses it yet.
                unsafe { std::ptr::write_bytes(ptr as usize as *mut u8, 0, alloc_bytes) };
                Ok(ManagedBuffer {
                    ptr,
                    len,
                    bytes,
                    ctx: ctx.clone(),
                    _owns: PhantomData,
                })
            },
            driver_panic("cuMemAllocManaged"),
        )
    }
}

impl<T> ManagedBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.bytes
    }

    /// The managed address, valid in kernels.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Host view (pages migrate back to the host on access).
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `len` initialised elements at a host-addressable address.
        unsafe { std::slice::from_raw_parts(self.ptr as usize as *const T, self.len) }
    }

    /// Mutable host view.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above; `&mut self` is unique on the host side.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as usize as *mut T, self.len) }
    }
}

impl<T> Drop for ManagedBuffer<T> {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemAllocManaged in `new`, freed once.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { sys::cuMemFree_v2(self.ptr).result() }));
    }
}

impl<T> std::fmt::Debug for ManagedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedBuffer")
            .field("len", &self.len)
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names() {
        assert_eq!(arch_name((9, 0)), "sm_90");
        assert_eq!(arch_name((8, 6)), "sm_86");
    }

    #[test]
    fn open_never_panics() {
        // With or without a GPU this must return, not unwind.
        match Gpu::open(0) {
            Ok(gpu) => assert!(!gpu.info().name.is_empty()),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
        match Gpu::open(4096) {
            Ok(_) => panic!("no machine has 4097 GPUs"),
            Err(e) => assert!(e.is_unavailable(), "{e}"),
        }
    }

    #[test]
    fn overflowing_sizes_are_rejected() {
        assert!(matches!(
            checked_bytes::<u64>(usize::MAX),
            Err(GpuError::InvalidInput(_))
        ));
        assert_eq!(checked_bytes::<u32>(3).ok(), Some(12));
    }
}
