//! csm-planner: query graphs, matching orders, worst-case-optimal-join plans
//! (static and the delta queries of GCSM Eq. 1 / Fig. 2) and the generic
//! executor that runs them over any [`csm_graph::GraphView`].

pub mod count;
pub mod delta;
pub mod exec;
pub mod intersect;
pub mod order;
pub mod plan;
pub mod query;
pub mod quota;
pub mod sampled;
pub mod stats;
pub mod suffix_memo;
pub mod symmetry;

pub use delta::{count_batch, for_each_seed, seed_fits, DeltaCounts};
pub use exec::{Executor, NoVisitor, SharedMemo, Visitor};
pub use order::{strategy_by_name, CostOrder, GcsmOrder, OrderStrategy};
pub use plan::{
    delta_plans, delta_plans_on, labels_plans_skip, static_plan, static_plan_on, DeltaPlan, Level, Plan, Read, Sign,
    Split, MAX_OVERLAPS, MAX_OVERLAP_PLANS, MAX_PLAN_LEVELS,
};
pub use query::{drop_trivial_edge_labels, QVertex, QueryError, QueryGraph};
pub use quota::Quota;
pub use sampled::{estimated_work, SampledOrder};
pub use stats::GraphStats;
pub use suffix_memo::{MemoScope, SharedSuffixMemo};
pub use symmetry::{
    automorphism_count, automorphisms, break_symmetry, exists_automorphism, single_edge_restricted, single_edge_rules,
    SeedRule, MAX_AUTOMORPHISMS,
};
