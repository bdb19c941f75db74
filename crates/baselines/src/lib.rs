//! csm-baselines: CPU engines.
//!
//! * [`cpu`]: the parallel WCOJ engine (GCSM's CPU baseline).
//! * [`oracle`]: brute force and petgraph VF2, for cross-checking.
//! * [`rapidflow`], [`geneva`], [`pbe`], [`stwig`]: baseline algorithms.
//! * [`listing`]: the embeddings themselves, for `--list`.
//! * [`registry`]: engines by name, as the `csm` CLI exposes them.

pub mod cpu;
pub mod geneva;
pub mod listing;
pub mod oracle;
pub mod pbe;
pub mod rapidflow;
pub mod registry;
pub mod stwig;

pub use cpu::{CpuEngine, HubRule};
pub use oracle::{BruteForce, Vf2};
