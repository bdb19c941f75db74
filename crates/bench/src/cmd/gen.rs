//! `csm gen`: seeded generators for graphs, update streams and queries.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use csm_graph::format::{self, Format, Labeller};
use csm_graph::gen::{self, RMAT_STANDARD};
use csm_graph::{GraphData, Update};
use csm_planner::QueryGraph;

use crate::input::{self, GraphArgs, ReadArgs, StreamArgs};

/// Arguments of `csm gen`.
#[derive(Args, Debug, Clone)]
pub struct GenArgs {
    #[command(subcommand)]
    pub what: GenCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum GenCommand {
    /// Generate a labelled data graph.
    Graph(GenGraphArgs),
    /// Split a graph into an initial graph G0 and an update stream (GCSM Sec. VI-A).
    Stream(GenStreamArgs),
    /// Write a query: a random walk in a graph, or a standard pattern.
    Query(GenQueryArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphKind {
    /// R-MAT power-law graph (a, b, c = 0.57, 0.19, 0.19) over 2^scale vertices.
    Rmat,
    /// Erdős–Rényi G(n, m).
    Er,
    /// Noisy 2-D grid (road-like).
    Grid,
}

/// Arguments of `csm gen graph`.
#[derive(Args, Debug, Clone)]
pub struct GenGraphArgs {
    #[arg(long, value_enum, default_value = "rmat")]
    pub kind: GraphKind,
    /// Number of vertices (R-MAT: rounded up to a power of two; grid: a
    /// square grid of at least N vertices).
    #[arg(long, short = 'n', value_name = "N", conflicts_with = "scale")]
    pub vertices: Option<usize>,
    /// 2^SCALE vertices.
    #[arg(long, value_name = "SCALE")]
    pub scale: Option<u32>,
    /// Number of edges (R-MAT and ER; a grid's edge count follows from its size).
    #[arg(long, short = 'm', value_name = "M")]
    pub edges: Option<usize>,
    /// Number of vertex labels.
    #[arg(long, value_name = "L", default_value_t = 1)]
    pub labels: u32,
    /// Draw labels with Zipf frequencies of this exponent instead of uniformly.
    #[arg(long, value_name = "EXP")]
    pub zipf: Option<f64>,
    /// Give edges K uniformly drawn labels (the graph becomes edge-labelled).
    #[arg(long, value_name = "K")]
    pub edge_labels: Option<u32>,
    /// Grid noise: probability mass of dropped grid edges and added diagonals.
    #[arg(long, value_name = "P", default_value_t = 0.2)]
    pub noise: f64,
    #[arg(long, short = 's', value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Output format: graph, csm or snap (snap drops labels).
    #[arg(long, value_name = "FORMAT", default_value = "graph", value_parser = input::parse_format)]
    pub format: Format,
    /// Output file (`-` for stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
}

/// Arguments of `csm gen stream`.
#[derive(Args, Debug, Clone)]
pub struct GenStreamArgs {
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Fraction of the edges that become updates.
    #[arg(long, value_name = "F", conflicts_with = "count")]
    pub fraction: Option<f64>,
    /// Number of edges that become updates.
    #[arg(long, value_name = "N")]
    pub count: Option<usize>,
    /// Probability that an update is an insertion.
    #[arg(long, value_name = "P", default_value_t = gen::DEFAULT_INSERT_PROB)]
    pub insert_prob: f64,
    #[arg(long, short = 's', value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Update stream output (CSM format).
    #[arg(long, short = 'o', value_name = "UPDATES")]
    pub output: PathBuf,
    /// Initial graph G0 output (the input minus the inserted edges).
    #[arg(long, value_name = "G0FILE")]
    pub initial: PathBuf,
    /// Format of the G0 file.
    #[arg(long, value_name = "FORMAT", default_value = "graph", value_parser = input::parse_format)]
    pub out_format: Format,
    /// Renumber the input's vertices 0..N-1 (in id order) before splitting,
    /// so that G0 and the stream use dense ids. SubgraphMatching-family
    /// readers of the graph format need them; SNAP files such as wiki-Vote
    /// skip ids.
    #[arg(long)]
    pub compact_ids: bool,
}

/// Arguments of `csm gen query`.
#[derive(Args, Debug, Clone)]
pub struct GenQueryArgs {
    /// Graph to take a random-walk query from.
    #[arg(long, short = 'g', value_name = "FILE", required_unless_present = "standard")]
    pub graph: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Number of query vertices.
    #[arg(long, short = 'k', value_name = "K", required_unless_present = "standard")]
    pub size: Option<usize>,
    /// Keep every graph edge among the chosen vertices (induced query).
    #[arg(long)]
    pub dense: bool,
    #[arg(long, short = 's', value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Write a standard pattern instead (`house`, `triangle:0,1,2`, ...).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["graph", "size", "dense"])]
    pub standard: Option<String>,
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "graph", value_parser = input::parse_format)]
    pub out_format: Format,
    /// Output file (`-` for stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
}

pub fn run(args: GenArgs) -> Result<()> {
    match args.what {
        GenCommand::Graph(a) => graph(a),
        GenCommand::Stream(a) => stream(a),
        GenCommand::Query(a) => query(a),
    }
}

fn write_graph_to(g: &GraphData, fmt: Format, path: &std::path::Path) -> Result<()> {
    let w = input::create_output(path)?;
    format::write_graph(g, fmt, w).with_context(|| format!("{}: write failed", path.display()))
}

/// The graph `csm gen graph` describes.
pub fn generate_graph(a: &GenGraphArgs) -> Result<GraphData> {
    if let Some(s) = a.scale {
        if s > 30 {
            bail!("--scale {s} is too large (at most 30)");
        }
    }
    let pow2 = |n: usize| -> Result<u32> {
        let s = n.max(1).next_power_of_two().trailing_zeros();
        if s > 30 {
            bail!("--vertices {n} is too large (at most 2^30)");
        }
        Ok(s)
    };
    let (n, pairs) = match a.kind {
        GraphKind::Rmat => {
            let scale = match (a.scale, a.vertices) {
                (Some(s), _) => s,
                (None, Some(n)) => {
                    let s = pow2(n)?;
                    if 1usize << s != n {
                        eprintln!(
                            "note: R-MAT needs a power of two; using 2^{s} = {} vertices",
                            1usize << s
                        );
                    }
                    s
                }
                (None, None) => bail!("give --vertices N or --scale S"),
            };
            let m = a.edges.ok_or_else(|| anyhow!("give --edges M"))?;
            let (pa, pb, pc) = RMAT_STANDARD;
            (1usize << scale, gen::rmat(scale, m, pa, pb, pc, a.seed))
        }
        GraphKind::Er => {
            let n = match (a.scale, a.vertices) {
                (Some(s), _) => 1usize << s,
                (None, Some(n)) => n,
                (None, None) => bail!("give --vertices N or --scale S"),
            };
            if n >= 1 << 31 {
                bail!("--vertices {n} is too large");
            }
            let m = a.edges.ok_or_else(|| anyhow!("give --edges M"))?;
            let max = (n as u64) * (n as u64).saturating_sub(1) / 2;
            if m as u64 > max {
                bail!("--edges {m} is more than the {max} pairs of {n} vertices");
            }
            (n, gen::erdos_renyi(n, m, a.seed))
        }
        GraphKind::Grid => {
            let n = match (a.scale, a.vertices) {
                (Some(s), _) => 1usize << s,
                (None, Some(n)) => n,
                (None, None) => bail!("give --vertices N or --scale S"),
            };
            input::check_unit("--noise", a.noise)?;
            let side = (n as f64).sqrt().ceil() as usize;
            if side.saturating_mul(side) >= 1 << 31 {
                bail!("--vertices {n} is too large");
            }
            if a.edges.is_some() {
                eprintln!("note: --edges is ignored for grids");
            }
            (side * side, gen::grid(side, side, a.noise, a.seed))
        }
    };
    if a.labels == 0 {
        bail!("--labels must be at least 1");
    }
    let labeller = match a.zipf {
        Some(exponent) => Labeller::Zipf {
            num_labels: a.labels,
            exponent,
            seed: a.seed.wrapping_add(1),
        },
        None if a.labels <= 1 => Labeller::Constant,
        None => Labeller::Uniform {
            num_labels: a.labels,
            seed: a.seed.wrapping_add(1),
        },
    };
    labeller.validate().map_err(|e| anyhow!("--labels/--zipf: {e}"))?;
    let edge_labels = match a.edge_labels {
        Some(0) => bail!("--edge-labels must be at least 1"),
        Some(k) => Some((k, a.seed.wrapping_add(2))),
        None => None,
    };
    let labels = gen::assign_labels(n, &labeller);
    Ok(gen::graph_from_pairs(n, &pairs, labels, edge_labels))
}

fn graph(a: GenGraphArgs) -> Result<()> {
    let g = generate_graph(&a)?;
    if a.format == Format::Snap && (a.labels > 1 || a.edge_labels.is_some()) {
        eprintln!("note: the snap format drops labels");
    }
    write_graph_to(&g, a.format, &a.output)?;
    eprintln!(
        "wrote {}: {} vertices, {} edges, {} vertex labels ({} format)",
        input::output_name(&a.output),
        g.num_vertices(),
        g.num_edges(),
        g.num_vertex_labels(),
        a.format
    );
    Ok(())
}

fn stream(a: GenStreamArgs) -> Result<()> {
    if a.fraction.is_none() && a.count.is_none() {
        bail!("give --fraction F or --count N");
    }
    let mut data = a.graph.load()?.data;
    if a.compact_ids {
        data = data.compact_ids().0;
    } else if a.out_format == Format::Graph && data.has_id_gaps() {
        eprintln!(
            "note: the input skips vertex ids; the graph format's C++ readers (SubgraphMatching, RapidFlow) \
             need ids 0..N-1: --compact-ids renumbers G0 and the stream"
        );
    }
    let s = StreamArgs {
        updates: None,
        stream_fraction: a.fraction,
        stream_count: a.count,
        insert_prob: a.insert_prob,
        seed: a.seed,
    };
    let w = input::workload(data, &s, None, false)?;
    write_graph_to(&w.g0, a.out_format, &a.initial)?;
    let updates: Vec<Update> = w.updates.iter().map(|u| u.update).collect();
    let out = input::create_output(&a.output)?;
    format::write_updates(&updates, out).with_context(|| format!("{}: write failed", input::output_name(&a.output)))?;
    let ins = updates.iter().filter(|u| matches!(u, Update::AddEdge(_))).count();
    eprintln!(
        "wrote {} ({} edges) and {} ({} updates: {} insertions, {} deletions)",
        input::output_name(&a.initial),
        w.g0.num_edges(),
        input::output_name(&a.output),
        updates.len(),
        ins,
        updates.len() - ins
    );
    Ok(())
}

fn query(a: GenQueryArgs) -> Result<()> {
    let data = if let Some(spec) = &a.standard {
        input::standard_query_data(spec)?.ok_or_else(|| {
            anyhow!(
                "unknown standard query `{spec}` (known: {})",
                gen::STANDARD_QUERIES.join(", ")
            )
        })?
    } else {
        let (Some(path), Some(k)) = (&a.graph, a.size) else {
            bail!("give --graph FILE and --size K, or --standard NAME");
        };
        if !(2..=32).contains(&k) {
            bail!("--size must be between 2 and 32, got {k}");
        }
        let g = input::load_graph(path, &a.read)?;
        gen::random_walk_query(&g.data, k, a.seed, a.dense)
            .ok_or_else(|| anyhow!("{}: no connected component has {k} vertices", g.name))?
    };
    let q = QueryGraph::from_data(&data).map_err(|e| anyhow!("generated query is invalid: {e}"))?;
    write_graph_to(&data, a.out_format, &a.output)?;
    eprintln!(
        "wrote {}: query with {} vertices, {} edges, |Aut(Q)| = {}",
        input::output_name(&a.output),
        q.num_vertices(),
        q.num_edges(),
        q.automorphism_count()
    );
    Ok(())
}
