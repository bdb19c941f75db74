#!/bin/bash
# Edges kept apart (EdgesApart) against --whole-graph, side by side, for the
# GPU variants and the 16-thread CPU engine, through `csm stream` on a
# generated R-MAT (run on the device from the repository root, after
# `bash scripts/gpu.sh` built carry/):
#   run(command="bash scripts/edges-apart.sh", carry=["carry"])
# Settings: SCALE, EDGES (graph), N (stream updates, batches of 8192), QS
# (queries), ES (engines: gpu:VARIANT or cpu), T (CPU threads), TMPD.
R=$PWD; C=$R/carry/bin/csm; export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cd ${TMPD:-/tmp} && $C gen graph --kind rmat --scale ${SCALE:-21} --edges ${EDGES:-20000000} --labels 8 --seed 1 --format graph -o r.g > /dev/null 2>&1; ls -la r.g
for q in ${QS:-house:0,1,2,3,4 5-cycle:0,1,2,3,4 triangle:0,1,2}; do for e in ${ES:-"gpu:zp" "gpu:gcsm-persist" "cpu"}; do for w in "" "--whole-graph"; do
  case $e in gpu:*) a="-e gpu --variant ${e#gpu:}";; *) a="-e cpu -t ${T:-16}";; esac
  echo "$q | $e $w | $($C stream -g r.g -q $q --stream-count ${N:-40960} --seed 1 -b 8192 $a $w --time-limit 60 --json 2>&1 | tail -1 | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print(d['positive'], d['negative'], 'init', round(d['init_seconds'],2), 'match', round(d['seconds'],3), 'upd', round(d['update_seconds'],3))" 2>&1 | tail -1)"
done; done; done
