//! Every registered engine against every other and against the brute-force
//! oracle: static counts and per-batch positive/negative on random labelled
//! graphs (with and without edge labels), random connected queries and mixed
//! streams. A failing case is written as files that `csm verify` replays;
//! the test prints the command.

mod common;

use std::path::PathBuf;

use common::*;
use csm_baselines::oracle::embeddings;
use csm_baselines::registry::{continuous_engine, static_engine, EngineOptions, ENGINES};
use csm_engine::Batch;
use csm_graph::format::{write_graph, write_updates, Format};
use csm_graph::{CsrGraph, LocatedUpdate, Strictness};
use csm_planner::QueryGraph;
use proptest::prelude::*;
use rand::Rng;

/// Writes the case for `csm verify` and returns the command that replays it.
fn write_counterexample(seed: u64, g0: &Model, q: &QueryGraph, updates: &[LocatedUpdate], batch: usize) -> String {
    let dir: PathBuf = std::env::temp_dir().join(format!("csm-counterexample-{seed}"));
    let _ = std::fs::create_dir_all(&dir);
    let w = |name: &str| std::fs::File::create(dir.join(name)).expect("temp file");
    let _ = write_graph(&g0.to_data(), Format::Csm, w("graph.txt"));
    let _ = write_graph(&q.to_data(), Format::Csm, w("query.txt"));
    let ups: Vec<_> = updates.iter().map(|u| u.update).collect();
    let _ = write_updates(&ups, w("updates.txt"));
    format!(
        "csm verify --graph {d}/graph.txt --query {d}/query.txt --updates {d}/updates.txt --batch {batch} --engines all",
        d = dir.display()
    )
}

fn check(seed: u64) -> Result<(), TestCaseError> {
    let mut r = rng(seed);
    let vl = r.random_range(1..=3u32);
    let el = seed.is_multiple_of(3).then_some(2);
    let n = r.random_range(4..9u32);
    let p = r.random_range(0.25..0.6);
    let g0 = random_graph(&mut r, n, p, vl, el);
    let k = r.random_range(2..=4usize);
    let q = random_query(&mut r, k, 0.4, vl, el);
    let mut model = g0.clone();
    let updates = random_batch(&mut r, &mut model, 12, vl, el, seed.is_multiple_of(2));
    let batch = r.random_range(1..=6usize);
    let opts = EngineOptions {
        threads: 1,
        ..EngineOptions::default()
    };

    // static counts on G_0
    let csr = CsrGraph::from_data(&g0.to_data()).expect("valid graph");
    let expect = embeddings(&g0.to_data(), &q).len() as u64;
    for name in ENGINES {
        let eng = static_engine(name, &opts).expect("engine");
        let got = eng.count(&csr, &q).expect("count");
        if got != expect {
            let cmd = write_counterexample(seed, &g0, &q, &updates, batch);
            prop_assert_eq!(got, expect, "static count of {} differs; replay: {}", name, cmd);
        }
    }

    // per-batch positive/negative
    let mut engines: Vec<_> = ENGINES
        .iter()
        .map(|n| (n, continuous_engine(n, &opts).expect("engine")))
        .collect();
    for (_, e) in &mut engines {
        e.init(&g0.to_data(), &q).expect("init");
    }
    let mut state = g0.clone();
    for (b, chunk) in updates.chunks(batch).enumerate() {
        let before = embeddings(&state.to_data(), &q);
        for u in chunk {
            state.apply(&u.update);
        }
        let after = embeddings(&state.to_data(), &q);
        let want = (
            after.difference(&before).count() as u64,
            before.difference(&after).count() as u64,
        );
        for (name, e) in &mut engines {
            let res = e.process(Batch {
                updates: chunk,
                source: "updates.txt",
                strictness: Strictness::Strict,
            });
            let got = res.map(|r| (r.positive, r.negative)).map_err(|e| e.to_string());
            if got != Ok(want) {
                let cmd = write_counterexample(seed, &g0, &q, &updates, batch);
                prop_assert_eq!(
                    got,
                    Ok(want),
                    "engine {} differs at batch {}; replay: {}",
                    name,
                    b + 1,
                    cmd
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]
    #[test]
    fn every_engine_agrees_with_the_oracle(seed in any::<u64>()) {
        check(seed)?;
    }
}
