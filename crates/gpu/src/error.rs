//! Typed errors of the GPU layer.
//!
//! Every fallible operation of `csm-gpu` returns [`GpuError`]. Absence of a
//! driver or a device is an ordinary error (never a panic), so that callers
//! such as the benchmark driver can fall back to the CPU engines and tests can
//! skip cleanly on machines without a GPU.

use cudarc::driver::{result::DriverError, sys::CUresult};
use thiserror::Error;

/// Result alias of the crate.
pub type GpuResult<T> = Result<T, GpuError>;

/// Errors of the GPU layer.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum GpuError {
    /// The CUDA driver library could not be loaded or initialised.
    #[error("no CUDA driver found ({0}): GPU engines are unavailable on this machine")]
    NoDriver(String),

    /// The driver loaded, but there is no device with the requested ordinal.
    #[error(
        "no CUDA device with ordinal {ordinal} (the driver reports {count} device(s)): \
         GPU engines are unavailable on this machine"
    )]
    NoDevice {
        /// Requested device ordinal.
        ordinal: usize,
        /// Number of devices the driver reports.
        count: usize,
    },

    /// The NVRTC runtime-compilation library could not be loaded.
    #[error(
        "NVRTC not found ({0}): kernels cannot be compiled; put the CUDA toolkit's lib64 \
         (libnvrtc.so.13) on LD_LIBRARY_PATH"
    )]
    NoNvrtc(String),

    /// NVRTC rejected a kernel source; `log` is the compiler's program log.
    #[error("NVRTC failed to compile kernel `{kernel}`:\n{log}")]
    Compile {
        /// Name of the kernel source (file name or caller-given name).
        kernel: String,
        /// NVRTC program log (or a description of the failure).
        log: String,
    },

    /// An allocation was refused because it does not fit in free device memory.
    #[error("out of GPU memory: requested {requested} bytes, {free} bytes free on the device")]
    OutOfMemory {
        /// Bytes requested.
        requested: usize,
        /// Bytes free on the device when the request was made.
        free: usize,
    },

    /// Arguments that cannot be handed to a kernel (out-of-range list, size
    /// overflow, ...). Checked on the host before anything is launched.
    #[error("invalid input: {0}")]
    InvalidInput(String),

    /// A cache policy's selection does not fit the cache budget (VSGM's
    /// k-hop neighbourhood, a DCSR pack beyond 32-bit offsets).
    #[error("cache over budget: {0}")]
    OverBudget(String),

    /// The kernel stopped at its time limit; its counts are incomplete.
    #[error("timed out: {0}")]
    TimedOut(String),

    /// Any other CUDA driver error, with the operation that failed.
    #[error("CUDA driver error: {0}")]
    Driver(String),
}

impl GpuError {
    /// Wraps a driver error with the name of the operation that failed.
    pub(crate) fn driver(op: &str, err: DriverError) -> Self {
        match err.0 {
            CUresult::CUDA_ERROR_NO_DEVICE => GpuError::NoDevice { ordinal: 0, count: 0 },
            _ => GpuError::Driver(format!("{op}: {}", describe(err))),
        }
    }

    /// Whether this error means "no usable GPU here" (as opposed to a bug or a
    /// failure on a working GPU). Callers use it to decide to fall back to CPU.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            GpuError::NoDriver(_) | GpuError::NoDevice { .. } | GpuError::NoNvrtc(_)
        )
    }
}

/// `CUDA_ERROR_NAME (description)` for a driver error, without panicking when
/// the driver itself cannot describe it.
pub(crate) fn describe(err: DriverError) -> String {
    let name = err
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", err.0));
    match err.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// Extension to turn `Result<T, DriverError>` into `GpuResult<T>` with context.
pub(crate) trait DriverContext<T> {
    fn ctx(self, op: &str) -> GpuResult<T>;
}

impl<T> DriverContext<T> for Result<T, DriverError> {
    fn ctx(self, op: &str) -> GpuResult<T> {
        self.map_err(|e| GpuError::driver(op, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_human() {
        let e = GpuError::NoDriver("libcuda.so could not be loaded".into());
        assert_eq!(
            e.to_string(),
            "no CUDA driver found (libcuda.so could not be loaded): GPU engines are \
             unavailable on this machine"
        );
        assert!(e.is_unavailable());
        let e = GpuError::OutOfMemory { requested: 10, free: 5 };
        assert!(e.to_string().contains("requested 10 bytes"));
        assert!(!e.is_unavailable());
        let e = GpuError::Compile {
            kernel: "k.cu".into(),
            log: "error: expected a \";\"".into(),
        };
        assert!(e.to_string().contains("k.cu"));
    }
}
