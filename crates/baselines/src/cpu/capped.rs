//! Static counts of the `cpu` engine, whole or capped at a limit (the
//! SubgraphMatching study's and RapidFlow's `-num`), and the race that a
//! capped count runs between two orders.
//!
//! With a limit the search stops at the first `limit` embeddings, so what
//! matters is how soon an order's depth-first search meets them, not the
//! size of its whole tree, which is what the sampled order (`auto`)
//! estimates; and sampling a large query's candidate orders can take
//! longer than the search itself. Neither order wins throughout: on 80
//! random-walk queries of 8-32 vertices (an R-MAT like the `human` graph of
//! that study, 44 labels, and an Erdős–Rényi graph like `yeast`, 71) capped
//! at 10^5, the cost order was the quicker on 23 of the 26 that differ by
//! more than 2×, but 12× slower on one, and `auto` ran past 10 s on one
//! that the cost order finishes in 1.2 s. So a capped count with an order
//! that has a quick variant ([`OrderStrategy::quick`]) races the two: the
//! quick order's plan for a slice of time, then (planned once) the engine's
//! own, then each again with twice the slice, until one finishes (a run cut
//! by its slice is dropped: [`Quota::until`]). Its time is at most about
//! four times the better order's plus one sampling, and most queries end
//! within the first slice, before any sampling.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use csm_graph::{CsrByLabel, CsrGraph, Version};
use csm_planner::{
    automorphisms, break_symmetry, static_plan_on, GraphStats, OrderStrategy, Plan, QueryGraph, Quota,
    MAX_AUTOMORPHISMS,
};

use super::{count_static_parallel, CpuEngine, GROUP_PROBES, GROUP_WORK_PER_ENTRY};

/// The first time slice of a capped count's race ([`CpuEngine::first_slice`]).
pub(super) const FIRST_SLICE: Duration = Duration::from_millis(20);

/// A static plan ready to run: symmetry broken (`factor` embeddings per
/// counted orbit), and whether its run repays grouping the lists by label.
struct StaticRun {
    plan: Plan,
    factor: u64,
    grouped: bool,
}

impl CpuEngine {
    /// The static count, or with a `limit` `min(count, limit)`, stopping
    /// once the threads have seen `limit` embeddings (racing two orders
    /// when the engine's order has a quick variant; see the module docs).
    pub(super) fn count_capped(&self, g: &CsrGraph, q: &QueryGraph, limit: Option<u64>) -> u64 {
        let stats = GraphStats::of(g);
        let groups = OnceLock::new();
        let quick = limit.and(self.order.quick());
        let Some(quick) = quick else {
            let run = self.static_run(g, q, &stats, self.order.as_ref());
            return self.run_static(g, &run, limit, None, &groups).expect("no deadline");
        };
        let first = self.static_run(g, q, &stats, quick);
        let mut own: Option<StaticRun> = None;
        let mut slice = self.first_slice;
        loop {
            if let Some(n) = self.run_static(g, &first, limit, Some(slice), &groups) {
                return n;
            }
            let own = own.get_or_insert_with(|| self.static_run(g, q, &stats, self.order.as_ref()));
            if own.plan == first.plan {
                return self.run_static(g, own, limit, None, &groups).expect("no deadline");
            }
            if let Some(n) = self.run_static(g, own, limit, Some(slice), &groups) {
                return n;
            }
            slice = slice * 2 + Duration::from_micros(1);
        }
    }

    /// The plan of `order` for a static count of `q` on `g`.
    fn static_run(&self, g: &CsrGraph, q: &QueryGraph, stats: &GraphStats, order: &dyn OrderStrategy) -> StaticRun {
        let plan = static_plan_on(q, order, stats, Version::New, g);
        // count one embedding per automorphism orbit, then scale
        let auts = self.symmetry.then(|| automorphisms(q, MAX_AUTOMORPHISMS)).flatten();
        let (plan, factor) = match auts {
            Some(auts) => break_symmetry(&plan, &auts, 0),
            None => (plan, 1),
        };
        // read each level's label group instead of filtering whole lists,
        // when the run is long enough to repay grouping every list (the
        // estimate ignores symmetry breaking, which cuts the work about
        // `factor`-fold, and a limit, which may cut it further)
        let grouped = plan.check_labels && self.by_label && {
            let work = csm_planner::estimated_work(g, q, &plan.order, GROUP_PROBES, 1) / factor as f64;
            work >= GROUP_WORK_PER_ENTRY * g.neighbor_array().len() as f64
        };
        StaticRun { plan, factor, grouped }
    }

    /// `min(count, limit)` of one run, or `None` when `slice` ran out first
    /// (the partial count is dropped). `groups` holds the graph's label
    /// groups once a run has built them.
    fn run_static<'g>(
        &self,
        g: &'g CsrGraph,
        run: &StaticRun,
        limit: Option<u64>,
        slice: Option<Duration>,
        groups: &OnceLock<CsrByLabel<'g>>,
    ) -> Option<u64> {
        let grouped = run
            .grouped
            .then(|| groups.get_or_init(|| self.pool.install(|| CsrByLabel::new(g))));
        // the executors count orbits: `limit` embeddings are ⌈limit / factor⌉ of them
        let quota = limit.map(|l| {
            let quota = Quota::new(l.div_ceil(run.factor));
            Arc::new(match slice {
                Some(s) => quota.until(Instant::now() + s),
                None => quota,
            })
        });
        let orbits = match grouped {
            Some(grouped) => self
                .pool
                .install(|| count_static_parallel(grouped, &run.plan, quota.as_ref())),
            None => self
                .pool
                .install(|| count_static_parallel(g, &run.plan, quota.as_ref())),
        };
        if quota.as_ref().is_some_and(|q| q.expired() && !q.reached()) {
            return None;
        }
        let count = run.factor.saturating_mul(orbits);
        Some(limit.map_or(count, |l| count.min(l)))
    }
}
