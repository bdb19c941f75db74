//! Loading what the commands read: data graphs (any [`Format`], detected or
//! named), queries (a file or a standard query name), update streams (a file
//! or generated from the graph, GCSM Sec. VI-A), and engine options.
//!
//! Input errors keep the `<file>:<line>: <reason>` form of
//! [`csm_graph::InputError`], so the binary prints them as
//! `error: <file>:<line>: <reason>`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use csm_baselines::registry::EngineOptions;
use csm_graph::format::{self, Format, Labeller, ReadOptions, ReadReport};
use csm_graph::gen::{self, StreamAmount, DEFAULT_INSERT_PROB, STANDARD_QUERIES};
use csm_graph::ids::too_sparse;
use csm_graph::{ErrorKind, GraphData, IdMap, IdPolicy, InputError, Label, LocatedUpdate, VertexId};
use csm_planner::{strategy_by_name, OrderStrategy, QueryGraph};

/// Parses a `--format` value (`graph`, `csm`, `snap`).
pub fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

/// How to read a data graph file.
#[derive(Args, Debug, Clone, Default)]
pub struct ReadArgs {
    /// Input format of the data graph: graph, csm or snap (default: detected
    /// from the first lines).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub format: Option<Format>,
    /// Give an unlabelled (SNAP) graph N uniformly drawn vertex labels
    /// (default: every vertex gets label 0).
    #[arg(long, value_name = "N")]
    pub labels: Option<u32>,
    /// Seed of the `--labels` labeller.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub label_seed: u64,
    /// Skip bad graph lines and invalid updates instead of stopping at the
    /// first one (they are counted and reported).
    #[arg(long)]
    pub lenient: bool,
    /// Vertex numbering: `keep` the file's ids (ids too sparse to store by id
    /// are an error), `compact` them to 0..N-1 in id order, or `auto`:
    /// compact only ids too sparse to store (past 2^24 and more than 16 per
    /// vertex). Update files are renumbered alike; errors name the file's ids.
    #[arg(long, value_name = "POLICY", default_value = "auto")]
    pub ids: IdPolicy,
}

