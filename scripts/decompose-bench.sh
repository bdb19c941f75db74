#!/usr/bin/env bash
# scripts/decompose-bench.sh — batches as one Eq. (1) batch against batches
# decomposed into single-edge updates (the cpu engine's default for queries
# with automorphisms; CSM_DECOMPOSE=0 forces Eq. (1)), side by side, over
# thread counts, on the device machine's 16-core host (no GPU use).
#
#   scripts/decompose-bench.sh           Build `csm` in release, strip it
#                                        into carry-cpu/bin with
#                                        email-Enron, print the run call.
#   scripts/decompose-bench.sh --remote  On the device: email-Enron with 8
#                                        labels (10% stream, batches of
#                                        4096), unlabelled (2% stream,
#                                        batches of 1024), and a generated
#                                        2 M-edge R-MAT with 16 labels (10%
#                                        stream, batches of 4096); one line
#                                        per run in $OUT/decompose.csv.
#
# Environment (remote): THREADS (default "1 2 4 8 16"), ROUNDS (default 2),
# TIMEOUT (seconds per run, default 60).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CARRY=carry-cpu
ENRON="${ENRON:-../shared/data/email-Enron.txt}"

if [[ "${1:-}" != "--remote" ]]; then
    cd "$HERE/.."
    cargo build --release -p csm-bench --bin csm
    rm -rf "$CARRY" && mkdir -p "$CARRY/bin" "$CARRY/data"
    cp target/release/csm "$CARRY/bin/"
    strip "$CARRY"/bin/*
    cp scripts/decompose-bench.sh "$CARRY/bin/"
    cp "$ENRON" "$CARRY/data/email-Enron.txt"
    du -sh "$CARRY"
    echo 'now: run(command="bash carry-cpu/bin/decompose-bench.sh --remote", carry=["carry-cpu"])'
    exit 0
fi

C="$CARRY/bin/csm"
E="$CARRY/data/email-Enron.txt"
OUT="${OUT:-out}"
mkdir -p "$OUT"
CSV="$OUT/decompose.csv"
THREADS="${THREADS:-1 2 4 8 16}"
ROUNDS="${ROUNDS:-2}"
TIMEOUT="${TIMEOUT:-60}"
echo "workload,query,threads,mode,round,seconds,update_seconds,positive,negative,timed_out" >"$CSV"

# one run: WORKLOAD QUERY THREADS MODE ROUND -- csm stream arguments
run() {
    local w="$1" q="$2" t="$3" m="$4" r="$5"
    shift 5
    local env=()
    [[ "$m" == "eq1" ]] && env=(CSM_DECOMPOSE=0)
    local line
    line="$(env "${env[@]}" timeout "$TIMEOUT" "$C" stream "$@" -q "$q" -t "$t" --time-limit "$TIMEOUT" --json | tail -n 1 || true)"
    python3 - "$w" "$q" "$t" "$m" "$r" "$line" >>"$CSV" <<'EOF'
import json, sys
w, q, t, m, r, line = sys.argv[1:7]
try:
    d = json.loads(line)
    print(f"{w},\"{q}\",{t},{m},{r},{d['seconds']:.6f},{d['update_seconds']:.6f},{d['positive']},{d['negative']},{d.get('timed_out', False)}")
except Exception:
    print(f"{w},\"{q}\",{t},{m},{r},,,,,error")
EOF
    tail -n 1 "$CSV"
}

echo "== generating the 2 M-edge R-MAT"
"$C" gen graph --kind rmat --scale 18 --edges 2000000 --labels 16 --seed 1 --format graph -o "$OUT/r2m.g" >/dev/null
for r in $(seq 1 "$ROUNDS"); do
    for t in $THREADS; do
        for m in eq1 default; do
            for q in triangle 4-cycle diamond house 5-cycle; do
                run enron8 "$q" "$t" "$m" "$r" -g "$E" --labels 8 --label-seed 1 --stream-fraction 0.1 --seed 1 -b 4096
            done
            for q in 4-cycle diamond 4-clique house; do
                run enron "$q" "$t" "$m" "$r" -g "$E" --stream-fraction 0.02 --seed 1 -b 1024
            done
            for q in 5-cycle:0,0,0,0,0 4-cycle:0,0,0,0 house:0,0,0,0,0 house:0,1,2,3,4; do
                run r2m "$q" "$t" "$m" "$r" -g "$OUT/r2m.g" --stream-fraction 0.1 --seed 1 -b 4096
            done
        done
    done
done
rm -f "$OUT/r2m.g"
echo "== done: $CSV"
