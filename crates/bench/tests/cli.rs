//! End-to-end tests of the `csm` binary on small generated inputs.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const CSM: &str = env!("CARGO_BIN_EXE_csm");

fn csm(args: &[&str]) -> Output {
    Command::new(CSM).args(args).output().expect("run csm")
}

/// `csm args` with the GPU forced off (`CSM_GPU_DISABLE`): what a machine
/// without a device sees.
fn csm_without_gpu(args: &[&str]) -> Output {
    Command::new(CSM)
        .args(args)
        .env("CSM_GPU_DISABLE", "1")
        .output()
        .expect("run csm")
}

/// `command` (stream or verify) matching the triangle on `g0` under the
/// updates `s` in batches of 7: the start of the GPU option tests' runs.
fn triangle_batches_of_7<'a>(command: &'a str, g0: &'a str, s: &'a str) -> Vec<&'a str> {
    vec![command, "-g", g0, "-u", s, "-q", "triangle", "-b", "7"]
}

fn ok(args: &[&str]) -> String {
    let out = csm(args);
    assert!(
        out.status.success(),
        "csm {args:?} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

fn last_json(stdout: &str) -> Value {
    let line = stdout.lines().last().expect("some output");
    serde_json::from_str(line).expect("last line is JSON")
}

/// A path of 14 vertices (about 10^20 embeddings in the 40,000-edge R-MAT
/// graphs below), in the graph format.
fn write_path_query(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("path.graph");
    let mut text = String::from("t 14 13\n");
    for v in 0..14 {
        text += &format!("v {v} 0 {}\n", if v == 0 || v == 13 { 1 } else { 2 });
    }
    for v in 0..13 {
        text += &format!("e {v} {}\n", v + 1);
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn gen_graph(dir: &Path, name: &str, scale: &str, edges: &str, labels: &str) -> String {
    let path = dir.join(name).display().to_string();
    ok(&[
        "gen", "graph", "--kind", "rmat", "--scale", scale, "--edges", edges, "--labels", labels, "--seed", "5", "-o",
        &path,
    ]);
    path
}

/// `csm gen stream` on `g`: the paths of G0 (`g0.graph`) and of the stream.
fn gen_stream(dir: &Path, g: &str, fraction: &str, seed: &str, name: &str) -> (String, String) {
    let g0 = dir.join("g0.graph").display().to_string();
    let u = dir.join(name).display().to_string();
    ok(&[
        "gen",
        "stream",
        "-g",
        g,
        "--fraction",
        fraction,
        "--seed",
        seed,
        "-o",
        &u,
        "--initial",
        &g0,
    ]);
    (g0, u)
}

#[test]
fn match_count_equals_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "8", "900", "2");
    for q in ["triangle", "diamond", "house:0,1,0,1,0"] {
        let cpu = last_json(&ok(&["match", "-g", &g, "-q", q, "--json", "--unique"]));
        let oracle = last_json(&ok(&["match", "-g", &g, "-q", q, "--engine", "oracle", "--json"]));
        assert_eq!(cpu["count"], oracle["count"], "{q}");
        assert_eq!(cpu["engine"], "cpu");
        assert!(cpu["seconds"].as_f64().is_some());
        let aut = cpu["automorphisms"].as_u64().unwrap();
        assert_eq!(cpu["unique"].as_u64().unwrap() * aut, cpu["count"].as_u64().unwrap());
    }
    // Every output format reads back to the same count.
    let want = last_json(&ok(&["match", "-g", &g, "-q", "square", "--json"]))["count"].clone();
    let csm_fmt = dir.path().join("g.csm").display().to_string();
    ok(&[
        "gen", "graph", "--kind", "rmat", "--scale", "8", "--edges", "900", "--labels", "2", "--seed", "5", "--format",
        "csm", "-o", &csm_fmt,
    ]);
    assert_eq!(
        last_json(&ok(&["match", "-g", &csm_fmt, "-q", "square", "--json"]))["count"],
        want
    );
}

/// `--limit N`: the count is `min(count, N)` (the oracle's count is the
/// reference), `"limit_reached"` says which, the text output says so too,
/// and a query with about 10^20 embeddings stops at the limit.
/// `--threads T` holds for the whole command: the shared pool that reads
/// inputs and builds the counted graph has T threads too.
#[test]
fn threads_flag_sizes_the_shared_pool() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "6", "200", "2");
    for t in ["1", "3"] {
        let j = last_json(&ok(&["match", "-g", &g, "-q", "triangle", "-t", t, "--json"]));
        assert_eq!(j["pool_threads"].to_string(), t, "{j}");
        let out = ok(&[
            "stream",
            "-g",
            &g,
            "-q",
            "triangle",
            "--stream-fraction",
            "0.1",
            "-b",
            "8",
            "-t",
            t,
            "--json",
        ]);
        assert_eq!(last_json(&out)["pool_threads"].to_string(), t, "{out}");
    }
}

