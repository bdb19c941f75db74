//! Plans and seeds in the flat form `kernels/match.cu` reads.
//!
//! A [`csm_planner::Plan`] becomes [`Shape::plan_words`] `u32` words (layout in the
//! kernel source): a header (depth, start depth, sign, label checks) and one
//! fixed-size block per level (vertex label, reads as `pos | version << 8`
//! with their edge labels, conflict positions, and the level's label share
//! for the deferral, [`crate::shares`]). A seed is four words
//! `(plan, x, y, weight)`: the batch edge orientation `(x, y)` bound to the
//! plan's seed edge, and the multiplicity it stands for (single-edge
//! symmetry, [`csm_planner::single_edge_rules`]; 1 otherwise).

use csm_graph::{BatchDelta, GraphView, Version, VertexId};
use csm_planner::{
    delta_plans, single_edge_rules, DeltaPlan, Executor, GraphStats, OrderStrategy, Plan, QueryGraph, SeedRule, Sign,
};

use crate::error::{GpuError, GpuResult};
use crate::shares::{encode_shares_with, LabelShares};
use rayon::prelude::*;

/// Largest plan depth (query size) the kernel supports ([`Shape::HUGE`]).
pub const MAXQ: usize = 32;
/// Largest number of reads per level ([`Shape::HUGE`]).
pub const MAXR: usize = 15;
/// Words of the plan header.
pub const PLAN_HEADER: usize = 4;

/// The kernel build a plan is encoded for. The kernel's per-warp state in
/// shared memory is sized for `maxq` query vertices of `maxr` reads (bound
/// neighbours) each, so queries of up to 8 vertices run on the `NARROW`
/// build (the one every figure before the twenty-fourth session was
/// measured with), queries of 9-16 on the `WIDE` one (`-DMAXQ=16`: 25 KB of
/// shared memory a block instead of 13, fewer blocks per SM), and larger
/// queries, or levels of 8-15 reads, on the `HUGE` one (`-DMAXQ=32
/// -DMAXR=15 -DWARPS=1`: one warp a block, about 27 KB, twenty-sixth
/// session). A level block holds the label, read count, conflict count and
/// label share, then `maxr` reads, their edge labels, up to `maxq`
/// conflict positions and the memo key length (match v17), rounded up to
/// 4 words. The plan's depth word
/// carries the build's tag in its upper half ([`Shape::of_words`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub maxq: usize,
    pub maxr: usize,
    /// Warps per block.
    pub warps: usize,
    /// Index in [`Shape::ALL`].
    pub tag: u32,
}

impl Shape {
    pub const NARROW: Shape = Shape {
        maxq: 8,
        maxr: 7,
        warps: 4,
        tag: 0,
    };
    pub const WIDE: Shape = Shape {
        maxq: 16,
        maxr: 7,
        warps: 4,
        tag: 1,
    };
    pub const HUGE: Shape = Shape {
        maxq: MAXQ,
        maxr: MAXR,
        warps: 1,
        tag: 2,
    };
    /// Every build, smallest first.
    pub const ALL: [Shape; 3] = [Shape::NARROW, Shape::WIDE, Shape::HUGE];

    /// The smallest build that holds `plans` (their depth, reads and
    /// conflicts per level); `None` when none does.
    pub fn for_plans<'a>(plans: impl IntoIterator<Item = &'a Plan>) -> Option<Shape> {
        let (mut depth, mut reads, mut confs) = (0, 0, 0);
        for p in plans {
            depth = depth.max(p.depth());
            for l in &p.levels {
                reads = reads.max(l.reads.len());
                confs = confs.max(l.conflicts.len());
            }
        }
        Shape::ALL
            .into_iter()
            .find(|s| depth <= s.maxq && reads <= s.maxr && confs <= s.maxq)
    }

    /// Why [`Shape::for_plans`] found no build for a query (a message).
    pub fn limits() -> String {
        format!("the GPU kernel supports queries of at most {MAXQ} vertices, each with at most {MAXR} neighbours before it in the matching order")
    }

    /// The build encoded plan words are for (from the tag in the first
    /// plan's depth word).
    pub fn of_words(words: &[u32]) -> Option<Shape> {
        Shape::ALL.get((*words.first()? >> 16) as usize).copied()
    }

    /// Offset of the read edge labels in a level block.
    pub const fn l_elabels(self) -> usize {
        L_READS + self.maxr
    }

    /// Offset of the conflict positions in a level block.
    pub const fn l_confs(self) -> usize {
        L_READS + 2 * self.maxr
    }

    /// Offset of the memo key length in a level block (match v17): the
    /// word after the conflicts, spare in every build (the block is
    /// rounded up to 4 words).
    pub const fn l_memo(self) -> usize {
        self.l_confs() + self.maxq
    }

    /// Words per level block: through the memo word, rounded up to 4.
    pub const fn level_words(self) -> usize {
        (self.l_memo() + 1 + 3) & !3
    }

    /// Words per encoded plan.
    pub const fn plan_words(self) -> usize {
        PLAN_HEADER + self.maxq * self.level_words()
    }

    /// Threads per block.
    pub const fn block_threads(self) -> u32 {
        (self.warps * 32) as u32
    }

    /// The words of level `d` in the plan `words`.
    pub fn level(self, words: &[u32], d: usize) -> &[u32] {
        let at = PLAN_HEADER + d * self.level_words();
        &words[at..at + self.level_words()]
    }

    /// The source lines that select this build ahead of `kernels/match.cu`
    /// (none for the narrow build, whose values the source defaults to).
    pub fn defines(self) -> String {
        let mut d = String::new();
        for (name, value, default) in [
            ("MAXQ", self.maxq, Shape::NARROW.maxq),
            ("MAXR", self.maxr, Shape::NARROW.maxr),
            ("WARPS", self.warps, Shape::NARROW.warps),
        ] {
            if value != default {
                d += &format!("#define {name} {value}\n");
            }
        }
        d
    }
}

