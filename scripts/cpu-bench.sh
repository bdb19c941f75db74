#!/usr/bin/env bash
# scripts/cpu-bench.sh — the CPU engine's README benchmarks in one call on
# the device machine's 16-core host (no Rust toolchain there).
#
#   scripts/cpu-bench.sh           Build `csm` and the delta_probe example in
#                                  release, strip them into carry-cpu/bin
#                                  (git-ignored) with email-Enron, and print
#                                  the `run` tool call to make.
#   scripts/cpu-bench.sh --remote  What that call runs on the device: thread
#                                  scaling of (1) one update at a time on
#                                  Enron, (2) batches of 4096 on Enron with 8
#                                  labels (and those batches' graph updates
#                                  alone, staging_probe), (3) batches of
#                                  4096 and 65536 on a 2 M-edge R-MAT with
#                                  16 labels (matching and graph updates
#                                  per thread count), (4) static
#                                  matching on a 10 M-edge
#                                  R-MAT; writes $OUT/cpu_bench.log and
#                                  $OUT/cpu_bench.csv.
#
# Environment (remote): THREADS (default "1 2 4 8 16"), RMAT (path of the
# generated static graph), STATIC_THREADS, STATIC_QUERIES (name:labels ...)
# (default "1 16"), STATIC_TIMEOUT (seconds per static run, default 60),
# SKIP_SINGLE=1, SKIP_2CORE=1, SKIP_STAGING=1, SKIP_BATCH=1, SKIP_BIG_BATCH=1,
# SKIP_STATIC=1; BIG_QUERIES (name:labels ...) for the 2 M-edge R-MAT batches.
# To compare two builds side by side in one call, carry the other build's
# bin/ (with this script) as carry-cpu/bin-old and run it too with
# OUT=$OUT/old (scripts/cpu-bench.sh --with-old DIR stages it).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CARRY=carry-cpu
ENRON="${ENRON:-../shared/data/email-Enron.txt}"

if [[ "${1:-}" == "--with-old" ]]; then
    # stage another build's binaries (a directory with csm and delta_probe)
    OLD_DIR="${2:?usage: cpu-bench.sh --with-old DIR}"
    cd "$HERE/.."
    rm -rf "$CARRY/bin-old" && mkdir -p "$CARRY/bin-old"
    cp "$OLD_DIR/csm" "$OLD_DIR/delta_probe" "$CARRY/bin-old/"
    [[ -x "$OLD_DIR/staging_probe" ]] && cp "$OLD_DIR/staging_probe" "$CARRY/bin-old/"
    strip "$CARRY"/bin-old/*
    cp scripts/cpu-bench.sh "$CARRY/bin-old/"
    du -sh "$CARRY"
    exit 0
fi

if [[ "${1:-}" != "--remote" ]]; then
    cd "$HERE/.."
    cargo build --release -p csm-bench --bin csm
    cargo build --release -p csm-baselines --example delta_probe
    cargo build --release -p csm-graph --example staging_probe
    rm -rf "$CARRY" && mkdir -p "$CARRY/bin" "$CARRY/data"
    cp target/release/csm target/release/examples/delta_probe target/release/examples/staging_probe "$CARRY/bin/"
    strip "$CARRY"/bin/*
    cp scripts/cpu-bench.sh "$CARRY/bin/"
    cp "$ENRON" "$CARRY/data/email-Enron.txt"
    du -sh "$CARRY"
    echo 'now: run(command="bash carry-cpu/bin/cpu-bench.sh --remote", carry=["carry-cpu"])'
    exit 0
fi

OUT="${OUT:-out}"
mkdir -p "$OUT"
# remote: this script runs from the carried folder's bin/
BIN="$HERE"
G="$HERE/../data/email-Enron.txt"
THREADS="${THREADS:-1 2 4 8 16}"
LOG="$OUT/cpu_bench.log"
CSV="$OUT/cpu_bench.csv"
echo "workload,query,threads,seconds,results" >"$CSV"
exec > >(tee -a "$LOG") 2>&1
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread\(s\)|Core\(s\)|Socket\(s\)|NUMA node\(s\)" || true

[[ -z "${SKIP_SINGLE:-}" ]] && echo "== one update at a time: Enron unlabelled, 2% stream, seed 1"
[[ -z "${SKIP_SINGLE:-}" ]] && for t in $THREADS; do
    "$BIN/delta_probe" "$G" "$t" triangle 4-clique 4-cycle diamond house | tee /dev/stderr |
        awk -v t="$t" '$1 ~ /:$/ {q=$1; sub(":","",q); m=$0; sub(/.*match /,"",m); sub(/s .*/,"",m); print "single," q "," t "," m "," $3}' >>"$CSV"
done