#[test]
fn match_limits_cap_counts() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "8", "900", "2");
    let want = last_json(&ok(&[
        "match", "-g", &g, "-q", "diamond", "--engine", "oracle", "--json",
    ]))["count"]
        .as_u64()
        .unwrap();
    assert!(want > 2);
    for (limit, count, reached) in [(want + 1, want, false), (want, want, true), (want / 2, want / 2, true)] {
        for engine in ["cpu", "oracle"] {
            let l = limit.to_string();
            let o = last_json(&ok(&[
                "match", "-g", &g, "-q", "diamond", "-e", engine, "--limit", &l, "--json",
            ]));
            assert_eq!(o["count"].as_u64(), Some(count), "{engine} limit {limit}");
            assert_eq!(o["limit_reached"], reached, "{engine} limit {limit}");
            assert_eq!(o["limit"].as_u64(), Some(limit));
        }
    }
    let text = ok(&["match", "-g", &g, "-q", "diamond", "--limit", "1"]);
    assert!(text.contains("count   1  (limit reached"), "{text}");
    assert!(!csm(&["match", "-g", &g, "-q", "diamond", "--limit", "0"])
        .status
        .success());
    let g = gen_graph(dir.path(), "big.graph", "12", "40000", "1");
    let path = write_path_query(dir.path());
    let q = path.to_str().unwrap();
    let o = last_json(&ok(&[
        "match",
        "-g",
        &g,
        "-q",
        q,
        "--limit",
        "100000",
        "--time-limit",
        "600",
        "--json",
    ]));
    assert_eq!(
        (o["count"].as_u64(), &o["limit_reached"]),
        (Some(100000), &Value::Bool(true)),
        "{o}"
    );
}

#[test]
fn stream_json_lines_sum_to_summary() {
    stream_json_lines_sum_to_summary_at("16", "1");
}

/// Batches of one update go through `process_each`, which the cpu engine
/// overlaps on two threads: one JSON line per update all the same.
#[test]
fn stream_json_lines_sum_to_summary_one_update_at_a_time() {
    stream_json_lines_sum_to_summary_at("1", "2");
}

fn stream_json_lines_sum_to_summary_at(batch: &str, threads: &str) {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "8", "1000", "1");
    let out = ok(&[
        "stream",
        "-g",
        &g,
        "-q",
        "diamond",
        "--stream-fraction",
        "0.1",
        "--batch",
        batch,
        "-t",
        threads,
        "--json",
        "--initial-count",
    ]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let (summary, batches) = lines.split_last().unwrap();
    assert_eq!(summary["summary"], true);
    assert!(!batches.is_empty());
    let (mut pos, mut neg, mut upd, mut secs) = (0, 0, 0, 0.0);
    for (i, b) in batches.iter().enumerate() {
        assert!(b.get("summary").is_none());
        assert_eq!(b["batch"].as_u64().unwrap(), i as u64);
        for k in ["positive", "negative", "seconds", "update_seconds", "skipped"] {
            assert!(b.get(k).is_some(), "batch line lacks {k}: {b}");
        }
        pos += b["positive"].as_u64().unwrap();
        neg += b["negative"].as_u64().unwrap();
        upd += b["updates"].as_u64().unwrap();
        secs += b["seconds"].as_f64().unwrap();
    }
    assert_eq!(summary["positive"].as_u64().unwrap(), pos);
    assert_eq!(summary["negative"].as_u64().unwrap(), neg);
    assert_eq!(summary["updates"].as_u64().unwrap(), upd);
    assert_eq!(upd, 100);
    assert_eq!(summary["batches"].as_u64().unwrap(), batches.len() as u64);
    assert!((summary["seconds"].as_f64().unwrap() - secs).abs() < 1e-9);
    assert!(summary["updates_per_second"].as_f64().is_some());
    // initial + Σpos − Σneg = the static count after the stream, which `gen stream` lets us recount.
    let initial = summary["initial_count"].as_u64().unwrap();
    assert_eq!(summary["final_count"].as_u64().unwrap(), initial + pos - neg);

    let (g0, u) = gen_stream(dir.path(), &g, "0.1", "1", "u.txt");
    let s = last_json(&ok(&[
        "stream",
        "-g",
        &g0,
        "-q",
        "diamond",
        "-u",
        &u,
        "--batch",
        batch,
        "-t",
        threads,
        "--json",
        "--initial-count",
    ]));
    assert_eq!(s["initial_count"].as_u64().unwrap(), initial);
    assert_eq!(s["positive"].as_u64().unwrap(), pos);
    assert_eq!(s["negative"].as_u64().unwrap(), neg);
}

