#!/usr/bin/env bash
# scripts/gpu.sh — build csm's GPU test binaries here, run them on the device
# machine (one H100 or H200, CUDA 13 driver + toolkit, no Rust toolchain, no network).
#
#   scripts/gpu.sh            Build in release (x86-64), copy the executables
#                             into carry/bin/ (git-ignored), and print the
#                             arguments of the `run` tool call to make.
#   scripts/gpu.sh --remote   What that call executes ON the device machine:
#                             nvidia-smi, every carried test binary
#                             (--test-threads=1 --nocapture), a CPU-fallback
#                             check, compute-sanitizer on the smoke and
#                             matching tests, `csm stream --engine gpu` (and
#                             `csm verify --engines cpu,gpu`)
#                             against the CPU engine (counts per batch,
#                             --budget all and default), then csm-gpu-bench.
#                             Logs go to $OUT (at most 8 files come back):
#                             gpu_sh.log, sanitizer.log, bench.csv,
#                             bench.json, bench.md (+ probe.md/probe.json);
#                             plot a bench here with
#                             `csm-gpu-bench --plot-from DIR/bench.csv`.
#
#   Remote options: --probe (also run csm-gpu-probe), --no-bench,
#   --no-sanitizer, --no-tests (skip the test binaries, e.g. a bench-only
#   call). Environment: BENCH_ARGS (arguments of csm-gpu-bench),
#   BENCH_TIMEOUT (seconds, default 420); with BENCH2_ARGS (and
#   BENCH2_TIMEOUT) a second bench runs and the two write to $OUT/a, $OUT/b.
#
# Kernels are compiled on the device by NVRTC from sources embedded in the
# binaries, so nothing but carry/bin is needed there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CARRY_BIN="carry/bin"

die() {
    echo "gpu.sh: $*" >&2
    exit 1
}

# ---------------------------------------------------------------------------
# Local mode: build and stage.
# ---------------------------------------------------------------------------
build_local() {
    command -v cargo >/dev/null || die "cargo not found"
    command -v jq >/dev/null || die "jq not found (needed to read cargo's JSON messages)"
    if [[ "$(uname -m)" != "x86_64" ]]; then
        die "this machine is $(uname -m); the device machine is x86-64: build there is impossible (no Rust), so build on an x86-64 host"
    fi

    # The kernels are compiled for real only on the device (NVRTC): parse
    # them here first, so that a typo does not cost a device call.
    if command -v "${CXX:-g++}" >/dev/null; then
        echo "== checking kernels/*.cu on the host (scripts/check-kernels.sh)"
        bash "$ROOT/scripts/check-kernels.sh"
    else
        echo "== no host C++ compiler: kernels not checked before the device call"
    fi

    rm -rf "$CARRY_BIN"
    mkdir -p "$CARRY_BIN"

    echo "== building csm-gpu (release)"
    cargo build --release -p csm-gpu --bins
    cp target/release/csm-gpu-probe target/release/csm-gpu-bench "$CARRY_BIN/"

    echo "== building csm-gpu test executables (release)"
    local json exes
    json="$(cargo test -p csm-gpu --release --no-run --message-format=json)"
    # One line per test executable: "<target name>\t<kind>\t<path>".
    exes="$(jq -r 'select(.reason == "compiler-artifact" and .profile.test == true
                          and .executable != null)
                   | [.target.name, .target.kind[0], .executable] | @tsv' <<<"$json")"
    [[ -n "$exes" ]] || die "cargo reported no test executables"
    while IFS=$'\t' read -r name kind path; do
        cp "$path" "$CARRY_BIN/test-${kind}-${name}"
        echo "   staged $CARRY_BIN/test-${kind}-${name}"
    done <<<"$exes"

    # The csm CLI of csm-bench, if that crate defines it (it may not exist yet).
    local has_csm
    has_csm="$(cargo metadata --no-deps --format-version 1 2>/dev/null |
        jq -r '[.packages[] | select(.name == "csm-bench") | .targets[]
                | select(.name == "csm" and (.kind | index("bin")))] | length' 2>/dev/null || echo 0)"
    if [[ "$has_csm" =~ ^[1-9] ]]; then
        echo "== building csm-bench --bin csm (release)"
        if cargo build --release -p csm-bench --bin csm; then
            cp target/release/csm "$CARRY_BIN/"
        else
            echo "   WARNING: csm-bench failed to build; not staged" >&2
        fi
    else
        echo "== csm-bench has no 'csm' binary yet: skipped"
    fi

    # Debug info makes release binaries large; the tree that travels is
    # limited to 64 MiB. Keep symbols, drop DWARF.
    if command -v strip >/dev/null; then
        strip --strip-debug "$CARRY_BIN"/* 2>/dev/null || true
    fi
    echo "== staged:"
    ls -l "$CARRY_BIN"
    local kib
    kib="$(du -sk carry | cut -f1)"
    echo "   carry/ = ${kib} KiB"
    ((kib < 60 * 1024)) || die "carry/ is over 60 MiB; the device call would be refused"

    cat <<'EOF'

== device call (the `run` tool), one call:
   command:   BENCH_ARGS="--edges 500M" BENCH_TIMEOUT=420 bash scripts/gpu.sh --remote
   carry:     ["carry"]
   timeout_s: 600
   kind:      nvidia-h200 (the default; any one-GPU kind)
EOF
}

# ---------------------------------------------------------------------------
# Remote mode: runs on the device machine.
# ---------------------------------------------------------------------------

# Puts the directory holding libnvrtc.so.13 (and libnvrtc-builtins) on
# LD_LIBRARY_PATH; cudarc dlopens it by name.
find_nvrtc() {
    local d
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
        /usr/local/cuda-13*/lib64 /usr/lib/x86_64-linux-gnu; do
        if compgen -G "$d/libnvrtc.so*" >/dev/null; then
            echo "$d"
            return 0
        fi
    done
    local f
    f="$(find /usr/local /opt /usr/lib -name 'libnvrtc.so.1[0-9]*' 2>/dev/null | head -n1 || true)"
    if [[ -n "$f" ]]; then
        dirname "$f"
        return 0
    fi
    return 1
}

