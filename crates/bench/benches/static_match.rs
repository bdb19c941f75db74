//! Static counts (`cpu` engine, all threads) of the standard queries of 3 to
//! 5 vertices on a generated R-MAT graph: scale 16 (65,536 vertices),
//! 1,000,000 edges, 16 uniform vertex labels (seed 1). The standard queries
//! have every vertex labelled 0.
//!
//! The 5-vertex queries take seconds per count (about 2 s for house and 13 s
//! for 5-cycle on 2 cores), so the samples are flat and the whole benchmark
//! takes a few minutes.
//!
//! The README's 10M-edge figure does not come from here but from a
//! `csm match` run on a larger generated graph (see `docs/cli.md`,
//! "Reproducing the static figure").

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use csm_baselines::registry::{self, EngineOptions};
use csm_graph::gen::{self, Labeller, RMAT_STANDARD, STANDARD_QUERIES};
use csm_graph::CsrGraph;
use csm_planner::QueryGraph;

fn bench(c: &mut Criterion) {
    let scale = 16;
    let n = 1usize << scale;
    let (a, b, cc) = RMAT_STANDARD;
    let pairs = gen::rmat(scale, 1_000_000, a, b, cc, 1);
    let labels = gen::assign_labels(
        n,
        &Labeller::Uniform {
            num_labels: 16,
            seed: 1,
        },
    );
    let g = gen::graph_from_pairs(n, &pairs, labels, None);
    let csr = CsrGraph::from_data(&g).expect("valid graph");
    let engine = registry::static_engine("cpu", &EngineOptions::default()).expect("cpu engine");

    let mut group = c.benchmark_group("static/rmat-s16-m1M-l16");
    group.sampling_mode(SamplingMode::Flat);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for &name in STANDARD_QUERIES {
        let data = gen::standard_query(name).expect("standard query");
        if !(3..=5).contains(&data.num_vertices()) {
            continue;
        }
        let q = QueryGraph::from_data(&data).expect("valid query");
        group.bench_function(name, |b| b.iter(|| black_box(engine.count(&csr, &q).expect("count"))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