[[ -z "${SKIP_2CORE:-}" ]] && echo "== the same on two cores only (taskset -c 0,1), like the 2-core reference machine"
# "2-seq": two threads, one process call per update (CSM_NO_OVERLAP=1), for
# the overlapped runs' side-by-side figure; interleaved so noise hits all.
[[ -z "${SKIP_2CORE:-}" ]] && for rep in 1 2 3; do
    for mode in 1 2 2-seq; do
        t="${mode%-seq}"
        seq=""
        [[ "$mode" == *-seq ]] && seq=1
        CSM_NO_OVERLAP="$seq" taskset -c 0,1 "$BIN/delta_probe" "$G" "$t" triangle 4-clique 4-cycle diamond house | tee /dev/stderr |
            awk -v t="$mode" '$1 ~ /:$/ {q=$1; sub(":","",q); m=$0; sub(/.*match /,"",m); sub(/s .*/,"",m); print "single-2core," q "," t "," m "," $3}' >>"$CSV"
    done
done

if [[ -z "${SKIP_STAGING:-}" && -x "$BIN/staging_probe" ]]; then
    echo "== graph updates alone (check, stage, commit; one thread): Enron, 10% stream, batches of 4096"
    "$BIN/staging_probe" "$G" 4096
fi

[[ -z "${SKIP_BATCH:-}" ]] && echo "== batches of 4096: Enron, 8 labels, 10% stream"
[[ -z "${SKIP_BATCH:-}" ]] && for q in triangle 4-clique 4-cycle diamond house 5-cycle; do
    for t in $THREADS; do
        line=$("$BIN/csm" stream -g "$G" --labels 8 --label-seed 1 -q "$q" --stream-fraction 0.1 --seed 1 -b 4096 -t "$t" --order gcsm --json | tail -1)
        echo "$q t=$t $line"
        secs=$(sed -E 's/.*"seconds":([0-9.e-]+).*/\1/' <<<"$line")
        res="$(sed -E 's/.*"positive":([0-9]+).*/\1/' <<<"$line")+$(sed -E 's/.*"negative":([0-9]+).*/\1/' <<<"$line")"
        echo "batch4096,$q,$t,$secs,$res" >>"$CSV"
    done
done

if [[ -z "${SKIP_BIG_BATCH:-}" ]]; then
    echo "== batches on a 2 M-edge R-MAT (2^18 vertices, 16 labels), 10% stream: matching and graph updates"
    R2="$OUT/../rmat2m.g"
    [[ -f "$R2" ]] || "$BIN/csm" gen graph --kind rmat --scale 18 --edges 2000000 --labels 16 --seed 1 --format graph -o "$R2"
    [[ -x "$BIN/staging_probe" ]] && for t in $THREADS; do
        "$BIN/staging_probe" "$R2" 4096 0.1 "$t" | sed -n 1p
        "$BIN/staging_probe" "$R2" 65536 0.1 "$t" | sed -n 1p
    done
    for q in ${BIG_QUERIES:-house:0,1,2,3,4 5-cycle:0,1,0,1,2}; do
        for b in 4096 65536; do
            for t in $THREADS; do
                line=$("$BIN/csm" stream -g "$R2" -q "$q" --stream-fraction 0.1 --seed 1 -b "$b" -t "$t" --json | tail -1)
                secs=$(sed -E 's/.*"seconds":([0-9.e-]+).*/\1/' <<<"$line")
                upd=$(sed -E 's/.*"update_seconds":([0-9.e-]+).*/\1/' <<<"$line")
                echo "${q%%:*} b=$b t=$t matching $secs s, graph updates $upd s"
                echo "bigbatch$b,${q%%:*},$t,$secs,$upd" >>"$CSV"
            done
        done
    done
fi

if [[ -z "${SKIP_STATIC:-}" ]]; then
    echo "== static: R-MAT 2^20 vertices, 10 M edges, 16 labels"
    R="${RMAT:-$OUT/../rmat10m.g}"
    [[ -f "$R" ]] || "$BIN/csm" gen graph --kind rmat --scale 20 --edges 10000000 --labels 16 --seed 1 --format graph -o "$R"
    for q in ${STATIC_QUERIES:-triangle:0,1,2 4-cycle:0,1,0,1 diamond:0,1,0,1 4-clique:0,1,2,3 house:0,1,2,3,4 5-cycle:0,1,0,1,2}; do
        for t in ${STATIC_THREADS:-1 16}; do
            line=$(timeout "${STATIC_TIMEOUT:-60}" "$BIN/csm" match -g "$R" -q "$q" -t "$t" --order gcsm --json | tail -1 || echo '{"timeout":true}')
            echo "$q t=$t $line"
            secs=$(sed -nE 's/.*"seconds":([0-9.e-]+).*/\1/p' <<<"$line")
            cnt=$(sed -nE 's/.*"count":([0-9]+).*/\1/p' <<<"$line")
            echo "static,${q%%:*},$t,${secs:-timeout},${cnt:-}" >>"$CSV"
        done
    done
fi
echo "== done"