/// Counts of 2^64 or more are reported as an overflow (`"count": null,
/// "overflow": true`), never as a wrapped number: three centers of label 0
/// joined to 20 leaves of each of 16 labels, and a star with a leaf of
/// each label (3 · 20^16 embeddings); the stream joins center 0 to its
/// leaves of label 1 (20^16 new embeddings).
#[test]
fn counts_past_64_bits_are_an_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let (mut graph, mut g0, mut updates) = (String::new(), String::new(), String::new());
    for x in 0..3 {
        graph += &format!("v {x} 0\n");
    }
    for l in 1..=16 {
        for k in 0..20 {
            graph += &format!("v {} {l}\n", 3 + (l - 1) * 20 + k);
        }
    }
    g0 += &graph;
    for l in 1..=16 {
        for k in 0..20 {
            let leaf = 3 + (l - 1) * 20 + k;
            for x in 0..3 {
                let line = format!("e {x} {leaf} 0\n");
                graph += &line;
                if x == 0 && l == 1 {
                    updates += &line;
                } else {
                    g0 += &line;
                }
            }
        }
    }
    let mut query = String::from("t 17 16\n");
    for v in 0..17 {
        query += &format!("v {v} {v}\n");
    }
    for v in 1..17 {
        query += &format!("e 0 {v}\n");
    }
    for (name, text) in [
        ("g.csm", &graph),
        ("g0.csm", &g0),
        ("u.csm", &updates),
        ("q.graph", &query),
    ] {
        std::fs::write(p(name), text).unwrap();
    }
    let j = last_json(&ok(&[
        "match",
        "-g",
        &p("g.csm"),
        "-q",
        &p("q.graph"),
        "--json",
        "--unique",
    ]));
    assert_eq!(
        (&j["count"], &j["overflow"], &j["unique"]),
        (&Value::Null, &Value::Bool(true), &Value::Null),
        "{j}"
    );
    let text = ok(&["match", "-g", &p("g.csm"), "-q", &p("q.graph")]);
    assert!(text.contains("overflows 64 bits"), "{text}");
    // G0: 2 · 20^16 embeddings; batches of 8, 8 and 4 joins: 8, 8 and 4 · 20^15 new ones
    let out = ok(&[
        "stream",
        "-g",
        &p("g0.csm"),
        "-q",
        &p("q.graph"),
        "-u",
        &p("u.csm"),
        "-b",
        "8",
        "--initial-count",
        "--json",
    ]);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (batches, summary) = lines.split_at(lines.len() - 1);
    assert_eq!(batches.len(), 3);
    for b in batches {
        assert_eq!(
            (&b["positive"], &b["overflow"]),
            (&Value::Null, &Value::Bool(true)),
            "{b}"
        );
        assert_eq!(b["negative"], 0, "{b}");
    }
    let s = &summary[0];
    assert_eq!(
        (&s["positive"], &s["overflow"]),
        (&Value::Null, &Value::Bool(true)),
        "{s}"
    );
    assert_eq!(
        (&s["initial_count"], &s["final_count"]),
        (&Value::Null, &Value::Null),
        "{s}"
    );
}

#[test]
fn verify_all_engines_on_a_tiny_graph() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "tiny.graph", "6", "200", "2");
    let out = ok(&[
        "verify",
        "-g",
        &g,
        "-q",
        "house:0,0,1,1,0",
        "--stream-fraction",
        "0.2",
        "--batch",
        "8",
        "--engines",
        "all",
    ]);
    assert!(out.contains("ok:"), "{out}");
    let j = last_json(&ok(&[
        "verify",
        "-g",
        &g,
        "-q",
        "triangle",
        "--stream-fraction",
        "0.2",
        "--engines",
        "all",
        "--json",
    ]));
    assert_eq!(j["ok"], true);
}

/// `--memory-budget`: stwig declines an input whose hash tables would
/// outgrow it (`csm match` names the budget, `csm verify` skips the engine),
/// geneva keeps counting within it, and a percentage is refused.
#[test]
fn memory_budget_bounds_the_materialising_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "small.graph", "7", "800", "1");
    let want = last_json(&ok(&["match", "-g", &g, "-q", "house", "--engine", "oracle", "--json"]))["count"].clone();
    assert!(want.as_u64().unwrap() > 0);
    // `csm match` of the house with `engine` under `budget`
    let house = |engine: &str, budget: &str| {
        csm(&[
            "match",
            "-g",
            &g,
            "-q",
            "house",
            "--engine",
            engine,
            "--memory-budget",
            budget,
            "--json",
        ])
    };
    let out = house("stwig", "1K");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("memory budget of 1 KiB"), "{err}");
    let count = |out: Output| {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        last_json(&String::from_utf8(out.stdout).unwrap())["count"].clone()
    };
    for e in ["stwig", "geneva"] {
        assert_eq!(count(house(e, "64M")), want, "{e}");
    }
    assert_eq!(count(house("geneva", "0")), want, "geneva at its smallest blocks");
    let j = last_json(&ok(&[
        "verify",
        "-g",
        &g,
        "-q",
        "house",
        "--stream-fraction",
        "0.1",
        "--engines",
        "cpu,stwig,geneva",
        "--memory-budget",
        "1K",
        "--json",
    ]));
    assert_eq!(j["ok"], true);
    assert!(j["skipped"]["stwig"].as_str().unwrap().contains("memory budget"), "{j}");
    let out = house("geneva", "5%");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--memory-budget"));
}

/// Every engine agrees update by update when batches hold one update (the
/// cpu engine overlaps them on two threads).
#[test]
fn verify_one_update_batches_on_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let small = gen_graph(dir.path(), "small.graph", "6", "200", "2");
    let out = ok(&[
        "verify",
        "-g",
        &small,
        "-q",
        "diamond:0,0,1,0",
        "--stream-fraction",
        "0.2",
        "--batch",
        "1",
        "-t",
        "2",
        "--engines",
        "all",
    ]);
    assert!(out.contains("ok:"), "{out}");
}

