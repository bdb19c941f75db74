//! Run-time compilation of the CUDA kernels with NVRTC.
//!
//! The `.cu` sources under `kernels/` are embedded in the binary with
//! `include_str!`, so a carried executable needs no source tree. Each source is
//! compiled once per process and target architecture straight to a CUBIN for
//! the device (`--gpu-architecture=sm_XY`, e.g. `sm_90` on H100), so the
//! driver never JIT-compiles PTX; the loaded module is cached per [`Gpu`].
//! NVRTC optimises device code by default (the `-O3` equivalent); debug code
//! generation (`-G`) is never requested.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys, Ptx};

use crate::device::{guard, Gpu};
use crate::error::{GpuError, GpuResult};

/// A kernel source embedded in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSource {
    /// File name under `kernels/` (also the NVRTC program name).
    pub name: &'static str,
    /// CUDA C++ source text.
    pub src: &'static str,
}

/// `kernels/intersect.cu`: warp-cooperative sorted-set intersection counts.
pub const INTERSECT_CU: KernelSource = KernelSource {
    name: "intersect.cu",
    src: include_str!("../../../kernels/intersect.cu"),
};

/// `kernels/probe.cu`: bandwidth probes and zero-copy round-trip helpers.
pub const PROBE_CU: KernelSource = KernelSource {
    name: "probe.cu",
    src: include_str!("../../../kernels/probe.cu"),
};

/// `kernels/match.cu`: the incremental/static matching kernel and the
/// vertex-table scatter helpers.
pub const MATCH_CU: KernelSource = KernelSource {
    name: "match.cu",
    src: include_str!("../../../kernels/match.cu"),
};

/// Every embedded kernel source.
pub const ALL_SOURCES: &[KernelSource] = &[INTERSECT_CU, PROBE_CU, MATCH_CU];

/// Options passed to NVRTC for target `arch` (e.g. `sm_90`).
pub fn nvrtc_options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "--generate-line-info".to_string(),
    ]
}

type ImageKey = (String, String, u64);

/// Per-process cache of compiled CUBIN images, keyed by (name, arch, source hash).
fn image_cache() -> &'static Mutex<HashMap<ImageKey, Arc<Vec<u8>>>> {
    static CACHE: OnceLock<Mutex<HashMap<ImageKey, Arc<Vec<u8>>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn source_hash(src: &str) -> u64 {
    let mut h = DefaultHasher::new();
    src.hash(&mut h);
    h.finish()
}

/// Compiles `src` for `arch` to a CUBIN image (cached per process).
///
/// Errors: [`GpuError::NoNvrtc`] when `libnvrtc` cannot be loaded,
/// [`GpuError::Compile`] (with the NVRTC program log) when the source does not
/// compile.
pub fn compile_image(name: &str, src: &str, arch: &str) -> GpuResult<Arc<Vec<u8>>> {
    let key = (name.to_string(), arch.to_string(), source_hash(src));
    if let Some(img) = lock(image_cache()).get(&key) {
        return Ok(img.clone());
    }
    let img = Arc::new(compile_uncached(name, src, arch)?);
    lock(image_cache()).insert(key, img.clone());
    Ok(img)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave the maps inconsistent
    // (single insert), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn compile_uncached(name: &str, src: &str, arch: &str) -> GpuResult<Vec<u8>> {
    // SAFETY: only tries to dlopen the candidate library names.
    let present = std::panic::catch_unwind(|| unsafe { nvrtc_sys::is_culib_present() }).unwrap_or(false);
    if !present {
        return Err(GpuError::NoNvrtc("libnvrtc.so could not be loaded".into()));
    }
    let compile_err = |log: String| GpuError::Compile {
        kernel: name.to_string(),
        log,
    };
    let c_src = CString::new(src).map_err(|_| compile_err("source contains a NUL byte".into()))?;
    let c_name = CString::new(name).map_err(|_| compile_err("kernel name contains a NUL byte".into()))?;
    let options = nvrtc_options(arch);
    guard(
        || {
            let prog = nvrtc_result::create_program(&c_src, Some(&c_name))
                .map_err(|e| compile_err(format!("nvrtcCreateProgram failed: {e:?}")))?;
            // SAFETY: `prog` is live until destroyed at the end of this block;
            // `c_src`/`c_name` outlive it.
            let out = unsafe { compile_and_fetch(prog, &options) };
            // SAFETY: created above, destroyed once.
            let _ = unsafe { nvrtc_result::destroy_program(prog) };
            out.map_err(|(status, log)| compile_err(format!("{status}\noptions: {}\n{log}", options.join(" "))))
        },
        |msg| GpuError::NoNvrtc(format!("NVRTC library call panicked: {msg}")),
    )
}