/// A data graph argument plus how to read it.
#[derive(Args, Debug, Clone)]
pub struct GraphArgs {
    /// Data graph file.
    #[arg(long, short = 'g', value_name = "FILE")]
    pub graph: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// A loaded data graph.
#[derive(Debug)]
pub struct LoadedGraph {
    pub data: GraphData,
    /// The path as given (errors and output name it).
    pub name: String,
    pub format: Format,
    /// What the reader tolerated; its `id_map` is moved to [`Self::ids`].
    pub report: ReadReport,
    pub seconds: f64,
    /// The file's ids, when the vertices were renumbered (`--ids`).
    pub ids: Option<IdMap>,
    /// The `--ids` policy it was read with (update files follow it).
    pub id_policy: IdPolicy,
    /// `--lenient`: update files are read leniently too.
    pub lenient: bool,
}

impl ReadArgs {
    /// The labeller `--labels`/`--label-seed` ask for.
    pub fn labeller(&self) -> Result<Labeller> {
        let l = match self.labels {
            None => Labeller::Constant,
            Some(n) => Labeller::Uniform {
                num_labels: n,
                seed: self.label_seed,
            },
        };
        l.validate().map_err(|e| anyhow!("--labels: {e}"))?;
        Ok(l)
    }
}

/// Reads a data graph file (format from `--format` or detected).
pub fn load_graph(path: &Path, read: &ReadArgs) -> Result<LoadedGraph> {
    let t0 = Instant::now();
    let name = path.display().to_string();
    let content =
        format::read_text(path).map_err(|e| InputError::new(name.clone(), 0, ErrorKind::Io(e.to_string())))?;
    let fmt = match read.format {
        Some(f) => f,
        None => format::detect_format(&content).map_err(|mut e| {
            e.source_name = name.clone();
            e
        })?,
    };
    let labeller = read.labeller()?;
    if read.labels.is_some() && fmt != Format::Snap {
        eprintln!("warning: {name}: --labels only relabels SNAP input; this {fmt} file keeps its own labels");
    }
    let opts = ReadOptions {
        lenient: read.lenient,
        labeller,
        ids: read.ids,
    };
    let (data, mut report) = format::read_graph(&content, &name, Some(fmt), &opts)?;
    let ids = report.id_map.take();
    if let Some(m) = &ids {
        if read.ids == IdPolicy::CompactIfSparse {
            eprintln!(
                "note: {name}: vertex ids up to {} for {} vertices are too sparse to store by id; they are \
                 renumbered 0..{} in id order (--ids keep refuses, --ids compact always renumbers); update \
                 files are renumbered alike and errors name the file's ids",
                m.original(m.len().saturating_sub(1) as VertexId),
                m.len(),
                m.len().saturating_sub(1)
            );
        }
        set_file_ids(m.clone());
    }
    if report.skipped > 0 {
        eprintln!("warning: {name}: skipped {} bad line(s) (--lenient)", report.skipped);
        for e in &report.first_errors {
            eprintln!("  {e}");
        }
    }
    if report.self_loops > 0 || report.duplicates_folded > 0 {
        tracing::info!(
            "{name}: dropped {} self-loop(s), folded {} reversed/repeated pair(s)",
            report.self_loops,
            report.duplicates_folded
        );
    }
    let seconds = t0.elapsed().as_secs_f64();
    tracing::info!(
        "{name}: {fmt} graph, {} vertices, {} edges, {} vertex labels, read in {seconds:.3} s",
        data.num_vertices(),
        data.num_edges(),
        data.num_vertex_labels()
    );
    Ok(LoadedGraph {
        data,
        name,
        format: fmt,
        report,
        seconds,
        ids,
        id_policy: read.ids,
        lenient: read.lenient,
    })
}

impl GraphArgs {
    pub fn load(&self) -> Result<LoadedGraph> {
        load_graph(&self.graph, &self.read)
    }
}

impl LoadedGraph {
    /// [`workload`] on this graph (moved out of `self.data`): an update file
    /// is renumbered as the graph was, and one that adds vertices with ids
    /// too sparse to store renumbers the graph (`--ids auto`) or is refused
    /// (`--ids keep`).
    pub fn workload(&mut self, s: &StreamArgs, default_fraction: Option<f64>) -> Result<Workload> {
        let mut w = workload(std::mem::take(&mut self.data), s, default_fraction, self.lenient)?;
        if w.generated || w.updates.is_empty() {
            return Ok(w);
        }
        if self.ids.is_none() && sparse_additions(&w, self.id_policy)? {
            let (g, ids) = IdMap::compact(&w.g0);
            (w.g0, self.ids) = (g, Some(ids));
            eprintln!(
                "note: {}: the updates add vertices with ids too sparse to store by id; the graph and \
                 the updates are renumbered in id order (errors name the files' ids)",
                w.source
            );
        }
        if let Some(m) = &mut self.ids {
            m.map_updates(&mut w.updates);
            set_file_ids(m.clone());
        }
        Ok(w)
    }
}

/// Whether the updates of `w` add vertices with ids too sparse to store by
/// id (then to renumber; an error under [`IdPolicy::Keep`]).
fn sparse_additions(w: &Workload, policy: IdPolicy) -> Result<bool> {
    let added = w.updates.iter().filter_map(|u| match u.update {
        csm_graph::Update::AddVertex { id, .. } => Some((id, u.line)),
        _ => None,
    });
    let Some((id, line)) = added.max() else {
        return Ok(false);
    };
    let vertices = (w.g0.num_vertices() + w.updates.len()) as u64;
    if !too_sparse(id, vertices) {
        return Ok(false);
    }
    if policy == IdPolicy::Keep {
        return Err(InputError::new(w.source.clone(), line, ErrorKind::SparseIds { id, vertices }).into());
    }
    Ok(true)
}

/// The file ids of this run's renumbered graph and updates, for messages.
static FILE_IDS: std::sync::RwLock<Option<IdMap>> = std::sync::RwLock::new(None);

fn set_file_ids(m: IdMap) {
    if let Ok(mut g) = FILE_IDS.write() {
        *g = Some(m);
    }
}

/// `e` as `{e:#}` prints it, with the vertex ids of input errors given back
/// as the files name them when this run renumbered its vertices (`--ids`).
pub fn describe_error(e: &anyhow::Error) -> String {
    let ids = FILE_IDS.read().ok();
    let Some(ids) = ids.as_ref().and_then(|g| g.as_ref()) else {
        return format!("{e:#}");
    };
    fn input<'a>(c: &'a (dyn std::error::Error + 'static)) -> Option<&'a InputError> {
        c.downcast_ref::<InputError>()
            .or(match c.downcast_ref::<csm_engine::EngineError>() {
                Some(csm_engine::EngineError::Input(ie)) => Some(ie),
                _ => None,
            })
    }
    e.chain()
        .map(|c| match input(c) {
            Some(ie) => ids.original_error(ie).to_string(),
            None => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join(": ")
}

/// The query options every command that matches one query takes.
#[derive(Args, Debug, Clone)]
pub struct QueryArgs {
    /// Query file, or a standard query name (`triangle`, `house`, ...; add
    /// `:l0,l1,...` for vertex labels).
    #[arg(long, short = 'q', value_name = "QUERY")]
    pub query: String,
    /// Format of a query file (default: detected).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub query_format: Option<Format>,
}

impl QueryArgs {
    /// [`load_query`] of these options.
    pub fn load(&self) -> Result<LoadedQuery> {
        load_query(&self.query, self.query_format)
    }
}

/// A query: its display name and the validated pattern.
#[derive(Debug, Clone)]
pub struct LoadedQuery {
    pub name: String,
    pub query: QueryGraph,
}

/// Parses a standard query spec `NAME` or `NAME:l0,l1,...` (vertex labels).
pub fn standard_query_data(spec: &str) -> Result<Option<GraphData>> {
    let (name, labels) = match spec.split_once(':') {
        Some((n, l)) => (n, Some(l)),
        None => (spec, None),
    };
    let Some(q) = gen::standard_query(name) else {
        return Ok(None);
    };
    let Some(labels) = labels else {
        return Ok(Some(q));
    };
    let labels: Vec<Label> = labels
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<Label>()
                .map_err(|_| anyhow!("query `{spec}`: `{t}` is not a vertex label"))
        })
        .collect::<Result<_>>()?;
    if labels.len() != q.labels.len() {
        bail!(
            "query `{spec}`: {name} has {} vertices but {} labels were given",
            q.labels.len(),
            labels.len()
        );
    }
    if labels.contains(&csm_graph::ABSENT) {
        bail!("query `{spec}`: label {} is reserved", csm_graph::ABSENT);
    }
    Ok(Some(gen::with_labels(&q, &labels)))
}

/// Loads a query: an existing file (read in `format` or the detected one),
/// else a standard query name (`triangle`, `house:0,1,0,1,2`, ...).
pub fn load_query(spec: &str, format: Option<Format>) -> Result<LoadedQuery> {
    let path = Path::new(spec);
    let data = if path.exists() {
        let (data, _) = format::read_graph_file(path, format, &ReadOptions::default())?;
        data
    } else {
        match standard_query_data(spec)? {
            Some(d) => d,
            None => bail!(
                "query `{spec}` is neither a file nor a standard query (standard queries: {}; \
                 add `:l0,l1,...` for vertex labels)",
                STANDARD_QUERIES.join(", ")
            ),
        }
    };
    let query = QueryGraph::from_data(&data).map_err(|e| anyhow!("{spec}: invalid query: {e}"))?;
    Ok(LoadedQuery {
        name: spec.to_string(),
        query,
    })
}

/// Where an update stream comes from.
#[derive(Args, Debug, Clone, Default)]
pub struct StreamArgs {
    /// Update stream file (CSM format: `v`, `-v`, `e`, `-e` lines), applied to
    /// the graph as loaded.
    #[arg(long, short = 'u', value_name = "FILE", conflicts_with_all = ["stream_fraction", "stream_count"])]
    pub updates: Option<PathBuf>,
    /// Generate the stream from this fraction of the graph's edges (GCSM
    /// protocol: the inserted edges are removed from the loaded graph first).
    #[arg(long, value_name = "F")]
    pub stream_fraction: Option<f64>,
    /// Generate a stream of N edges (with --stream-fraction: at most N).
    #[arg(long, value_name = "N")]
    pub stream_count: Option<usize>,
    /// Probability that a generated update is an insertion.
    #[arg(long, value_name = "P", default_value_t = DEFAULT_INSERT_PROB)]
    pub insert_prob: f64,
    /// Seed of the generated stream.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
}

/// An initial graph and the updates to apply to it.
#[derive(Debug)]
pub struct Workload {
    pub g0: GraphData,
    pub updates: Vec<LocatedUpdate>,
    /// Lines of the update file skipped as unreadable (`--lenient`).
    pub unreadable: usize,
    /// Source name for error messages (the update file, or `<generated>`).
    pub source: String,
    pub generated: bool,
}

/// Checks a probability or fraction argument.
pub fn check_unit(flag: &str, x: f64) -> Result<()> {
    if !(x.is_finite() && (0.0..=1.0).contains(&x)) {
        bail!("{flag} must be between 0 and 1, got {x}");
    }
    Ok(())
}

impl StreamArgs {
    /// Whether any stream option was given.
    pub fn given(&self) -> bool {
        self.updates.is_some() || self.stream_fraction.is_some() || self.stream_count.is_some()
    }
}

/// Drops edge labels that are all zero in the graph, the updates' inserts
/// and the query ([`csm_planner::drop_trivial_edge_labels`]: CSM-study files
/// write `e u v 0` on every edge), so that matching takes the unlabelled
/// paths; counts are unchanged.
pub fn drop_zero_edge_labels(g: &mut GraphData, updates: &[LocatedUpdate], q: &mut QueryGraph) {
    csm_planner::drop_trivial_edge_labels(g, updates.iter().map(|u| &u.update), q);
}

/// Splits `g` GCSM-style, or reads the update file. `default_fraction` is
/// used when no stream option was given; without it the workload is `g`
/// with no updates.
///
/// With `lenient`, lines of the update file that can never be valid
/// (syntax, self-loops, oversized ids) are skipped, reported on stderr and
/// counted in [`Workload::unreadable`]; the engines skip invalid updates.
pub fn workload(g: GraphData, s: &StreamArgs, default_fraction: Option<f64>, lenient: bool) -> Result<Workload> {
    if let Some(path) = &s.updates {
        let (updates, report) = format::read_updates_file_with(path, lenient)?;
        if report.skipped > 0 {
            eprintln!(
                "warning: {}: skipped {} unreadable update line(s) (--lenient)",
                path.display(),
                report.skipped
            );
            for e in &report.first_errors {
                eprintln!("  {e}");
            }
        }
        return Ok(Workload {
            g0: g,
            updates,
            unreadable: report.skipped,
            source: path.display().to_string(),
            generated: false,
        });
    }
    let m = g.num_edges();
    let of_fraction = |f: f64, cap: Option<usize>| -> Result<StreamAmount> {
        check_unit("--stream-fraction", f)?;
        let n = ((f * m as f64).round() as usize).min(m);
        Ok(StreamAmount::Count(cap.map_or(n, |c| c.min(n))))
    };
    let amount = match (s.stream_fraction, s.stream_count) {
        (Some(f), cap) => of_fraction(f, cap)?,
        (None, Some(c)) => StreamAmount::Count(c),
        (None, None) => match default_fraction {
            Some(f) => of_fraction(f, None)?,
            None => {
                return Ok(Workload {
                    g0: g,
                    updates: Vec::new(),
                    unreadable: 0,
                    source: String::new(),
                    generated: false,
                })
            }
        },
    };
    check_unit("--insert-prob", s.insert_prob)?;
    let (g0, updates) = gen::make_stream(&g, amount, s.insert_prob, s.seed);
    tracing::info!("generated a stream of {} updates (seed {})", updates.len(), s.seed);
    Ok(Workload {
        g0,
        updates,
        unreadable: 0,
        source: "<generated>".into(),
        generated: true,
    })
}

/// Parses a size flag: `unlimited`, `N`, `N{K,M,G}` (binary units), or
/// `P%` of `whole` where the flag has one.
pub fn parse_size(flag: &str, s: &str, whole: Option<usize>) -> Result<usize> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("inf") {
        return Ok(usize::MAX);
    }
    // a finite number >= 0, or an error naming `what` it should be
    let number = |num: &str, what: &str| -> Result<f64> {
        match num.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            Ok(_) => bail!("{flag}: {what} must be >= 0, got {s}"),
            Err(_) => bail!("{flag}: `{s}` is not a {what}"),
        }
    };
    if let Some(p) = t.strip_suffix('%') {
        let p = number(p, "percentage")?;
        let Some(whole) = whole else {
            bail!("{flag}: give bytes (`N`, `N{{K,M,G}}` or `unlimited`), not a percentage");
        };
        return Ok((whole as f64 * p / 100.0) as usize);
    }
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1usize << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    Ok((number(num, "byte count")? * mult as f64) as usize)
}

