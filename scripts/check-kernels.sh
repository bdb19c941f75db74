#!/usr/bin/env bash
# scripts/check-kernels.sh — host-side checks of kernels/*.cu, no GPU needed.
#
#   1. Parses every kernel (and match.cu's 16- and 32-vertex builds) with the
#      host C++ compiler against scripts/kernel-stubs.h: syntax and type
#      errors show here instead of in NVRTC on the device.
#   2. Compiles match.cu's lockstep lower bound (match v13,
#      lower_bounds_lockstep) as plain C++ and compares it with a linear
#      scan on random sorted lists with deletion marks, empty and short
#      ranges and inactive lanes.
#
# Needs g++ (or CXX). Exit status non-zero on the first failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CXX="${CXX:-g++}"
command -v "$CXX" >/dev/null || { echo "check-kernels.sh: $CXX not found" >&2; exit 1; }
STUBS="$ROOT/scripts/kernel-stubs.h"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

for f in "$ROOT"/kernels/*.cu; do
    echo "== parse $(basename "$f")"
    "$CXX" -std=c++17 -fsyntax-only -x c++ -include "$STUBS" -Wall -Wno-unknown-pragmas -Wno-unused "$f"
done
for defs in "-DMAXQ=16" "-DMAXQ=32 -DMAXR=15 -DWARPS=1"; do
    echo "== parse match.cu with $defs"
    # shellcheck disable=SC2086
    "$CXX" -std=c++17 -fsyntax-only -x c++ -include "$STUBS" -Wall -Wno-unknown-pragmas -Wno-unused $defs \
        "$ROOT/kernels/match.cu"
done

echo "== lower_bounds_lockstep against a linear scan"
python3 - "$ROOT/kernels/match.cu" "$TMP/lb.inc" <<'PY'
import sys
src = open(sys.argv[1]).read()
a = src.index("__device__ __forceinline__ u32 lower_bounds_lockstep")
b = src.index("\n}\n", a) + 3
open(sys.argv[2], "w").write(src[a:b])
PY
cat > "$TMP/lb.cpp" <<'CPP'
#include <cstdio>
#include <random>
#include <vector>
typedef unsigned int u32;
typedef unsigned long long u64;
#define UNR 4
#define MARK 0x80000000u
#define __device__
#define __forceinline__ inline
#include "lb.inc"
int main() {
    std::mt19937 r(1);
    long bad = 0, n = 0;
    for (int t = 0; t < 200000; t++) {
        int len = r() % 70;
        std::vector<u32> v;
        u32 x = 0;
        for (int i = 0; i < len; i++) {
            x += 1 + r() % 3;
            v.push_back(x | ((r() % 4 == 0) ? MARK : 0));
        }
        u32 lo = len ? r() % (len + 1) : 0;
        u32 hi = lo + ((len - lo) ? r() % (len - lo + 1) : 0);
        u32 xs[UNR], idx[UNR];
        bool act[UNR];
        for (int j = 0; j < UNR; j++) {
            xs[j] = r() % (x + 5);
            act[j] = r() % 4 != 0;
        }
        lower_bounds_lockstep(v.data(), lo, hi, xs, act, idx);
        for (int j = 0; j < UNR; j++) {
            if (!act[j]) continue;
            u32 e = lo;
            while (e < hi && (v[e] & ~MARK) < xs[j]) e++;
            n++;
            if (e != idx[j] && bad++ < 5)
                std::printf("len %d [%u, %u) x %u: got %u, want %u\n", len, lo, hi, xs[j], idx[j], e);
        }
    }
    std::printf("%ld searches, %ld wrong\n", n, bad);
    return bad != 0;
}
CPP
"$CXX" -std=c++17 -O2 -Wno-unknown-pragmas -I"$TMP" "$TMP/lb.cpp" -o "$TMP/lb"
"$TMP/lb"
echo "== kernels OK"
