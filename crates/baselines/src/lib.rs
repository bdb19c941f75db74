//! csm-baselines: CPU engines.
//!
//! * [`cpu`]: the parallel WCOJ engine (GCSM's CPU baseline).
//! * [`oracle`]: brute force and petgraph VF2, for cross-checking.

//! * [`registry`]: engines by name, as the `csm` CLI exposes them.

pub mod cpu;
pub mod oracle;
pub mod registry;

pub use cpu::CpuEngine;
pub use oracle::{BruteForce, Vf2};