/// `--budget` of `--engine gpu`: a fraction of the graph's list bytes in
/// (0, 1) such as `0.05`, a percentage in (0, 100] such as `5%`, `all`
/// (the whole graph: on a card it fits, nothing is read over the link but
/// a batch's changed lists), or a byte count (`N`, `N{K,M,G}`).
pub fn parse_gpu_budget(s: &str) -> Result<csm_gpu::Budget> {
    let t = s.trim();
    let bad =
        || anyhow!("--budget must be a fraction in (0, 1), a percentage in (0, 100], `all` or a byte count, got `{s}`");
    if t.eq_ignore_ascii_case("all") {
        return Ok(csm_gpu::Budget::Fraction(1.0));
    }
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Ok(csm_gpu::Budget::Fraction(p / 100.0)),
            _ => Err(bad()),
        };
    }
    if let Ok(f) = t.parse::<f64>() {
        if f > 0.0 && f < 1.0 {
            return Ok(csm_gpu::Budget::Fraction(f));
        }
    }
    match parse_size("--budget", t, None) {
        Ok(b) if b >= 1 && b != usize::MAX => Ok(csm_gpu::Budget::Bytes(b)),
        _ => Err(bad()),
    }
}

/// `--threads T` (T > 0) for the whole command: the global rayon pool, which
/// reading the inputs, keeping a query's edges and building the counted
/// graph use, gets T threads as the engine's own pool does (0 leaves it at
/// one per core). Call before anything uses the pool.
pub fn use_threads(threads: usize) {
    if threads > 0 {
        if let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global() {
            tracing::debug!("global pool already set: {e}");
        }
    }
}