#[test]
fn malformed_graph_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.graph");
    std::fs::write(&bad, "t 3 2\nv 0 0 1\nv 1 0 2\nv 2 0 1\ne 0 1\ne 1 oops\n").unwrap();
    let out = csm(&["match", "-g", bad.to_str().unwrap(), "-q", "triangle"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!("error: {}:6:", bad.display());
    assert!(err.contains(&want), "stderr {err:?} lacks {want:?}");
    assert!(!err.contains("panicked"), "{err}");

    let out = csm(&["match", "-g", bad.to_str().unwrap(), "-q", "no-such-query"]);
    assert_eq!(out.status.code(), Some(1));
    // Usage errors exit 1 too.
    let out = csm(&["match", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(1));
}

/// An update file with lines no graph could accept (a self-loop, a short
/// line, an unknown update): strict mode names the first; `--lenient`
/// skips them, counts them as `unreadable_lines`, and matches as the
/// stream without them does; the oracle agrees through `csm verify`.
#[test]
fn lenient_streams_skip_unreadable_update_lines() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "6", "200", "2");
    let (gs, clean) = gen_stream(dir.path(), &g, "0.3", "3", "clean.txt");
    let lines: Vec<String> = std::fs::read_to_string(&clean)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let mut dirty = lines.clone();
    dirty.insert(5, "e 7 7 0".into());
    dirty.insert(20, "-e 3".into());
    dirty.insert(31, "x 1 2".into());
    let dirty_path = dir.path().join("dirty.txt");
    std::fs::write(&dirty_path, dirty.join("\n") + "\n").unwrap();
    let d = dirty_path.to_str().unwrap();

    let out = csm(&["stream", "-g", &gs, "-q", "triangle", "-u", d, "-b", "7"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{d}:6: self-loop")), "{err}");

    let run = |u: &str, lenient: bool| {
        let mut a = vec!["stream", "-g", &gs, "-q", "triangle", "-u", u, "-b", "7", "--json"];
        if lenient {
            a.push("--lenient");
        }
        last_json(&ok(&a))
    };
    let (want, got) = (run(&clean, false), run(d, true));
    assert_eq!(got["unreadable_lines"], 3, "{got}");
    assert_eq!(want["unreadable_lines"], 0, "{want}");
    assert!(
        want["positive"].as_u64().unwrap() + want["negative"].as_u64().unwrap() > 0,
        "{want}"
    );
    for k in ["positive", "negative", "updates", "skipped"] {
        assert_eq!(got[k], want[k], "{k}: {got} against {want}");
    }
    let v = last_json(&ok(&[
        "verify",
        "-g",
        &gs,
        "-q",
        "triangle",
        "-u",
        d,
        "-b",
        "7",
        "--engines",
        "cpu,oracle",
        "--lenient",
        "--json",
    ]));
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["stream"]["oracle"]["positive"], want["positive"], "{v}");
}

#[test]
fn sweep_writes_csv_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "8", "1000", "1");
    let out = dir.path().join("sweep");
    ok(&[
        "sweep",
        "-g",
        &g,
        "--queries",
        "triangle,square",
        "--batches",
        "8,32",
        "--threads",
        "1,2",
        "--stream-fraction",
        "0.05",
        "--out",
        out.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("engine,query,batch,threads,updates,positive,negative,seconds,updates_per_second"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2 * 2 * 2);
    assert!(rows.iter().all(|r| r.ends_with(",false")), "{rows:?}");
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("triangle"));

    // a time limit that every run passes at once: each row stops early
    let limited = dir.path().join("limited");
    ok(&[
        "sweep",
        "-g",
        &g,
        "--queries",
        "triangle",
        "--batches",
        "1,8",
        "--stream-fraction",
        "0.05",
        "--time-limit",
        "0.000001",
        "--out",
        limited.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(limited.join("sweep.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let updates = header.iter().position(|&h| h == "updates").unwrap();
    for row in csv.lines().skip(1) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.last(), Some(&"true"), "{row}");
        assert!(cells[updates].parse::<usize>().unwrap() < 50, "{row}");
    }
}

#[test]
fn demo_internals_on_a_tiny_graph() {
    use csm_bench::cmd::demo::{run_demo, DemoConfig};
    let cfg = DemoConfig {
        scale: 8,
        edges: 1200,
        batch: 16,
        max_query_size: 4,
        ..DemoConfig::default()
    };
    let r = run_demo(&cfg).unwrap();
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.rows.len(), 4);
    assert_eq!(r.updates, 24);
}

/// `--time-limit`: a static count that cannot finish in time reports
/// `"count": null, "timed_out": true` at the limit (status 0); a stream
/// stops between batches and its summary covers the batches it printed.
#[test]
fn time_limits_end_runs_with_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "12", "40000", "1");
    // a path of 14 vertices: about 10^20 embeddings, never counted in time
    let path = write_path_query(dir.path());
    let started = std::time::Instant::now();
    let out = ok(&[
        "match",
        "-g",
        &g,
        "-q",
        path.to_str().unwrap(),
        "--time-limit",
        "0.3",
        "--json",
    ]);
    let last = last_json(&out);
    assert_eq!(last["timed_out"], true, "{out}");
    assert!(last["count"].is_null());
    assert!(started.elapsed().as_secs_f64() < 60.0);

    let out = ok(&["match", "-g", &g, "-q", "triangle", "--time-limit", "600", "--json"]);
    assert_eq!(last_json(&out)["timed_out"], false);
    assert!(last_json(&out)["count"].as_u64().is_some());

    let out = ok(&[
        "stream",
        "-g",
        &g,
        "-q",
        "house",
        "--stream-fraction",
        "0.05",
        "-b",
        "100",
        "--time-limit",
        "0.000001",
        "--json",
    ]);
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    let (summary, batches) = lines.split_last().unwrap();
    assert_eq!(summary["timed_out"], true);
    assert_eq!(summary["batches"].as_u64().unwrap() as usize, batches.len());
    assert!(
        batches.len() < 20,
        "a 2,000-update stream in batches of 100 stopped after {}",
        batches.len()
    );
    let pos: u64 = batches.iter().map(|b| b["positive"].as_u64().unwrap()).sum();
    assert_eq!(summary["positive"].as_u64().unwrap(), pos);
}