/// Words per level block of the narrow build ([`Shape::level_words`]).
pub const LEVEL_WORDS: usize = Shape::NARROW.level_words();
/// Words per encoded plan of the narrow build ([`Shape::plan_words`]).
pub const PLAN_WORDS: usize = Shape::NARROW.plan_words();
/// Offset of the read descriptors in a level block.
pub const L_READS: usize = 4;
/// "No value": no edge label required, no appended part (DCSR rowptr).
pub const NONE: u32 = u32::MAX;
/// Most bindings in a last-level memo key (match v17, `MEMO_KEY` of the
/// kernel): a last level of up to this many reads is memoised.
pub const MEMO_KEY: usize = 3;

/// Kernel code of a list version.
pub fn version_code(v: Version) -> u32 {
    match v {
        Version::Old => 0,
        Version::Common => 1,
        Version::New => 2,
    }
}

/// Appends the encoding of `plan` for the build `shape` (starting at depth
/// `start`, counting into the `sign` counter) to `out`.
pub fn encode_plan(plan: &Plan, shape: Shape, start: usize, sign: Sign, out: &mut Vec<u32>) -> GpuResult<()> {
    let depth = plan.depth();
    if depth > shape.maxq {
        return Err(GpuError::InvalidInput(format!(
            "query of {depth} vertices: this kernel build takes at most {}",
            shape.maxq
        )));
    }
    let (plan_words, level_words) = (shape.plan_words(), shape.level_words());
    let base = out.len();
    out.resize(base + plan_words, 0);
    let w = &mut out[base..];
    w[0] = depth as u32 | shape.tag << 16;
    w[1] = start as u32;
    w[2] = u32::from(sign == Sign::Negative);
    w[3] = u32::from(plan.check_labels);
    for (d, level) in plan.levels.iter().enumerate() {
        let l = &mut w[PLAN_HEADER + d * level_words..PLAN_HEADER + (d + 1) * level_words];
        if level.reads.len() > shape.maxr || level.conflicts.len() > shape.maxq {
            return Err(GpuError::InvalidInput(format!(
                "plan level {d} has {} reads and {} conflicts (kernel build limits {}, {})",
                level.reads.len(),
                level.conflicts.len(),
                shape.maxr,
                shape.maxq
            )));
        }
        if d >= start && level.reads.is_empty() {
            return Err(GpuError::InvalidInput(format!(
                "plan level {d} reads no list (only a static plan's first level may)"
            )));
        }
        l[0] = level.label;
        l[1] = level.reads.len() as u32;
        l[2] = level.conflicts.len() as u32;
        for (k, r) in level.reads.iter().enumerate() {
            l[L_READS + k] = u32::from(r.pos) | version_code(r.version) << 8;
            l[shape.l_elabels() + k] = r.elabel.unwrap_or(NONE);
        }
        for (k, &c) in level.conflicts.iter().enumerate() {
            l[shape.l_confs() + k] = u32::from(c);
        }
        // Match v17: the last level's count (conflicts aside) depends only
        // on its read bindings, its key in the last-level memo.
        if d + 1 == depth && d > 0 && (1..=MEMO_KEY).contains(&level.reads.len()) {
            l[shape.l_memo()] = level.reads.len() as u32;
        }
    }
    Ok(())
}

/// One seed of a batch: the batch edge orientation `(x, y)` bound to plan
/// `plan`'s seed edge, standing for `weight` embeddings-per-match
/// (single-edge symmetry; 1 otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed {
    pub plan: u32,
    pub x: VertexId,
    pub y: VertexId,
    pub weight: u32,
}

impl Seed {
    pub fn new(plan: u32, x: VertexId, y: VertexId, weight: u32) -> Seed {
        Seed { plan, x, y, weight }
    }
}

/// Longest prefix a kernel task can carry.
pub const MAX_PREFIX: usize = 4;

/// One unit of kernel work: the subtree below the bound prefix
/// `prefix[..start]` of plan `plan`, restricted to the slice `[lo, hi)` of
/// level `start`'s iterated list (twelve kernel words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub plan: u32,
    pub weight: u32,
    pub lo: u32,
    pub hi: u32,
    pub start: u32,
    pub prefix: [VertexId; MAX_PREFIX],
}

impl From<Seed> for Task {
    fn from(s: Seed) -> Task {
        Task {
            plan: s.plan,
            weight: s.weight,
            lo: 0,
            hi: NONE,
            start: 2,
            prefix: [s.x, s.y, 0, 0],
        }
    }
}