/// A matching-order strategy by name.
pub fn order_strategy(name: &str) -> Result<Arc<dyn OrderStrategy>> {
    strategy_by_name(name)
        .map(Arc::from)
        .ok_or_else(|| anyhow!("unknown order `{name}` (expected cost, auto or gcsm)"))
}

/// Engine options from `--threads` and `--order`.
pub fn engine_options(threads: usize, order: &str) -> Result<EngineOptions> {
    Ok(EngineOptions {
        threads,
        order: order_strategy(order)?,
        ..EngineOptions::default()
    })
}

/// The GPU engine's options (`--engine gpu`, `verify --engines ...,gpu`).
#[derive(Args, Debug, Clone)]
pub struct GpuArgs {
    /// GPU variant for `--engine gpu` (and the `gpu` of `verify --engines`):
    /// zp, um, vsgm, vsgm:K, naive, gcsm, gcsm-persist.
    #[arg(long, value_name = "V", default_value = "gcsm")]
    pub variant: String,
    /// GPU cache budget for `--engine gpu`: a fraction of the graph's list
    /// bytes like 0.05, a percentage like 5%, `all`, or bytes (N, N{K,M,G}).
    #[arg(long, value_name = "B", default_value = "0.05")]
    pub budget: String,
    /// Kernel launch settings for `--engine gpu`, as KEY=VALUE[,KEY=VALUE...]:
    /// chunk, stage-words, window-min, window-max, defer-min, defer-slice,
    /// defer-wanted, defer-drained, defer-rounds, defer-cap, lockstep,
    /// memo-slots, memo-min, memo-defer, memo-labelled, grid-blocks (see
    /// `csm_gpu::MatcherConfig`; e.g. `lockstep=0,defer-drained=0` for
    /// match v12's searches and v11's deferral, `memo-slots=0` for no
    /// last-level memo).
    #[arg(long, value_name = "SETTINGS", default_value = "")]
    pub gpu_kernel: String,
    /// For `--engine gpu`: count light batches on the CPU, over the same
    /// staged graph: those whose size class's GPU matching is predicted
    /// under MS milliseconds (1 is a good value) and the CPU's count lower
    /// (learnt per power of two of the batch size). Off by default, so that
    /// GPU variants are compared on the GPU; the JSON's `on_cpu` says where
    /// each batch ran.
    #[arg(long, value_name = "MS")]
    pub gpu_light_on_cpu: Option<f64>,
    /// For `--variant gcsm-persist` with `--gpu-refresh-in-turn`: batches
    /// of at least N updates run the resident cache's refresh (or mask) on
    /// a second thread beside their seeds and task split (default 2048;
    /// `never`: always in turn).
    #[arg(long, value_name = "N")]
    pub gpu_overlap_from: Option<String>,
    /// For `--variant gcsm-persist`: run the resident cache's refresh (or
    /// mask) in turn before the host mirror's sync (or beside the seeds
    /// and split, see `--gpu-overlap-from`) instead of beside the sync on a
    /// second thread (the default).
    #[arg(long)]
    pub gpu_refresh_in_turn: bool,
    /// For `--variant gcsm-persist`: the share of the cache budget given to
    /// the resident lists' slots (0 to 1; default 0.97), the rest being
    /// room for lists that outgrow their slot.
    #[arg(long, value_name = "F")]
    pub gpu_resident_fill: Option<f64>,
    /// For `--variant gcsm-persist`: each resident list's slot holds
    /// `len + len / D + 8` entries (default 32; 0: `len + 8`).
    #[arg(long, value_name = "D")]
    pub gpu_resident_slack: Option<usize>,
}

