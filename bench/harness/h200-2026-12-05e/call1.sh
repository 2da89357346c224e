#!/usr/bin/env bash
# Call 1 (2026-12-05, late): where a Python process of the judge spends its time, in and out of the sandbox
# (bench/time-stage/python_probe.sh), and the stage times of one evaluation of each reference, one at a time.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
PATH=$PWD/.device/bin:$PATH bash bench/time-stage/python_probe.sh > "$OUT/python-probe.txt" 2>&1
echo "== python probe: $((SECONDS - start)) s"; cat "$OUT/python-probe.txt" | cut -c1-250
start=$SECONDS
timeout -s INT 240 ptxbench run --solutions solutions --only 'reference/*' \
  --tasks 'gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a,attention-bwd-d64-sm90a' > "$OUT/references.txt" 2>&1
echo "== references, one at a time: exit $? in $((SECONDS - start)) s"; tail -8 "$OUT/references.txt" | cut -c1-200
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
cat "$OUT/stage-times.txt"