/// `gen stream --compact-ids` on a SNAP file that skips ids writes a G0 with
/// ids 0..N-1 (as SubgraphMatching-family readers need) and a stream in the
/// same numbering: the stream's counts equal those of the uncompacted split.
#[test]
fn gen_stream_compacts_skipped_ids() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("gaps.txt");
    // Two wheels on ids spread with gaps (multiples of 7 plus 3).
    let mut text = String::from("# a SNAP file with id gaps\n");
    for base in [0u32, 100] {
        let hub = 3 + 7 * base;
        for i in 0..12u32 {
            let a = 3 + 7 * (base + 1 + i);
            let b = 3 + 7 * (base + 1 + (i + 1) % 12);
            text.push_str(&format!("{hub}\t{a}\n{a}\t{b}\n"));
        }
    }
    std::fs::write(&snap, text).unwrap();
    let snap = snap.display().to_string();
    let split = |compact: bool| {
        let g0 = dir.path().join(format!("g0-{compact}.graph")).display().to_string();
        let u = dir.path().join(format!("u-{compact}.txt")).display().to_string();
        let mut args = vec![
            "gen",
            "stream",
            "-g",
            &snap,
            "--fraction",
            "0.5",
            "--seed",
            "3",
            "-o",
            &u,
            "--initial",
            &g0,
        ];
        if compact {
            args.push("--compact-ids");
        }
        let out = csm(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let noted = String::from_utf8_lossy(&out.stderr).contains("--compact-ids");
        assert_eq!(noted, !compact, "the gap note appears only without the flag");
        let s = last_json(&ok(&[
            "stream", "-g", &g0, "-q", "diamond", "-u", &u, "--batch", "4", "--json",
        ]));
        (std::fs::read_to_string(&g0).unwrap(), s)
    };
    let (dense, s_dense) = split(true);
    let (_, s_gaps) = split(false);
    let n: usize = dense
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(n, 26);
    let mut ids: Vec<usize> = dense
        .lines()
        .filter(|l| l.starts_with("v "))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..n).collect::<Vec<_>>());
    for k in ["positive", "negative"] {
        assert_eq!(s_dense[k], s_gaps[k], "{k}");
    }
    assert!(s_dense["positive"].as_u64().unwrap() + s_dense["negative"].as_u64().unwrap() > 0);
}

/// Writes `src` with every vertex id `i` of its `v`/`e`/`-v`/`-e` lines
/// replaced by `spread(i)`.
fn respread(src: &str, dst: &Path, spread: impl Fn(u64) -> u64) {
    let text = std::fs::read_to_string(src).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let ids = match f.first() {
            Some(&("v" | "-v")) => 1..2,
            Some(&("e" | "-e")) => 1..3,
            _ => 0..0,
        };
        let f: Vec<String> = f
            .iter()
            .enumerate()
            .map(|(k, t)| {
                if ids.contains(&k) {
                    spread(t.parse().unwrap()).to_string()
                } else {
                    t.to_string()
                }
            })
            .collect();
        out += &(f.join(" ") + "\n");
    }
    std::fs::write(dst, out).unwrap();
}

/// How [`sparse_twins`] spreads the ids (up to 2·10^9).
const SPREAD: fn(u64) -> u64 = |i| i * 7_000_001 + 13;