/// `--engine`, `--threads`, `--order`.
#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Engine name (see `csm_baselines::registry::ENGINES`).
    #[arg(long, short = 'e', value_name = "NAME", default_value = "cpu")]
    pub engine: String,
    /// Worker threads (0 = all cores).
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    pub threads: usize,
    /// Matching order: auto (the default: static plans of 6+ query vertices
    /// pick among candidate orders by sampled work, otherwise cost), cost
    /// (label frequencies, then query structure) or gcsm (GCSM's fixed,
    /// data-independent order).
    #[arg(long, value_name = "ORDER", default_value = "auto")]
    pub order: String,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Static counts of the cpu engine filter whole neighbour lists by label
    /// instead of reading them grouped by label (for comparisons).
    #[arg(long)]
    pub no_label_groups: bool,
    /// Match on every edge: static counts (`match`, every engine) and
    /// continuous matching (cpu and gpu engines) otherwise leave out the
    /// edges whose label triple no query edge has (for comparisons).
    #[arg(long)]
    pub whole_graph: bool,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// `--memory-budget`.
#[derive(Args, Debug, Clone)]
pub struct MemoryArgs {
    /// Bytes the geneva and stwig engines may hold for intermediate results
    /// (N, or N with K, M or G; `unlimited`). Geneva stays within about twice
    /// it (default 256M); stwig declines an input whose hash tables would
    /// outgrow it (default 1G).
    #[arg(long, value_name = "BYTES")]
    pub memory_budget: Option<String>,
}