/// How [`QueryPlans::tasks`] cuts seeds into kernel tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskOptions {
    /// A task whose start level iterates more than this many elements is
    /// expanded on the host into one task per candidate of that level
    /// (while its prefix is shorter than `max_prefix` and the level is not
    /// the last).
    pub expand_above: u32,
    /// Longest prefix produced by expansion (at most [`MAX_PREFIX`]).
    pub max_prefix: usize,
    /// Slices of at most this many start-level elements (0: no slicing).
    pub max_task: u32,
    /// Expansion stops once this many tasks exist.
    pub max_tasks: usize,
    /// Load balance for small batches (match v4; 0: off,
    /// [`TaskOptions::AUTO`]: twice the kernel's warps, resolved by the
    /// engine). When the seeds are few against this many tasks (`seeds *
    /// deep_factor < target_tasks`), expansion starts at a quarter of
    /// `expand_above` and goes one level deeper (up to [`MAX_PREFIX`]), and
    /// while fewer tasks than this exist, start levels are cut into slices
    /// of `total domain / target_tasks` elements (at least `min_task`, at
    /// most `max_task`), so that a few heavy seeds do not leave most warps
    /// idle.
    pub target_tasks: usize,
    /// See `target_tasks`.
    pub deep_factor: usize,
    /// Smallest slice the balance cuts.
    pub min_task: u32,
    /// The balance runs only when the tasks' domains add up to at least
    /// this many elements (match v5; v4: 0): a batch whose start levels
    /// are short has little work to spread, and the second pass would cost
    /// the host more than the kernel saves.
    pub min_balance_work: u64,
    /// Whether the balance's pass may expand into the plan's last level
    /// (v4: yes). A last-level task is one intersection, so expanding into
    /// it moves the kernel's cheapest work to the host, one task per
    /// candidate.
    pub balance_into_last: bool,
    /// Whether batches that the balance leaves alone (many seeds) have
    /// their heavy seeds expanded on the host (match v6: no; v5: yes). Off,
    /// such a batch's split is one domain lookup per seed, a sort and the
    /// slicing, with slices of `total domain / target_tasks` elements (at
    /// least `slice_min`, at most `max_task`) so that the first launch has
    /// about `target_tasks` tasks; heavy nodes below the start level are
    /// left to the kernel's deferral ([`crate::MatcherConfig::defer_min`]).
    pub expand_many: bool,
    /// The same for batches the balance handles (few seeds; match v6 and
    /// v5: yes, with the balance's deeper second pass).
    pub expand_few: bool,
    /// Smallest slice of that slicing (match v6: 32; the balance's pass
    /// keeps `min_task`).
    pub slice_min: u32,
}

impl TaskOptions {
    /// [`TaskOptions::target_tasks`]: twice the kernel's warps.
    pub const AUTO: usize = usize::MAX;

    /// Match v4's defaults (the balance keyed on the seed count alone).
    pub fn v4() -> TaskOptions {
        TaskOptions {
            target_tasks: TaskOptions::AUTO,
            ..TaskOptions::default()
        }
    }

    /// Match v5's defaults: [`TaskOptions::v4`], but the balance skips
    /// batches with little start-level work and never expands into the
    /// last level.
    pub fn v5() -> TaskOptions {
        TaskOptions {
            min_balance_work: 0,
            balance_into_last: false,
            ..TaskOptions::v4()
        }
    }

    /// Match v6's defaults: [`TaskOptions::v5`] for batches of few seeds;
    /// batches of many seeds are not expanded on the host, only sliced
    /// (see [`TaskOptions::expand_many`]).
    pub fn v6() -> TaskOptions {
        TaskOptions {
            expand_many: false,
            ..TaskOptions::v5()
        }
    }
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            expand_above: 1024,
            max_prefix: 3,
            max_task: 256,
            max_tasks: 1 << 21,
            target_tasks: 0,
            deep_factor: 64,
            min_task: 32,
            min_balance_work: 0,
            balance_into_last: true,
            expand_many: true,
            expand_few: true,
            slice_min: 32,
        }
    }
}

/// Match v9: host expansion only for batches whose kernel is heavy. The
/// small-batch balance ([`TaskOptions::expand_few`]) expands a few-seed
/// batch's heavy seeds on the host (0.1-0.4 ms on the bench's 64-edge
/// batches) so that a heavy kernel (the 5-cycle's 4-8 ms) is spread over
/// every warp; for a light kernel (0.05-0.5 ms) that split costs more than
/// it saves. One policy per query: it predicts the batch's kernel time from
/// the query's earlier batches (kernel time per seed, the lower of a moving
/// average and the last batch, times the seeds) and turns the expansion
/// off below [`SplitPolicy::light_below`]. With no prediction yet (a
/// query's first batch) the options are left as they are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitPolicy {
    /// Predicted kernel seconds below which a batch is only sliced (0: off).
    pub light_below: f64,
    /// Kernel seconds per seed.
    per_seed: UnitTime,
}

/// The size class of a batch of `updates` updates: the power of two.
fn size_class(updates: usize) -> u32 {
    usize::BITS - updates.max(1).leading_zeros()
}

/// What a policy learns per size class of batch (the power of two of its
/// update count): [`crate::resident::ResidentUse`] and
/// [`crate::route::LightRoute`] predict a batch from earlier ones of its
/// class.
#[derive(Clone, Debug, PartialEq)]
pub struct BySizeClass<T>(Vec<(u32, T)>);

impl<T> Default for BySizeClass<T> {
    fn default() -> Self {
        BySizeClass(Vec::new())
    }
}

impl<T: Default> BySizeClass<T> {
    /// What is known of `updates`' class.
    pub fn get(&self, updates: usize) -> Option<&T> {
        let c = size_class(updates);
        self.0.iter().find(|e| e.0 == c).map(|e| &e.1)
    }