/// In `dir`: an R-MAT graph in the csm format (`[scale, edges, graph seed,
/// stream seed]`, 2 labels), its G0 (`g0.csm`) and a 20% stream (`u.txt`)
/// with `extra` lines appended, and their twins with every id spread by
/// [`SPREAD`] (`s0.csm`, `su.txt`).
fn sparse_twins(dir: &Path, [scale, edges, seed, stream_seed]: [&str; 4], extra: &str) {
    let p = |n: &str| dir.join(n).display().to_string();
    ok(&[
        "gen",
        "graph",
        "--kind",
        "rmat",
        "--scale",
        scale,
        "--edges",
        edges,
        "--labels",
        "2",
        "--seed",
        seed,
        "--format",
        "csm",
        "-o",
        &p("g.csm"),
    ]);
    ok(&[
        "gen",
        "stream",
        "-g",
        &p("g.csm"),
        "--fraction",
        "0.2",
        "--seed",
        stream_seed,
        "-o",
        &p("u.txt"),
        "--initial",
        &p("g0.csm"),
        "--out-format",
        "csm",
    ]);
    let mut u = std::fs::read_to_string(p("u.txt")).unwrap();
    u += extra;
    std::fs::write(p("u.txt"), u).unwrap();
    respread(&p("g0.csm"), Path::new(&p("s0.csm")), SPREAD);
    respread(&p("u.txt"), Path::new(&p("su.txt")), SPREAD);
}

