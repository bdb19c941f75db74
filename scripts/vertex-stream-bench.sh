#!/bin/bash
# Batches with vertex updates, decomposed (the default) against Eq. (1)
# (CSM_DECOMPOSE=0), side by side on one stream: a generated R-MAT's mixed
# stream with, after every tenth update, a new vertex and 4 edges to
# existing vertices. Prints each run's wall time and counts (equal across
# the two ways). docs/ENGINE.md, "Batches decomposed", has the figures.
#   bash scripts/vertex-stream-bench.sh        (builds csm in release first)
# Settings: SCALE, EDGES (graph), FRACTION (stream), B (batch size), T
# (threads), QS (queries), ROUNDS, TMPD.
set -euo pipefail
R=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release -q -p csm-bench --bin csm --manifest-path "$R/Cargo.toml"
C=$R/target/release/csm
D=${TMPD:-$(mktemp -d)}
cd "$D"
SCALE=${SCALE:-15}
$C gen graph --kind rmat --scale "$SCALE" --edges "${EDGES:-200000}" --labels 4 --seed 3 -o g.graph > /dev/null
$C gen stream -g g.graph --fraction "${FRACTION:-0.1}" --seed 4 -o s.stream --initial g0.graph > /dev/null
# after every tenth update: `v NEW LABEL` and 4 edges from it (new ids past 2^SCALE)
awk -v n=$((1 << SCALE)) 'BEGIN { srand(7); next_id = n }
  NF { print; if ((k++) % 10 == 0) { v = next_id++; print "v", v, int(rand() * 4)
       split("", used); for (j = 0; j < 4; j++) { do { w = int(rand() * n) } while (w in used)
       used[w] = 1; print "e", v, w, 0 } } }' s.stream > sv.stream
echo "stream: $(wc -l < sv.stream) updates ($(grep -c '^v' sv.stream) vertex additions), batches of ${B:-1024}, ${T:-2} threads, in $D"
for r in $(seq "${ROUNDS:-2}"); do
  for q in ${QS:-house 5-cycle}; do
    for d in 0 1; do
      way=$([ "$d" = 0 ] && echo "Eq. (1)   " || echo "decomposed")
      s=$(date +%s.%N)
      out=$(CSM_DECOMPOSE=$d $C stream -g g0.graph -u sv.stream -q "$q" -b "${B:-1024}" --threads "${T:-2}" 2>&1 | grep -E '^(positive|negative|error)' | tr -s ' ' | tr '\n' ' ' || true)
      e=$(date +%s.%N)
      printf 'round %s %-8s %s %6.2f s  %s\n' "$r" "$q" "$way" "$(echo "$e - $s" | bc)" "$out"
    done
  done
done