    /// `updates`' class, made empty when first seen.
    pub fn entry(&mut self, updates: usize) -> &mut T {
        let c = size_class(updates);
        let i = match self.0.iter().position(|e| e.0 == c) {
            Some(i) => i,
            None => {
                self.0.push((c, T::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
}

/// Kernel seconds per unit of a batch (a seed, an update), learnt from
/// earlier batches (match v9): a moving average that gives the newest batch
/// half the weight, and the last batch. A prediction takes the lower of the
/// two, so one heavy batch does not make the next light ones look heavy.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UnitTime(Option<(f64, f64)>);

impl UnitTime {
    /// The predicted seconds of `units` units (None before the first
    /// observation).
    pub fn predict(&self, units: usize) -> Option<f64> {
        self.0.map(|(avg, last)| avg.min(last) * units as f64)
    }

    /// Records `seconds` for `units` units (ignored for no units or a
    /// time that is not finite).
    pub fn observe(&mut self, units: usize, seconds: f64) {
        if units == 0 || !seconds.is_finite() {
            return;
        }
        let x = seconds / units as f64;
        self.0 = Some(match self.0 {
            None => (x, x),
            Some((avg, _)) => (0.5 * avg + 0.5 * x, x),
        });
    }
}

impl Default for SplitPolicy {
    fn default() -> Self {
        SplitPolicy::new(SplitPolicy::LIGHT_BELOW)
    }
}

impl SplitPolicy {
    /// Default of [`SplitPolicy::light_below`]: 1 ms.
    pub const LIGHT_BELOW: f64 = 1e-3;

    /// A policy with no history.
    pub fn new(light_below: f64) -> SplitPolicy {
        SplitPolicy {
            light_below,
            per_seed: UnitTime::default(),
        }
    }

    /// The predicted kernel time of a batch of `seeds` seeds (None before
    /// the first observation).
    pub fn predicted(&self, seeds: usize) -> Option<f64> {
        self.per_seed.predict(seeds)
    }

    /// `base`, without the small-batch expansion when the batch is
    /// predicted light.
    pub fn options(&self, base: TaskOptions, seeds: usize) -> TaskOptions {
        match self.predicted(seeds) {
            Some(t) if t < self.light_below => TaskOptions {
                expand_few: false,
                ..base
            },
            _ => base,
        }
    }

    /// Records a batch's kernel time.
    pub fn observe(&mut self, seeds: usize, kernel_seconds: f64) {
        self.per_seed.observe(seeds, kernel_seconds);
    }
}

/// A registered query: its delta plans in kernel form and the single-edge
/// symmetry rules (as the CPU engine uses them).
#[derive(Clone, Debug)]
pub struct QueryPlans {
    pub query: QueryGraph,
    pub plans: Vec<DeltaPlan>,
    /// `plans.len() * shape.plan_words()` words.
    pub encoded: Vec<u32>,
    /// The kernel build the plans are encoded for.
    pub shape: Shape,
    pub positive_rules: Option<Vec<SeedRule>>,
    pub negative_rules: Option<Vec<SeedRule>>,
    /// Largest query distance between a seed edge and a vertex whose list a
    /// delta plan reads: the hop count VSGM must cache.
    pub read_hops: u32,
}

impl QueryPlans {
    /// Plans of `q` for the graph described by `stats`.
    pub fn new(q: &QueryGraph, order: &dyn OrderStrategy, stats: &GraphStats, symmetry: bool) -> GpuResult<QueryPlans> {
        if q.num_vertices() > MAXQ {
            return Err(GpuError::InvalidInput(format!(
                "query of {} vertices: {}",
                q.num_vertices(),
                Shape::limits()
            )));
        }
        let plans = delta_plans(q, order, stats);
        let Some(shape) = Shape::for_plans(plans.iter().map(|p| &p.plan)) else {
            return Err(GpuError::InvalidInput(format!(
                "query of {} vertices: {}",
                q.num_vertices(),
                Shape::limits()
            )));
        };
        let mut encoded = Vec::with_capacity(plans.len() * shape.plan_words());
        for p in &plans {
            encode_plan(&p.plan, shape, 2, p.sign, &mut encoded)?;
        }
        let (positive_rules, negative_rules) = if symmetry {
            (
                single_edge_rules(q, &plans, Sign::Positive),
                single_edge_rules(q, &plans, Sign::Negative),
            )
        } else {
            (None, None)
        };
        let read_hops = read_hops(q, &plans);
        Ok(QueryPlans {
            query: q.clone(),
            plans,
            encoded,
            shape,
            positive_rules,
            negative_rules,
            read_hops,
        })
    }

    /// Writes each level's label share of the graph into the encoded
    /// plans (match v11; [`crate::shares`]): the kernel then defers heavy
    /// nodes by the candidates their lists hold rather than by length.
    pub fn set_label_shares(&mut self, shares: &LabelShares) {
        self.set_label_shares_with(shares, false);
    }

    /// [`QueryPlans::set_label_shares`], with the last level's share
    /// written too when `last_level` ([`encode_shares_with`]; match v11's
    /// first cut, for comparisons).
    pub fn set_label_shares_with(&mut self, shares: &LabelShares, last_level: bool) {
        for (p, words) in self.plans.iter().zip(self.encoded.chunks_mut(self.shape.plan_words())) {
            encode_shares_with(&p.plan, shares, words, last_level);
        }
    }

    /// The seeds of the batch `delta` staged in `g` (same seeds, order and
    /// weights as the CPU engine's).
    pub fn seeds<G: GraphView + ?Sized>(&self, g: &G, delta: &BatchDelta) -> Vec<Seed> {
        let single = match (delta.inserted.as_slice(), delta.deleted.as_slice()) {
            ([e], []) => self.positive_rules.as_ref().map(|r| (e, r)),
            ([], [e]) => self.negative_rules.as_ref().map(|r| (e, r)),
            _ => None,
        };
        let labels = g.labels();
        if let Some((e, rules)) = single {
            let mut out = Vec::new();
            for r in rules {
                let p = &self.plans[r.plan];
                let (x, y) = if r.forward { (e.u, e.v) } else { (e.v, e.u) };
                let (la, lb) = (p.plan.levels[0].label, p.plan.levels[1].label);
                if labels[x as usize] == la && labels[y as usize] == lb && p.seed_elabel.map_or(true, |l| l == e.label)
                {
                    let w = u32::try_from(r.weight).unwrap_or(u32::MAX);
                    out.push(Seed::new(r.plan as u32, x, y, w));
                }
            }
            return out;
        }
        crate::batch_seeds::collect(&self.plans, labels, &delta.inserted, &delta.deleted)
    }

    /// Size of the list the kernel iterates at level `task.start` (the
    /// smallest domain among the level's reads).
    pub fn domain<G: GraphView + ?Sized>(&self, g: &G, task: &Task) -> u32 {
        let p = &self.plans[task.plan as usize].plan;
        let Some(level) = p.levels.get(task.start as usize) else {
            return 0;
        };
        level
            .reads
            .iter()
            .map(|r| read_len(g, task.prefix[r.pos as usize], r.version))
            .min()
            .unwrap_or(0)
    }

    /// Whether `rule` lets the task `t` (whose start level iterates `dom`
    /// elements) be replaced by its children.
    fn expandable(&self, t: &Task, dom: u32, rule: &ExpandRule) -> bool {
        let depth = self.plans[t.plan as usize].plan.depth();
        let start = t.start as usize;
        let below = if rule.into_last { start + 1 } else { start + 2 };
        dom > rule.expand_above && below < depth && start < rule.max_prefix
    }

    /// The children of `t`: one task per candidate of its start level
    /// (computed by the planner's executor, with the kernel's filters), each
    /// with its own domain (computed here, once: later passes reuse it; the
    /// reads of the parent's vertices are looked up once per parent, and
    /// many children's lookups run in parallel).
    fn children<G: GraphView + ?Sized>(
        &self,
        g: &G,
        ex: &mut Executor,
        buf: &mut Vec<VertexId>,
        t: &Task,
    ) -> Vec<(u32, Task)> {
        let p = &self.plans[t.plan as usize].plan;
        let d = t.start as usize;
        ex.candidates(g, p, &t.prefix[..d], buf);
        let dom = ChildDomain::new(g, p, t);
        let child = |&c: &VertexId| {
            let mut n = *t;
            n.prefix[d] = c;
            n.start += 1;
            (dom.of(g, c), n)
        };
        if buf.len() < PAR_MIN_LOOKUPS {
            buf.iter().map(child).collect()
        } else {
            buf.par_iter().map(child).collect()
        }
    }

    /// The children of every task of `expand` (on rayon's pool only when
    /// there are enough of them to pay for the threads' wake-up).
    fn expand_all<G: GraphView + ?Sized>(&self, g: &G, expand: &[Task]) -> Vec<(u32, Task)> {
        if expand.len() < PAR_MIN_EXPAND {
            let (mut ex, mut buf) = (Executor::new(), Vec::new());
            return expand
                .iter()
                .flat_map(|t| self.children(g, &mut ex, &mut buf, t))
                .collect();
        }
        expand
            .par_iter()
            .map_init(
                || (Executor::new(), Vec::new()),
                |(ex, buf), t| self.children(g, ex, buf, t),
            )
            .flatten()
            .collect()
    }

    /// `(domain, task)` for each of `tasks` (in parallel for long lists).
    fn with_domains<G: GraphView + ?Sized>(&self, g: &G, tasks: &[Task]) -> Vec<(u32, Task)> {
        if tasks.len() < PAR_MIN_LOOKUPS {
            return tasks.iter().map(|t| (self.domain(g, t), *t)).collect();
        }
        tasks.par_iter().map(|t| (self.domain(g, t), *t)).collect()
    }

    /// One expansion pass over `frontier` (tasks with their domains): tasks
    /// that `rule` lets expand are replaced by their children, level by
    /// level, while fewer than `cap` tasks exist. With `bounded`, tasks are
    /// expanded heaviest first while the finished tasks plus the expanded
    /// tasks' domains (a bound on their children) stay within `cap`.
    /// Domains travel with the tasks, so each is looked up once.
    fn expand<G: GraphView + ?Sized>(
        &self,
        g: &G,
        mut frontier: Vec<(u32, Task)>,
        rule: &ExpandRule,
        cap: usize,
        bounded: bool,
    ) -> Vec<(u32, Task)> {
        let mut done: Vec<(u32, Task)> = Vec::with_capacity(frontier.len());
        while !frontier.is_empty() {
            if bounded {
                sort_heaviest_first(&mut frontier);
            }
            let mut expand = Vec::new();
            let mut children = 0usize;
            for (dom, t) in frontier.drain(..) {
                let room = if bounded {
                    done.len() + children + dom as usize <= cap
                } else {
                    done.len() + expand.len() < cap
                };
                if room && self.expandable(&t, dom, rule) {
                    expand.push(t);
                    children += dom as usize;
                } else {
                    done.push((dom, t));
                }
            }
            frontier = self.expand_all(g, &expand);
            if done.len() + frontier.len() >= cap {
                done.append(&mut frontier);
            }
        }
        done
    }

    /// The kernel's tasks for `seeds` (see [`TaskOptions`]): heavy seeds are
    /// expanded on the host one level at a time (candidates computed by the
    /// planner's executor, with the kernel's filters), long start levels are
    /// sliced, and the result is ordered heaviest first. With the balance on
    /// and few seeds, a second, bounded pass expands the heaviest tasks
    /// further and the slices get finer.
    pub fn tasks<G: GraphView + ?Sized>(&self, g: &G, seeds: &[Seed], opts: &TaskOptions) -> Vec<Task> {
        let target = if opts.target_tasks == TaskOptions::AUTO {
            0
        } else {
            opts.target_tasks
        };
        let few_seeds = target > 0 && seeds.len().saturating_mul(opts.deep_factor.max(1)) < target;
        let roots: Vec<Task> = seeds.iter().map(|&s| Task::from(s)).collect();
        let max_prefix = opts.max_prefix.clamp(2, MAX_PREFIX);
        let first = ExpandRule {
            expand_above: opts.expand_above,
            max_prefix,
            into_last: true,
        };
        let total = |done: &[(u32, Task)]| done.iter().map(|&(d, _)| u64::from(d)).sum::<u64>();
        if !(if few_seeds { opts.expand_few } else { opts.expand_many }) {
            // Match v6: only slicing on the host; the kernel defers heavy
            // nodes below the start level.
            let mut done = self.with_domains(g, &roots);
            sort_heaviest_first(&mut done);
            let max_task = if target > 0 && opts.max_task > 0 {
                u32::try_from(total(&done) / target as u64)
                    .unwrap_or(u32::MAX)
                    .clamp(opts.slice_min.clamp(1, opts.max_task), opts.max_task)
            } else {
                opts.max_task
            };
            return slice(done, max_task);
        }
        let mut done = self.expand(g, self.with_domains(g, &roots), &first, opts.max_tasks, false);
        let deep = few_seeds && done.len() < target && total(&done) >= opts.min_balance_work;
        if deep {
            // The balance's pass is bounded by the children of what it
            // expands: a wide level (5-cycle) must not turn into millions of
            // tasks and as many host candidate computations.
            let cap = opts.max_tasks.min(done.len() + target.saturating_mul(8));
            let deeper = ExpandRule {
                expand_above: opts.expand_above / 4,
                max_prefix: (max_prefix + 1).min(MAX_PREFIX),
                into_last: opts.balance_into_last,
            };
            done = self.expand(g, done, &deeper, cap, true);
        }
        sort_heaviest_first(&mut done);
        let max_task = if deep && opts.max_task > 0 && done.len() < target {
            u32::try_from(total(&done) / target as u64)
                .unwrap_or(u32::MAX)
                .clamp(opts.min_task.clamp(1, opts.max_task), opts.max_task)
        } else {
            opts.max_task
        };
        slice(done, max_task)
    }
}

/// Below this many expanded tasks, children are computed on the calling
/// thread (rayon's wake-up costs more than a few candidate sets).
const PAR_MIN_EXPAND: usize = 8;
/// Below this many domain lookups, they run on the calling thread.
const PAR_MIN_LOOKUPS: usize = 2048;

/// [`QueryPlans::domain`] of the children of one task: the lists of the
/// parent's prefix are looked up once, only the reads of the new vertex
/// per child.
struct ChildDomain {
    /// Smallest domain among the reads of earlier positions (u32::MAX: none).
    fixed: u32,
    /// Versions of the reads of the child's own vertex.
    own: Vec<Version>,
    /// The child level exists (else every domain is 0).
    exists: bool,
}

impl ChildDomain {
    fn new<G: GraphView + ?Sized>(g: &G, p: &Plan, t: &Task) -> ChildDomain {
        let d = t.start as usize;
        let Some(level) = p.levels.get(d + 1) else {
            return ChildDomain {
                fixed: 0,
                own: Vec::new(),
                exists: false,
            };
        };
        let mut fixed = u32::MAX;
        let mut own = Vec::new();
        for r in &level.reads {
            if r.pos as usize == d {
                own.push(r.version);
            } else {
                fixed = fixed.min(read_len(g, t.prefix[r.pos as usize], r.version));
            }
        }
        ChildDomain {
            fixed,
            own,
            exists: !level.reads.is_empty(),
        }
    }

    fn of<G: GraphView + ?Sized>(&self, g: &G, c: VertexId) -> u32 {
        if !self.exists {
            return 0;
        }
        if self.own.is_empty() {
            return self.fixed;
        }
        let nb = g.nbrs(c, Version::New);
        self.own.iter().fold(self.fixed, |m, &v| m.min(domain_len(&nb, v)))
    }
}

/// Length of the part of `nb` that a read of version `v` iterates (the
/// kernel's domain: the old part, plus the appended part for New).
fn domain_len(nb: &csm_graph::Nbrs<'_>, v: Version) -> u32 {
    let n = match v {
        Version::New => nb.base.len() + nb.delta.len(),
        _ => nb.base.len(),
    };
    n as u32
}

/// [`domain_len`] of `x`'s list.
fn read_len<G: GraphView + ?Sized>(g: &G, x: VertexId, v: Version) -> u32 {
    domain_len(&g.nbrs(x, Version::New), v)
}

/// Which tasks one expansion pass may replace by their children.
struct ExpandRule {
    /// Only tasks whose start level iterates more elements.
    expand_above: u32,
    /// Longest prefix the children may have.
    max_prefix: usize,
    /// Whether children may start at the plan's last level (which the
    /// kernel counts in one pass: such a child is one intersection).
    into_last: bool,
}

/// Sorts by domain, largest first (in parallel only for long lists; the
/// order of equal domains is unspecified but deterministic).
fn sort_heaviest_first(tasks: &mut [(u32, Task)]) {
    if tasks.len() < PAR_MIN_LOOKUPS {
        tasks.sort_unstable_by_key(|&(d, _)| std::cmp::Reverse(d));
    } else {
        tasks.par_sort_unstable_by_key(|&(d, _)| std::cmp::Reverse(d));
    }
}

/// Cuts every task whose start level iterates more than `max_task` elements
/// into slices `[lo, hi)` of at most `max_task` (0: no slicing).
fn slice(done: Vec<(u32, Task)>, max_task: u32) -> Vec<Task> {
    let mut out = Vec::with_capacity(done.len());
    for (dom, t) in done {
        if max_task == 0 || dom <= max_task {
            out.push(t);
            continue;
        }
        let mut lo = 0;
        while lo < dom {
            let hi = lo.saturating_add(max_task).min(dom);
            out.push(Task {
                lo,
                hi: if hi == dom { NONE } else { hi },
                ..t
            });
            lo = hi;
        }
    }
    out
}

/// Kernel words per task.
pub const TASK_WORDS: usize = 12;

/// Writes the kernel words of `tasks` into `out` (`tasks.len() *
/// TASK_WORDS` words): plan, weight, lo, hi, start, prefix, 3 spare words.
pub fn write_task_words(tasks: &[Task], out: &mut [u32]) {
    for (t, w) in tasks.iter().zip(out.chunks_exact_mut(TASK_WORDS)) {
        let p = t.prefix;
        w.copy_from_slice(&[t.plan, t.weight, t.lo, t.hi, t.start, p[0], p[1], p[2], p[3], 0, 0, 0]);
    }
}

/// Largest query distance from a delta plan's seed edge to a position its
/// levels read (the k of VSGM's k-hop cache).
fn read_hops(q: &QueryGraph, plans: &[DeltaPlan]) -> u32 {
    let n = q.num_vertices();
    let mut best = 0;
    for p in plans {
        let order = &p.plan.order;
        // BFS from both seed endpoints.
        let mut dist = vec![u32::MAX; n];
        let mut frontier = vec![order[0], order[1]];
        dist[order[0]] = 0;
        dist[order[1]] = 0;
        let mut d = 0;
        while !frontier.is_empty() {
            d += 1;
            let mut next = Vec::new();
            for &u in &frontier {
                for (w, dw) in dist.iter_mut().enumerate() {
                    if q.has_edge(u, w) && *dw == u32::MAX {
                        *dw = d;
                        next.push(w);
                    }
                }
            }
            frontier = next;
        }
        for level in &p.plan.levels[2..] {
            for r in &level.reads {
                best = best.max(dist[order[r.pos as usize]]);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use csm_planner::{static_plan, GcsmOrder};

    fn q(name: &str) -> QueryGraph {
        QueryGraph::from_data(&csm_graph::gen::standard_query(name).unwrap()).unwrap()
    }

    #[test]
    fn size_classes_are_powers_of_two() {
        let mut c: BySizeClass<u32> = BySizeClass::default();
        assert_eq!(c.get(64), None);
        *c.entry(64) += 1;
        *c.entry(127) += 1;
        *c.entry(128) += 5;
        *c.entry(0) += 7;
        assert_eq!(c.get(100), Some(&2));
        assert_eq!(c.get(255), Some(&5));
        assert_eq!(c.get(1), Some(&7));
        assert_eq!(c.get(63), None);
    }

    #[test]
    fn encodes_levels() {
        let q = q("house");
        let stats = GraphStats::default();
        let qp = QueryPlans::new(&q, &GcsmOrder, &stats, true).unwrap();
        assert_eq!(qp.encoded.len(), qp.plans.len() * PLAN_WORDS);
        let p0 = &qp.plans[0];
        let w = &qp.encoded[..PLAN_WORDS];
        assert_eq!(w[0] as usize, p0.plan.depth());
        assert_eq!(w[1], 2);
        for (d, level) in p0.plan.levels.iter().enumerate() {
            let l = &w[PLAN_HEADER + d * LEVEL_WORDS..];
            assert_eq!(l[1] as usize, level.reads.len());
            for (k, r) in level.reads.iter().enumerate() {
                assert_eq!(l[L_READS + k] & 0xff, u32::from(r.pos));
                assert_eq!(l[L_READS + k] >> 8, version_code(r.version));
                assert_eq!(l[Shape::NARROW.l_elabels() + k], NONE);
            }
        }
        // The house: every read vertex is within 2 hops of the seed edge.
        assert!((1..=2).contains(&qp.read_hops), "{}", qp.read_hops);
        // 5-cycle from (0, 1): binds 2, then 3 (2 hops), then 4 reading 3.
        assert_eq!(read_hops(&self::q("5-cycle"), &qp_plans("5-cycle")), 2);
    }

    /// `QueryPlans::seeds` groups the batch edges by their endpoint labels
    /// ([`crate::batch_seeds`]); it must give csm_planner::for_each_seed's
    /// seeds, in its order: with labels the query lacks, with a seed edge
    /// whose two labels are equal (`same`: every query vertex labelled 0),
    /// and with edge labels.
    #[test]
    fn seeds_equal_the_planners() {
        use csm_graph::gen::{assign_labels, graph_from_pairs, make_stream, rmat, Labeller, StreamAmount};
        use csm_graph::{DynamicGraph, Strictness};
        // (data vertex labels, data edge labels, query labels modulo, label
        // multiplier: labels past batch_seeds' table); the last batch has
        // over 2,048 edges of each sign, which are grouped on rayon's pool
        for (nl, elabels, qmod, mul) in [
            (3, None, 3, 1),
            (5, None, 3, 1),
            (3, Some(2), 3, 1),
            (2, Some(2), 1, 1),
            (4, None, 3, 5000),
        ] {
            let uniform = Labeller::Uniform {
                num_labels: nl,
                seed: 1,
            };
            let labels: Vec<csm_graph::Label> = assign_labels(1024, &uniform).into_iter().map(|l| l * mul).collect();
            let pairs = rmat(10, 12_000, 0.57, 0.19, 0.19, 3);
            let g = graph_from_pairs(1024, &pairs, labels, elabels.map(|n| (n, 9)));
            let (g0, stream) = make_stream(&g, StreamAmount::Count(5000), 0.5, 4);
            let mut dg = DynamicGraph::from_data(&g0).unwrap();
            for name in ["triangle", "house", "5-cycle"] {
                let mut data = csm_graph::gen::standard_query(name).unwrap();
                let l: Vec<csm_graph::Label> = (0..data.labels.len() as u32).map(|i| i % qmod * mul).collect();
                data = csm_graph::gen::with_labels(&data, &l);
                if elabels.is_some() {
                    data.edge_labelled = true;
                    for (i, e) in data.edges.iter_mut().enumerate() {
                        e.label = (i % 2) as u32;
                    }
                }
                let q = QueryGraph::from_data(&data).unwrap();
                let qp = QueryPlans::new(&q, &GcsmOrder, &GraphStats::of(&dg), true).unwrap();
                let what = format!("{name}, {nl} labels × {mul}, edge labels {elabels:?}, query labels mod {qmod}");
                for batch in [&stream[..200], &stream[200..400], &stream[400..]] {
                    dg.stage(batch, "t", Strictness::Strict).unwrap();
                    let delta = dg.pending_delta().unwrap().clone();
                    let mut want = Vec::new();
                    for (i, p) in qp.plans.iter().enumerate() {
                        csm_planner::for_each_seed(&dg, p, &delta, |x, y| want.push(Seed::new(i as u32, x, y, 1)));
                    }
                    assert!(!want.is_empty(), "{what}: no seeds");
                    assert_eq!(qp.seeds(&dg, &delta), want, "{what}");
                    dg.abort();
                }
            }
        }
    }

    fn qp_plans(name: &str) -> Vec<DeltaPlan> {
        delta_plans(&q(name), &GcsmOrder, &GraphStats::default())
    }

    #[test]
    fn static_plans_start_at_one_and_big_queries_are_refused() {
        let q = q("7-wheel");
        let p = static_plan(&q, &GcsmOrder, &GraphStats::default(), Version::New);
        let mut out = Vec::new();
        encode_plan(&p, Shape::NARROW, 1, Sign::Positive, &mut out).unwrap();
        assert_eq!(out[1], 1);
        assert!(encode_plan(&p, Shape::NARROW, 0, Sign::Positive, &mut Vec::new()).is_err());
        let path = |n: usize| {
            let edges: Vec<_> = (0..n - 1).map(|i| (i, i + 1, 0)).collect();
            QueryGraph::new(vec![0; n], &edges, false).unwrap()
        };
        let stats = GraphStats::default();
        assert_eq!(
            QueryPlans::new(&path(8), &GcsmOrder, &stats, false).unwrap().shape,
            Shape::NARROW
        );
        let wide = QueryPlans::new(&path(9), &GcsmOrder, &stats, false).unwrap();
        assert_eq!(wide.shape, Shape::WIDE);
        assert_eq!(wide.encoded.len(), wide.plans.len() * (4 + 16 * 36));
        assert_eq!(
            QueryPlans::new(&path(16), &GcsmOrder, &stats, false).unwrap().shape,
            Shape::WIDE
        );
        let huge = QueryPlans::new(&path(17), &GcsmOrder, &stats, false).unwrap();
        assert_eq!(huge.shape, Shape::HUGE);
        assert_eq!(huge.encoded[0], 17 | 2 << 16);
        assert_eq!(huge.encoded.len(), huge.plans.len() * (4 + 32 * 68));
        // a clique's last vertex reads every other one: 9 vertices need the
        // huge build, 17 fit in none
        let clique = |n: usize| {
            let edges: Vec<_> = (0..n).flat_map(|u| (u + 1..n).map(move |v| (u, v, 0))).collect();
            QueryGraph::new(vec![0; n], &edges, false).unwrap()
        };
        let k9 = QueryPlans::new(&clique(9), &GcsmOrder, &stats, false).unwrap();
        assert!(k9.plans.iter().any(|p| p.plan.levels.iter().any(|l| l.reads.len() > 7)));
        assert_eq!(k9.shape, Shape::HUGE);
        let Err(err) = QueryPlans::new(&clique(17), &GcsmOrder, &stats, false) else {
            panic!("a 17-clique was planned");
        };
        assert!(err.to_string().contains("at most 15 neighbours"), "{err}");
    }

    #[test]
    fn shapes_keep_the_narrow_layout_and_widen_the_conflicts() {
        // the narrow build's layout is the one the kernel always had
        assert_eq!((LEVEL_WORDS, PLAN_WORDS), (28, 228));
        assert_eq!(Shape::WIDE.level_words(), 36);
        for s in Shape::ALL {
            assert!(s.l_confs() + s.maxq <= s.level_words());
            assert_eq!(Shape::of_words(&[5 | s.tag << 16, 2]), Some(s));
            assert!(s.maxr < s.block_threads() as usize, "one lane per read");
        }
        assert_eq!(Shape::HUGE.level_words(), 68);
        assert_eq!(Shape::NARROW.defines(), "");
        assert_eq!(Shape::WIDE.defines(), "#define MAXQ 16\n");
        assert_eq!(
            Shape::HUGE.defines(),
            "#define MAXQ 32\n#define MAXR 15\n#define WARPS 1\n"
        );
        assert_eq!(Shape::of_words(&[12]), Some(Shape::NARROW));
        assert_eq!(Shape::of_words(&[3 << 16]), None);
    }

    #[test]
    fn split_policy_drops_the_expansion_of_predicted_light_batches() {
        let base = TaskOptions::v6();
        let mut p = SplitPolicy::default();
        // No history: the options as they are.
        assert_eq!(p.options(base, 10), base);
        // 0.5 ms for 10 seeds: 20 seeds predict 1 ms (not light), 10 seeds 0.5 ms.
        p.observe(10, 0.5e-3);
        assert_eq!(p.options(base, 20), base);
        assert!(!p.options(base, 10).expand_few);
        // A heavy batch raises the average, but the lower of average and
        // last batch decides.
        p.observe(10, 8e-3);
        assert!((p.predicted(10).unwrap() - 4.25e-3).abs() < 1e-9);
        assert_eq!(p.options(base, 10), base);
        p.observe(10, 0.1e-3);
        assert!(!p.options(base, 10).expand_few);
        // Off, and nothing learnt from batches without seeds.
        let mut off = SplitPolicy::new(0.0);
        off.observe(10, 1e-6);
        off.observe(0, 1.0);
        assert_eq!(off.options(base, 10), base);
    }
}
