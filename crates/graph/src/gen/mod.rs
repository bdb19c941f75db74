//! Seeded generators: R-MAT, Erdős–Rényi and road-like grids, vertex
//! labellers, update streams (GCSM Sec. VI-A) and query graphs.
//!
//! Every generator takes a `seed: u64`, draws from a `ChaCha8Rng` seeded
//! with it, and returns the same output for the same seed.

mod build;
mod er;
mod grid;
mod labels;
mod pairs;
mod query;
mod rmat;
mod standard;
mod stream;

pub use build::graph_from_pairs;
pub use er::erdos_renyi;
pub use grid::grid;
pub use labels::{assign_labels, labels_of_ids, Labeller};
pub use query::{random_walk_query, QuerySampler, EXTRA_EDGE_PROB};
pub use rmat::{rmat, RMAT_STANDARD};
pub use standard::{standard_query, with_labels, STANDARD_QUERIES};
pub use stream::{make_stream, StreamAmount, DEFAULT_INSERT_PROB, PAPER_COUNT, PAPER_FRACTION};
