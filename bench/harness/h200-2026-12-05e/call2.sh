#!/usr/bin/env bash
# Call 2 (2026-12-05, late): the judge's Python processes read bytecode the judge wrote once (-X pycache_prefix)
# and a Triton solution's stages share one kernel cache. The same six references as call 1, one at a time, for
# their stage times; then the sandboxed half of the Python probe.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
timeout -s INT 300 ptxbench run --solutions solutions --only 'reference/*' \
  --tasks 'gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a,attention-bwd-d64-sm90a' > "$OUT/references.txt" 2>&1
echo "== references, one at a time: exit $? in $((SECONDS - start)) s"; tail -9 "$OUT/references.txt" | cut -c1-200
ls -la "$PTXBENCH_DATA/cache/python"/* | head; du -sh "$PTXBENCH_DATA/cache/python"
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
cat "$OUT/stage-times.txt"
start=$SECONDS
PATH=$PWD/.device/bin:$PATH timeout 150 bash bench/time-stage/python_probe.sh sandbox > "$OUT/python-probe.txt" 2>&1
echo "== python probe (sandbox): $((SECONDS - start)) s"; grep -v "^nproc\|^CPU\|^Model\|^Thread\|^Core\|^Socket" "$OUT/python-probe.txt" | cut -c1-250
