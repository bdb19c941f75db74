//! csm-sampler: GCSM's access-frequency estimation and cache selection
//! (Wei & Jiang, IPDPS 2024, Sec. IV and V-B).
//!
//! For a batch staged in a [`csm_graph::DynamicGraph`], the delta plans of
//! [`csm_planner`] define an execution tree (Fig. 4a, [`tree`]) whose nodes
//! read neighbour lists. The crate:
//!
//! * counts the reads exactly ([`exact`]): `C_v`, the ground truth;
//! * estimates them by random walks ([`walk`]): the single walk of Sec. IV-A
//!   and the merged binomial execution of Sec. IV-B, both unbiased (Eq. 3);
//! * chooses how many walks to draw ([`budget`]): the paper's fixed rule or
//!   the confidence bound of Eq. (5) with its refinement loop;
//! * selects the lists to cache within a byte budget ([`cache`]): sampled
//!   (GCSM), degree (Naive), k-hop (VSGM), none, or a policy of your own;
//! * packs them into one DCSR allocation ([`dcsr`], Fig. 6);
//! * measures the result ([`metrics`]): coverage, access share, FE fraction;
//! * runs the whole study over a stream ([`study`], used by `csm sample`).
//!
//! Accumulators ([`freq`]) are dense or sparse by size, so memory stays
//! O(|V|). Randomness is seeded (`ChaCha8Rng`) and reproducible.
//!
//! ```
//! use csm_graph::{gen, DynamicGraph, Strictness};
//! use csm_planner::{delta_plans, GcsmOrder, GraphStats, QueryGraph};
//! use csm_sampler::{exact_access_counts, merged_walk, ExecutionTree, Splitting};
//!
//! let pairs = gen::erdos_renyi(200, 1200, 7);
//! let data = gen::graph_from_pairs(200, &pairs, vec![0; 200], None);
//! let (g0, stream) = gen::make_stream(&data, gen::StreamAmount::Count(64), 0.5, 1);
//! let mut g = DynamicGraph::from_data(&g0).unwrap();
//! let q = QueryGraph::from_data(&gen::standard_query("diamond").unwrap()).unwrap();
//! let plans = delta_plans(&q, &GcsmOrder, &GraphStats::of(&g));
//! let delta = g.stage(&stream, "<gen>", Strictness::Strict).unwrap().clone();
//! let tree = ExecutionTree::new(&g, &plans, &delta);
//! let exact = exact_access_counts(&tree).counts;
//! let est = merged_walk(&tree, 10_000, 42, Splitting::Multinomial);
//! let (top, c) = exact.ranked()[0];
//! assert!((est.get(top) - c).abs() < 0.5 * c);
//! ```

pub mod budget;
pub mod cache;
pub mod dcsr;
pub mod exact;
pub mod freq;
pub mod metrics;
pub mod par;
pub mod study;
pub mod tree;
pub mod walk;

pub use budget::{eq5_walks, estimate_with_confidence, misrank_bound, paper_walks, Confidence, Refinement, WalkRule};
pub use cache::{
    CachePolicy, DegreePolicy, KHopPolicy, NoCache, SampledPolicy, SelectError, Selection, SelectionContext,
};
pub use dcsr::{DcsrError, DcsrLayout, DcsrPack, NO_APPENDED};
pub use exact::{exact_access_counts, exact_access_counts_par, AccessCounter, ExactCounts};
pub use freq::{AccessSink, Freq};
pub use metrics::{cache_metrics, coverage, fe_fraction, hit_rate, top_access_share, top_set, CacheMetrics};
pub use study::{
    in_pool, pool_threads, run_batch_study, sequential_exact_match, BatchReport, ExactMatcher, StudyConfig, StudyError,
    StudySummary,
};
pub use tree::{ExecutionTree, Root};
pub use walk::{
    independent_walks, merged_walk, merged_walk_into, merged_walk_par, single_walk, Estimate, MergedWalk, Splitting,
    WalkOptions,
};