/// A graph and stream whose ids are spread up to 2·10^9 run as the same
/// files with dense ids do, batch by batch (the vertices are renumbered,
/// updates alike, a vertex the stream adds too); `--ids keep` refuses them by
/// name, and errors name the files' ids.
#[test]
fn sparse_ids_stream_as_the_dense_ones() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    // the stream also adds a vertex (dense id 300) and two edges on it
    sparse_twins(dir.path(), ["8", "1200", "3", "2"], "v 300 1\ne 300 0 0\ne 1 300 0\n");
    let spread = SPREAD;

    let run = |g: &str, u: &str, ids: &str| -> Vec<Value> {
        let args = [
            "stream",
            "-g",
            g,
            "-q",
            "diamond",
            "-u",
            u,
            "--batch",
            "7",
            "--json",
            "--initial-count",
            "--ids",
            ids,
        ];
        ok(&args).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let dense = run(&p("g0.csm"), &p("u.txt"), "keep");
    for ids in ["auto", "compact"] {
        let sparse = run(&p("s0.csm"), &p("su.txt"), ids);
        assert_eq!(sparse.len(), dense.len());
        for (a, b) in dense.iter().zip(&sparse) {
            for k in ["positive", "negative", "initial_count", "final_count"] {
                assert_eq!(a.get(k), b.get(k), "{k}: {a} vs {b}");
            }
        }
    }
    assert!(dense.last().unwrap()["positive"].as_u64().unwrap() > 0);

    // a failing run's stderr
    let fails = |g: &str, u: &str, batch: &str, ids: &str| -> String {
        let out = csm(&[
            "stream", "-g", g, "-q", "diamond", "-u", u, "--batch", batch, "--ids", ids,
        ]);
        assert_eq!(out.status.code(), Some(1), "--ids {ids} on {g} and {u} did not fail");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = fails(&p("s0.csm"), &p("su.txt"), "7", "keep");
    assert!(
        err.contains(&format!("{}:", p("s0.csm"))) && err.contains("too sparse"),
        "{err}"
    );

    // a deletion of a missing edge names the files' ids, as the dense run names its own
    std::fs::write(p("bad.txt"), "v 300 1\n-e 300 2 0\n").unwrap();
    let spread_bad = format!("v {} 1\n-e {} {} 0\n", spread(300), spread(300), spread(2));
    std::fs::write(p("bad_u.txt"), spread_bad).unwrap();
    let err = fails(&p("g0.csm"), &p("bad.txt"), "1", "keep");
    assert!(err.contains("bad.txt:2: edge (2, 300) does not exist"), "{err}");
    for ids in ["auto", "compact"] {
        let err = fails(&p("s0.csm"), &p("bad_u.txt"), "1", ids);
        let want = format!("bad_u.txt:2: edge ({}, {}) does not exist", spread(2), spread(300));
        assert!(err.contains(&want), "--ids {ids}: {err:?} lacks {want:?}");
    }
}

/// A batch that removes a vertex and adds it back under another label:
/// `stream` counts the triangles it closes (0-1-3, six embeddings), every
/// engine agrees under `verify`, and a strict run names an invalid line
/// of such a batch.
#[test]
fn batches_that_relabel_a_vertex_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let g = write(
        "g.txt",
        "v 0 0\nv 1 0\nv 2 0\nv 3 1\ne 0 1 0\ne 0 2 0\ne 1 2 0\ne 2 3 0\n",
    );
    let q = write("q.txt", "v 0 0\nv 1 0\nv 2 0\ne 0 1 0\ne 0 2 0\ne 1 2 0\n");
    let u = write("u.txt", "-v 3 1\nv 3 0\ne 3 0 0\ne 3 1 0\ne 3 2 0\n-e 2 3 0\n");
    let summary = last_json(&ok(&[
        "stream",
        "--graph",
        &g,
        "--query",
        &q,
        "--updates",
        &u,
        "--batch",
        "6",
        "--json",
    ]));
    assert_eq!(
        (summary["positive"].as_u64(), summary["negative"].as_u64()),
        (Some(6), Some(0))
    );
    ok(&[
        "verify",
        "--graph",
        &g,
        "--query",
        &q,
        "--updates",
        &u,
        "--batch",
        "6",
        "--engines",
        "all",
    ]);
    let bad = write("bad.txt", "-v 3 1\nv 3 0\ne 3 0 0\n-e 3 1 0\n");
    let out = csm(&[
        "stream",
        "--graph",
        &g,
        "--query",
        &q,
        "--updates",
        &bad,
        "--batch",
        "4",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("bad.txt:4"), "{err}");
}

/// `--list`: `csm stream` writes one line per embedding that appears (`+`)
/// or vanishes (`-`), as many per batch as the batch's JSON line counts,
/// and `csm match` one per embedding, as many as the count; on files whose
/// ids are spread up to 2·10^9 (renumbered inside) the lines name the
/// files' ids: the dense files' lines with every id spread. A stream listed
/// on three threads gives one thread's lines, its batches in order.
#[test]
fn list_writes_each_embedding_in_the_files_ids() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    // vertices the stream adds, with a triangle through them
    sparse_twins(
        dir.path(),
        ["7", "600", "4", "3"],
        "v 200 0\ne 200 0 0\ne 1 200 0\nv 201 0\ne 201 0 0\ne 200 201 0\n",
    );
    let spread = SPREAD;
    let lines = |path: &str| -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.starts_with("# "), "a header line");
        text.lines()
            .skip(1)
            .map(|l| l.split(' ').map(str::to_string).collect())
            .collect()
    };
    let spread_line = |l: &[String], from: usize| -> Vec<String> {
        let mut l = l.to_vec();
        for x in &mut l[from..] {
            *x = spread(x.parse().unwrap()).to_string();
        }
        l
    };
    let q = "triangle";
    // stream
    let run_on = |threads: &str, g: &str, u: &str, out: &str| -> Vec<Value> {
        let args = [
            "stream", "-g", g, "-q", q, "-u", u, "--batch", "9", "-t", threads, "--json", "--list", out,
        ];
        ok(&args).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    // (three threads: a batch's lines in no fixed order, batches in order)
    let run = |g: &str, u: &str, out: &str| run_on("3", g, u, out);
    let dense = run(&p("g0.csm"), &p("u.txt"), &p("dense.txt"));
    let sparse = run(&p("s0.csm"), &p("su.txt"), &p("sparse.txt"));
    let summary = dense.last().unwrap();
    assert_eq!(summary["engine"], "list");
    let listed = lines(&p("dense.txt"));
    assert!(summary["positive"].as_u64().unwrap() > 0 && summary["negative"].as_u64().unwrap() > 0);
    assert_eq!(summary["listed"].as_u64().unwrap(), listed.len() as u64);
    for b in &dense[..dense.len() - 1] {
        let i = b["batch"].as_u64().unwrap().to_string();
        for (sign, key) in [("+", "positive"), ("-", "negative")] {
            let n = listed.iter().filter(|l| l[0] == i && l[1] == sign).count();
            assert_eq!(n as u64, b[key].as_u64().unwrap(), "batch {i} {key}");
        }
    }
    // the same counts as the cpu engine
    let cpu: Vec<Value> = ok(&[
        "stream",
        "-g",
        &p("g0.csm"),
        "-q",
        q,
        "-u",
        &p("u.txt"),
        "--batch",
        "9",
        "--json",
    ])
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    assert_eq!(cpu.last().unwrap()["positive"], summary["positive"]);
    assert_eq!(cpu.last().unwrap()["negative"], summary["negative"]);
    let sorted = |mut v: Vec<Vec<String>>| {
        v.sort();
        v
    };
    let batch_of = |l: &[String]| l[0].parse::<u64>().unwrap();
    assert!(
        listed.windows(2).all(|w| batch_of(&w[0]) <= batch_of(&w[1])),
        "batches in order"
    );
    let want: Vec<Vec<String>> = listed.iter().map(|l| spread_line(l, 2)).collect();
    assert_eq!(sorted(lines(&p("sparse.txt"))), sorted(want));
    assert_eq!(sparse.last().unwrap()["listed"], summary["listed"]);
    // one thread: the same lines
    run_on("1", &p("g0.csm"), &p("u.txt"), &p("dense1.txt"));
    assert_eq!(sorted(lines(&p("dense1.txt"))), sorted(listed.clone()));
    // match
    let count = |g: &str, out: &str| last_json(&ok(&["match", "-g", g, "-q", q, "--json", "--list", out]));
    let m = count(&p("g0.csm"), &p("mdense.txt"));
    count(&p("s0.csm"), &p("msparse.txt"));
    // (on several threads the lines come in no fixed order)
    let all = sorted(lines(&p("mdense.txt")));
    assert_eq!(m["count"].as_u64().unwrap(), all.len() as u64);
    assert!(!all.is_empty());
    let cpu = last_json(&ok(&["match", "-g", &p("g0.csm"), "-q", q, "--json"]));
    assert_eq!(cpu["count"], m["count"]);
    let want = sorted(all.iter().map(|l| spread_line(l, 0)).collect());
    assert_eq!(sorted(lines(&p("msparse.txt"))), want);
    // one thread: the same lines
    ok(&["match", "-g", &p("g0.csm"), "-q", q, "-t", "1", "--list", &p("m1.txt")]);
    assert_eq!(sorted(lines(&p("m1.txt"))), all);
    // capped: the first N of them
    let capped = last_json(&ok(&[
        "match",
        "-g",
        &p("g0.csm"),
        "-q",
        q,
        "--json",
        "--list",
        &p("m5.txt"),
        "--limit",
        "5",
    ]));
    assert_eq!(
        (capped["count"].as_u64(), capped["limit_reached"].as_bool()),
        (Some(5), Some(true))
    );
    let five = lines(&p("m5.txt"));
    assert!(five.len() == 5 && five.iter().all(|l| all.contains(l)), "{five:?}");
    // refused combinations
    for bad in [
        vec!["match", "-g", &p("g0.csm"), "-q", q, "--json", "--list", "-"],
        vec!["match", "-g", &p("g0.csm"), "-q", q, "-e", "vf2", "--list", "x"],
    ] {
        assert_eq!(csm(&bad).status.code(), Some(1), "{bad:?}");
    }
}