impl MemoryArgs {
    /// `options` with the budget set.
    pub fn apply(&self, options: EngineOptions) -> Result<EngineOptions> {
        let memory_budget = (self.memory_budget.as_deref())
            .map(|s| parse_size("--memory-budget", s, None))
            .transpose()?;
        Ok(EngineOptions {
            memory_budget,
            ..options
        })
    }
}

impl GpuArgs {
    /// The GPU engine these options name, with matching order `order`;
    /// `whole_graph` matches on every edge. Every option is checked before
    /// the device is opened, so a bad one is reported on any machine.
    pub fn engine(&self, order: &str, whole_graph: bool) -> Result<csm_gpu::GpuEngine> {
        let variant = csm_gpu::Variant::parse(&self.variant).ok_or_else(|| {
            anyhow!(
                "unknown GPU variant `{}` (expected zp, um, vsgm, vsgm:K, naive, gcsm, gcsm-persist)",
                self.variant
            )
        })?;
        let budget = parse_gpu_budget(&self.budget)?;
        // parsed before the device is opened: a bad setting is reported on
        // any machine
        let config = csm_gpu::MatcherConfig::default().with_settings(&self.gpu_kernel)?;
        let light = match self.gpu_light_on_cpu {
            Some(ms) if !(ms.is_finite() && ms > 0.0) => {
                bail!("--gpu-light-on-cpu must be a positive number of milliseconds, got {ms}")
            }
            other => other.map(|ms| ms / 1e3),
        };
        let fill = match self.gpu_resident_fill {
            Some(f) if !(f > 0.0 && f <= 1.0) => bail!("--gpu-resident-fill must be in (0, 1], got {f}"),
            other => other.unwrap_or(csm_gpu::resident::ResidentCache::FILL),
        };
        let slack = csm_gpu::resident::Slack {
            div: self
                .gpu_resident_slack
                .unwrap_or(csm_gpu::resident::Slack::default().div),
            ..Default::default()
        };
        let overlap_from = match self.gpu_overlap_from.as_deref() {
            None => csm_gpu::overlap::OVERLAP_FROM,
            Some("never") => usize::MAX,
            Some(n) => n
                .parse()
                .map_err(|_| anyhow!("--gpu-overlap-from must be a number of updates or `never`, got `{n}`"))?,
        };
        let e = csm_gpu::GpuEngine::with_config(variant, budget, order_strategy(order)?, config)?
            .with_light_on_cpu(light)
            .with_resident_layout(fill, slack)
            .with_overlap_from(overlap_from)
            .with_refresh_beside_sync(!self.gpu_refresh_in_turn);
        Ok(if whole_graph { e.without_edge_filter() } else { e })
    }
}