# Makes sure libcuda.so.1 (the driver) can be dlopened; the driver folder is
# usually already in the loader's cache.
find_libcuda() {
    if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
        echo "cache"
        return 0
    fi
    local d f
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
        if [[ -e "$d/libcuda.so.1" ]]; then
            echo "$d"
            return 0
        fi
    done
    f="$(find /usr /opt -name 'libcuda.so.1' 2>/dev/null | head -n1 || true)"
    if [[ -n "$f" ]]; then
        dirname "$f"
    fi
    return 0
}

run_remote() {
    local out="$1"
    shift
    local probe=0 bench=1 sanitizer=1 tests=1 a
    for a in "$@"; do
        case "$a" in
        --probe) probe=1 ;;
        --no-bench) bench=0 ;;
        --no-sanitizer) sanitizer=0 ;;
        --no-tests) tests=0 ;;
        *) die "unknown remote option '$a'" ;;
        esac
    done
    local failures=0 t0=$SECONDS

    echo "== gpu.sh --remote on $(hostname) at $(date -u +%FT%TZ)"
    {
        nvidia-smi || echo "nvidia-smi failed"
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max --format=csv || true
        nvidia-smi topo -m || true
        uname -a
        nproc
        free -g || true
        (nvcc --version || true) | tail -n 2
    } 2>&1

    local cuda_dir nvrtc_dir
    cuda_dir="$(find_libcuda)"
    case "$cuda_dir" in
    cache) echo "== libcuda.so.1 is in the loader cache" ;;
    "") echo "== WARNING: libcuda.so.1 not found (no driver?)" ;;
    *)
        export LD_LIBRARY_PATH="$cuda_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        echo "== libcuda.so.1 from $cuda_dir"
        ;;
    esac
    if nvrtc_dir="$(find_nvrtc)"; then
        export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        echo "== NVRTC from $nvrtc_dir: $(cd "$nvrtc_dir" && ls libnvrtc.so* libnvrtc-builtins.so* 2>/dev/null | tr '\n' ' ')"
    else
        echo "== WARNING: libnvrtc.so not found; kernels will fail to compile"
    fi

    [[ -d "$CARRY_BIN" ]] || die "$CARRY_BIN missing: call the run tool with carry [\"carry\"]"
    chmod +x "$CARRY_BIN"/* || true
    ls -l "$CARRY_BIN"

    local b name rc t
    if ((tests)); then
    for b in "$CARRY_BIN"/test-*; do
        name="$(basename "$b")"
        echo
        echo "== $name"
        set +e
        timeout 300 "$b" --test-threads=1 --nocapture 2>&1 | grep -v '^$'
        rc=${PIPESTATUS[0]}
        set -e
        echo "== $name exit $rc"
        ((rc == 0)) || failures=$((failures + 1))
    done

    # The CPU fallback path on a GPU machine: with CSM_GPU_DISABLE=1 every GPU
    # test must print SKIPPED and pass.
    for t in gpu_smoke gpu_match; do
        if compgen -G "$CARRY_BIN/test-test-$t" >/dev/null; then
            echo
            echo "== $t with CSM_GPU_DISABLE=1 (expect SKIPPED)"
            set +e
            CSM_GPU_DISABLE=1 timeout 60 "$CARRY_BIN/test-test-$t" --test-threads=1 --nocapture 2>&1 |
                grep -E "SKIPPED|test result" | sort | uniq -c
            rc=${PIPESTATUS[0]}
            set -e
            ((rc == 0)) || failures=$((failures + 1))
        fi
    done
    fi

    # Memory checking of the kernels on small inputs.
    if ((sanitizer)) && command -v compute-sanitizer >/dev/null; then
        echo
        echo "== compute-sanitizer memcheck (intersection, pinned round trip, matching kernel)"
        : >"$out/sanitizer.log"
        set +e
        if compgen -G "$CARRY_BIN/test-test-gpu_smoke" >/dev/null; then
            timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
                "$CARRY_BIN/test-test-gpu_smoke" --test-threads=1 \
                intersection_counts_match_cpu_reference pinned_buffer_device_pointer_round_trip \
                >>"$out/sanitizer.log" 2>&1
            rc=$?
            echo "   gpu_smoke under memcheck: exit $rc"
            ((rc == 0)) || failures=$((failures + 1))
        fi
        if compgen -G "$CARRY_BIN/test-test-gpu_match" >/dev/null; then
            timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
                "$CARRY_BIN/test-test-gpu_match" --test-threads=1 \
                vertices_added_mid_stream_match_cpu edge_labelled_graphs_match_cpu \
                windowed_membership_matches_cpu \
                >>"$out/sanitizer.log" 2>&1
            rc=$?
            echo "   gpu_match under memcheck: exit $rc"
            ((rc == 0)) || failures=$((failures + 1))
            # Heavy-node deferral (match v5), on its own (several launches
            # per batch; the full deferral test is too slow under memcheck).
            timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
                "$CARRY_BIN/test-test-gpu_match" --test-threads=1 deferral_small_case_matches_cpu \
                >>"$out/sanitizer.log" 2>&1
            rc=$?
            echo "   gpu_match deferral under memcheck: exit $rc"
            ((rc == 0)) || failures=$((failures + 1))
            # The resident cache (match v7): refreshes over many batches.
            timeout 180 compute-sanitizer --tool memcheck --error-exitcode 9 \
                "$CARRY_BIN/test-test-gpu_match" --test-threads=1 resident_cache_matches_cpu_over_many_batches \
                >>"$out/sanitizer.log" 2>&1
            rc=$?
            echo "   gpu_match resident cache under memcheck: exit $rc"
            ((rc == 0)) || failures=$((failures + 1))
        fi
        set -e
        grep -E "ERROR SUMMARY|test result" "$out/sanitizer.log" || true
    fi

    if ((probe)); then
        echo
        echo "== csm-gpu-probe (bandwidth + intersection tables)"
        set +e
        timeout 200 "$CARRY_BIN/csm-gpu-probe" --json "$out/probe.json" >"$out/probe.md" 2>&1
        rc=$?
        set -e
        tail -n 30 "$out/probe.md"
        echo "== csm-gpu-probe exit $rc"
        ((rc == 0)) || failures=$((failures + 1))
    fi

    if [[ -x "$CARRY_BIN/csm" ]]; then
        echo
        echo "== csm CLI: $("$CARRY_BIN/csm" --version 2>&1 | head -n1 || true)"
        # `csm stream --engine gpu` (the CLI path, GpuEngine) against the
        # CPU engine on a generated graph: per-batch counts must be equal,
        # with the whole graph cached (--budget all) and with the default.
        local c="$CARRY_BIN/csm" w q v ref got
        c="$(cd "$(dirname "$c")" && pwd)/csm"
        w="$(mktemp -d)"
        set +e
        "$c" gen graph --scale 15 --edges 200000 --labels 4 -o "$w/g.graph" >/dev/null 2>&1 &&
            "$c" gen stream -g "$w/g.graph" --count 3000 -o "$w/s.stream" --initial "$w/g0.graph" >/dev/null 2>&1
        rc=$?
        ((rc == 0)) || { echo "   csm gen failed: exit $rc"; failures=$((failures + 1)); }
        # Batches of 2,048 run the resident refresh or mask beside the seeds
        # and split (match v20, from 2,048 updates).
        local bs vs
        for q in house 5-cycle; do
            for bs in 500 2048; do
                ((rc == 0)) || break
                ref="$(timeout 60 "$c" stream -g "$w/g0.graph" -u "$w/s.stream" -q $q -b $bs --engine cpu --json 2>&1 |
                    grep -o '"\(positive\|negative\)":[0-9]*' | paste -sd' ')"
                vs=("gcsm-persist --budget all" "gcsm-persist" "zp")
                ((bs == 500)) || vs=("gcsm-persist --budget all" "gcsm-persist")
                for v in "${vs[@]}"; do
                    # shellcheck disable=SC2086
                    got="$(timeout 60 "$c" stream -g "$w/g0.graph" -u "$w/s.stream" -q $q -b $bs --engine gpu \
                        --variant $v --json 2>&1 | grep -o '"\(positive\|negative\)":[0-9]*' | paste -sd' ')"
                    if [[ -n "$ref" && "$got" == "$ref" ]]; then
                        echo "   csm stream $q -b $bs --variant $v: counts equal to the CPU engine's"
                    else
                        echo "   csm stream $q -b $bs --variant $v: MISMATCH (cpu: ${ref:0:80} / gpu: ${got:0:80})"
                        failures=$((failures + 1))
                    fi
                done
            done
        done
        # `csm verify --engines cpu,gpu`: the same comparison through verify
        # (static count, then batch by batch, then the final recount).
        if ((rc == 0)); then
            if timeout 120 "$c" verify -g "$w/g0.graph" -u "$w/s.stream" -q house -b 500 --engines cpu,gpu \
                --variant gcsm-persist >"$w/verify.log" 2>&1; then
                echo "   csm verify house -b 500 --engines cpu,gpu --variant gcsm-persist: $(tail -n1 "$w/verify.log")"
            else
                echo "   csm verify house -b 500 --engines cpu,gpu --variant gcsm-persist: FAILED"
                tail -n 5 "$w/verify.log" | sed 's/^/      /'
                failures=$((failures + 1))
            fi
        fi
        set -e
        rm -rf "$w"
    fi

    if ((bench)) && [[ -x "$CARRY_BIN/csm-gpu-bench" ]]; then
        local dir_a="$out" k
        if [[ -n "${BENCH2_ARGS:-}" ]]; then
            dir_a="$out/a"
        fi
        for k in 1 2; do
            local args bt dir
            if ((k == 1)); then
                args="${BENCH_ARGS:-}" bt="${BENCH_TIMEOUT:-420}" dir="$dir_a"
            else
                [[ -n "${BENCH2_ARGS:-}" ]] || break
                args="$BENCH2_ARGS" bt="${BENCH2_TIMEOUT:-300}" dir="$out/b"
            fi
            mkdir -p "$dir"
            echo
            echo "== csm-gpu-bench $args (timeout ${bt} s, $((SECONDS - t0)) s used so far, out $dir)"
            set +e
            # --no-plot: at most 8 files come back from the device; draw
            # bench.svg here with `csm-gpu-bench --plot-from DIR/bench.csv`
            # shellcheck disable=SC2086
            timeout "$bt" "$CARRY_BIN/csm-gpu-bench" --no-plot --out "$dir" $args 2>&1
            rc=$?
            set -e
            echo "== csm-gpu-bench exit $rc"
            ((rc == 0)) || failures=$((failures + 1))
        done
    fi

    echo
    echo "== done in $((SECONDS - t0)) s, $failures failing step(s)"
    ((failures == 0))
}

case "${1:-}" in
"") build_local ;;
--remote)
    shift
    OUT_DIR="${OUT:-$ROOT/out}"
    mkdir -p "$OUT_DIR"
    set +e
    run_remote "$OUT_DIR" "$@" 2>&1 | tee "$OUT_DIR/gpu_sh.log"
    status=${PIPESTATUS[0]}
    exit "$status"
    ;;
-h | --help) sed -n '2,24p' "$0" ;;
*) die "unknown argument '$1' (use --remote, --help, or nothing)" ;;
esac