/// A reader that stops early (`csm … | head`) ends `csm` quietly, by
/// SIGPIPE as it ends `cat`, not with a panic and a backtrace on stderr:
/// a generated graph written to stdout, of which one line is read.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(CSM)
        .args([
            "gen", "graph", "--kind", "rmat", "--scale", "16", "--edges", "400000", "-o", "-",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("t "), "{first}");
    // (the reader is dropped here: the pipe closes)
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    // (SIGPIPE is 13 on every Unix)
    assert_eq!(out.status.signal(), Some(13), "{:?}: {err}", out.status);
}

/// `--gpu-kernel`: a bad setting is reported, naming it, on any machine
/// (it is parsed before the device is opened); a good one reaches the
/// device check (here forced off with `CSM_GPU_DISABLE`), whose error says
/// the GPU is unavailable.
#[test]
fn gpu_kernel_settings_are_checked_before_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "8", "1000", "2");
    let run = |settings: &str| {
        csm_without_gpu(&[
            "match",
            "-g",
            &g,
            "-q",
            "triangle",
            "--engine",
            "gpu",
            "--gpu-kernel",
            settings,
        ])
    };
    for (bad, says) in [
        ("bogus=1", "unknown key"),
        ("lockstep=maybe", "expected 0, 1"),
        ("defer-min", "KEY=VALUE"),
    ] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(bad) && err.contains(says), "{bad}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = run("lockstep=0,defer-drained=0");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("GPU engines are unavailable"), "{err}");
    assert!(!err.contains("kernel setting"), "{err}");
}

/// `verify --engines cpu,gpu` builds the GPU engine from the same options
/// as `stream --engine gpu`, and checks them and the device before the
/// graph is read: without a device (`CSM_GPU_DISABLE`) it fails with that
/// error, whatever the graph.
#[test]
fn verify_takes_the_gpu_engine() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "8", "1000", "2");
    let (g0, s) = gen_stream(dir.path(), &g, "0.1", "3", "s.stream");
    let run = |graph: &str, engines: &str, extra: &[&str]| {
        let mut args = triangle_batches_of_7("verify", graph, &s);
        args.extend_from_slice(&["--engines", engines]);
        args.extend_from_slice(extra);
        let out = csm_without_gpu(&args);
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, err) = run(&g0, "cpu,gpu", &["--variant", "gcsm-persist"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("GPU engines are unavailable"), "{err}");
    let missing = dir.path().join("missing.graph");
    let (code, err) = run(missing.to_str().unwrap(), "cpu,gpu", &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("GPU engines are unavailable"),
        "checked after the graph: {err}"
    );
    for (extra, says) in [
        (&["--variant", "bogus"][..], "unknown GPU variant"),
        (&["--gpu-kernel", "bogus=1"][..], "unknown key"),
        (&["--budget", "150%"][..], "--budget"),
    ] {
        let (code, err) = run(&g0, "gpu,cpu", extra);
        assert_eq!(code, Some(1), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    let (code, err) = run(&g0, "cpu,gpux", &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("unknown engine 'gpux'") && err.contains(", gpu"), "{err}");
    // without `gpu` the GPU options are not looked at
    let (code, err) = run(&g0, "cpu,oracle", &["--variant", "bogus"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn gpu_flags_are_checked_before_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let g = gen_graph(dir.path(), "g.graph", "8", "1000", "2");
    let (g0, s) = gen_stream(dir.path(), &g, "0.1", "3", "s.stream");
    let run = |flag: &str, value: &str| {
        let setting = format!("{flag}={value}");
        let mut args = triangle_batches_of_7("stream", &g0, &s);
        args.extend_from_slice(&["--engine", "gpu", "--variant", "gcsm-persist", &setting]);
        csm_without_gpu(&args)
    };
    for (flag, bad, good) in [
        ("--gpu-light-on-cpu", ["0", "-1", "nan"], "1"),
        ("--gpu-resident-fill", ["0", "1.5", "nan"], "0.9"),
        ("--budget", ["0", "150%", "lots"], "all"),
        ("--gpu-overlap-from", ["-1", "lots", "2k"], "never"),
    ] {
        for bad in bad {
            let out = run(flag, bad);
            assert_eq!(out.status.code(), Some(1), "{flag} {bad}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(flag), "{bad}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
        let out = run(flag, good);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("GPU engines are unavailable"), "{flag} {good}: {err}");
    }
}