impl EngineArgs {
    pub fn options(&self) -> Result<EngineOptions> {
        self.memory.apply(EngineOptions {
            label_groups: !self.no_label_groups,
            edge_filter: !self.whole_graph,
            ..engine_options(self.threads, &self.order)?
        })
    }

    /// How [`static_engine`] and [`continuous_engine`] build `--engine`.
    fn engine_source(&self) -> Result<EngineSource<'_>> {
        Ok(EngineSource {
            options: self.options()?,
            gpu: &self.gpu,
            order: &self.order,
            whole_graph: self.whole_graph,
        })
    }

    /// The static matcher named by `--engine` (the registry's, or `gpu`).
    pub fn static_engine(&self) -> Result<Box<dyn csm_engine::StaticMatcher>> {
        self.engine_source()?.static_engine(&self.engine)
    }

    /// The continuous matcher named by `--engine` (the registry's, or `gpu`).
    pub fn continuous_engine(&self) -> Result<Box<dyn csm_engine::ContinuousMatcher>> {
        self.engine_source()?.continuous_engine(&self.engine)
    }
}

/// The GPU engine's name in `--engine` and `verify --engines` (it is not
/// in the CPU registry).
pub const GPU_ENGINE: &str = "gpu";

/// Where engines come from by name: [`GPU_ENGINE`] is built from the GPU
/// options, every other name from `csm_baselines::registry` with `options`.
pub struct EngineSource<'a> {
    pub options: EngineOptions,
    pub gpu: &'a GpuArgs,
    /// Matching order of the GPU engine (`--order`).
    pub order: &'a str,
    /// The GPU engine matches on every edge (`--whole-graph`).
    pub whole_graph: bool,
}