/// Compiles `prog` and returns its CUBIN, or (status, program log).
///
/// # Safety
/// `prog` must be a live program from `nvrtcCreateProgram`.
unsafe fn compile_and_fetch(prog: nvrtc_sys::nvrtcProgram, options: &[String]) -> Result<Vec<u8>, (String, String)> {
    let compiled = nvrtc_result::compile_program(prog, options);
    let log = program_log(prog);
    if let Err(e) = compiled {
        return Err((format!("nvrtcCompileProgram: {:?}", e.0), log));
    }
    let mut size: usize = 0;
    nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size)
        .result()
        .map_err(|e| (format!("nvrtcGetCUBINSize: {:?}", e.0), log.clone()))?;
    if size == 0 {
        return Err(("NVRTC produced no CUBIN (virtual architecture?)".into(), log));
    }
    let mut cubin = vec![0u8; size];
    nvrtc_sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast::<c_char>())
        .result()
        .map_err(|e| (format!("nvrtcGetCUBIN: {:?}", e.0), log))?;
    Ok(cubin)
}

/// The program log as text (empty if NVRTC cannot provide it).
///
/// # Safety
/// `prog` must be a live program from `nvrtcCreateProgram`.
unsafe fn program_log(prog: nvrtc_sys::nvrtcProgram) -> String {
    match nvrtc_result::get_program_log(prog) {
        Ok(raw) => {
            let bytes: Vec<u8> = raw.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
            String::from_utf8_lossy(&bytes).trim_end().to_string()
        }
        Err(e) => format!("<no program log: {e:?}>"),
    }
}

/// Compiles `src` (named `name` in diagnostics) for `gpu`'s architecture and
/// loads it into its context. Modules are cached per `Gpu` by name and source.
///
/// A source that does not compile yields [`GpuError::Compile`] with the NVRTC
/// log.
pub fn compile_source(gpu: &Gpu, name: &str, src: &str) -> GpuResult<Arc<CudaModule>> {
    let key = format!("{name}#{:016x}", source_hash(src));
    if let Some(m) = lock(&gpu.modules).get(&key) {
        return Ok(m.clone());
    }
    let image = compile_image(name, src, &gpu.info().arch())?;
    let ctx = gpu.context().clone();
    let module = guard(
        || {
            ctx.load_module(Ptx::from_binary(image.as_ref().clone()))
                .map_err(|e| GpuError::driver(&format!("cuModuleLoadData({name})"), e))
        },
        |msg| GpuError::Driver(format!("cuModuleLoadData({name}) panicked: {msg}")),
    )?;
    lock(&gpu.modules).insert(key, module.clone());
    Ok(module)
}

/// Loads function `func` of the embedded source `source` on `gpu`.
pub fn kernel(gpu: &Gpu, source: KernelSource, func: &str) -> GpuResult<CudaFunction> {
    kernel_with(gpu, source, "", func)
}

/// [`kernel`] of `source` compiled with `defines` (source lines, e.g.
/// `#define MAXQ 16`) ahead of it: another module, cached apart.
pub fn kernel_with(gpu: &Gpu, source: KernelSource, defines: &str, func: &str) -> GpuResult<CudaFunction> {
    let module = if defines.is_empty() {
        compile_source(gpu, source.name, source.src)?
    } else {
        compile_source(gpu, source.name, &format!("{defines}{}", source.src))?
    };
    module
        .load_function(func)
        .map_err(|e| GpuError::driver(&format!("cuModuleGetFunction({func})"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_embedded() {
        for s in ALL_SOURCES {
            assert!(s.src.contains("extern \"C\" __global__"), "{}", s.name);
        }
        assert!(INTERSECT_CU.src.contains("intersect_count_warp"));
        assert!(PROBE_CU.src.contains("probe_seq"));
        assert!(MATCH_CU.src.contains("match_kernel"));
    }

    #[test]
    fn options_target_the_device() {
        let o = nvrtc_options("sm_90");
        assert!(o.contains(&"--gpu-architecture=sm_90".to_string()));
        assert!(o.contains(&"--std=c++17".to_string()));
    }

    #[test]
    fn compile_without_nvrtc_is_an_error_not_a_panic() {
        // On a machine with NVRTC this compiles; without, it must be NoNvrtc.
        match compile_image("t.cu", "extern \"C\" __global__ void k() {}", "sm_90") {
            Ok(img) => assert!(!img.is_empty()),
            Err(e) => assert!(matches!(e, GpuError::NoNvrtc(_)), "{e}"),
        }
    }
}