impl EngineSource<'_> {
    fn gpu_engine(&self) -> Result<csm_gpu::GpuEngine> {
        self.gpu.engine(self.order, self.whole_graph)
    }

    /// The static matcher `name` names.
    pub fn static_engine(&self, name: &str) -> Result<Box<dyn csm_engine::StaticMatcher>> {
        if name == GPU_ENGINE {
            return Ok(Box::new(self.gpu_engine()?));
        }
        Ok(csm_baselines::registry::static_engine(name, &self.options)?)
    }

    /// The continuous matcher `name` names.
    pub fn continuous_engine(&self, name: &str) -> Result<Box<dyn csm_engine::ContinuousMatcher>> {
        if name == GPU_ENGINE {
            return Ok(Box::new(self.gpu_engine()?));
        }
        Ok(csm_baselines::registry::continuous_engine(name, &self.options)?)
    }
}

/// Splits a comma-separated list, dropping empty items.
pub fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from)
        .collect()
}

/// Parses a comma-separated list of numbers.
pub fn parse_list<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>> {
    let v: Vec<T> = split_list(s)
        .iter()
        .map(|t| {
            t.parse::<T>()
                .map_err(|_| anyhow!("{flag}: `{t}` is not a valid number"))
        })
        .collect::<Result<_>>()?;
    if v.is_empty() {
        bail!("{flag}: empty list");
    }
    Ok(v)
}

/// Creates (truncating) an output file, or stdout for `-`.
pub fn create_output(path: &Path) -> Result<Box<dyn std::io::Write>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdout().lock()));
    }
    let f = std::fs::File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
    Ok(Box::new(f))
}

/// How messages name an output path (`-` is stdout).
pub fn output_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdout>".into()
    } else {
        path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_gpu_budget, parse_size};

    #[test]
    fn gpu_budgets_parse_as_fractions_percentages_all_or_bytes() {
        use csm_gpu::Budget::{Bytes, Fraction};
        let ok = |s: &str| parse_gpu_budget(s).unwrap();
        assert_eq!(ok("0.05"), Fraction(0.05));
        assert_eq!(ok("5%"), Fraction(0.05));
        assert_eq!(ok("100%"), Fraction(1.0));
        assert_eq!(ok("all"), Fraction(1.0));
        assert_eq!(ok(" ALL "), Fraction(1.0));
        assert_eq!(ok("200M"), Bytes(200 << 20));
        assert_eq!(ok("4096"), Bytes(4096));
        for bad in ["0", "-1", "0%", "150%", "nan", "x", "unlimited", "-2G"] {
            let e = parse_gpu_budget(bad).unwrap_err().to_string();
            assert!(e.contains("--budget") && e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_parse_as_bytes_suffixes_percentages_or_unlimited() {
        let ok = |s: &str, whole: Option<usize>| parse_size("--budget", s, whole).unwrap();
        assert_eq!(ok("1500", None), 1500);
        assert_eq!(ok("2k", None), 2048);
        assert_eq!(ok("1.5M", None), 3 << 19);
        assert_eq!(ok(" 1G ", None), 1 << 30);
        assert_eq!(ok("unlimited", None), usize::MAX);
        assert_eq!(ok("5%", Some(1000)), 50);
        let err = |s: &str, whole: Option<usize>| parse_size("--budget", s, whole).unwrap_err().to_string();
        assert!(err("5%", None).contains("not a percentage"), "{}", err("5%", None));
        assert!(err("x%", Some(10)).contains("is not a percentage"));
        assert!(err("-1%", Some(10)).contains("percentage must be >= 0"));
        assert!(err("12Q", None).contains("is not a byte count"));
        assert!(err("-3K", None).contains("byte count must be >= 0"));
    }
}
