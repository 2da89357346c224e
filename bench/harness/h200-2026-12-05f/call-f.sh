#!/usr/bin/env bash
# Call F (2026-12-05, night): the correct and time stages share one runner process (check_then_time), and the
# runner keeps each stage's limit itself. Most telling first, each within a limit, about 5 minutes in all: the
# six references of ../h200-2026-12-05e/call2.sh, one at a time, for their stage times and the runner's steps;
# the runner's GPU tests (tests/gpu/runner/run.sh, with the new mode's three cases: both parts, a failed check
# not timed, a hung call killed at the check's own limit); what cuda-gdb says of a hung kernel (gdb_probe.sh,
# for issue 34's debugging feedback).
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
timeout -s INT 150 ptxbench run --solutions solutions --only 'reference/*' \
  --tasks 'gemm-bf16-n4096-k4096-sm90a,attention-fwd-d64-sm90a,attention-bwd-d64-sm90a' > "$OUT/references.txt" 2>&1
echo "== references, one at a time: exit $? in $((SECONDS - start)) s"; tail -9 "$OUT/references.txt" | cut -c1-200
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
cat "$OUT/stage-times.txt"
start=$SECONDS
PTXBENCH_RUNNER=$PWD/.device/bin/ptxbench-runner timeout 120 bash tests/gpu/runner/run.sh "$OUT/runner-logs" \
  > "$OUT/runner-tests.txt" 2>&1
echo "== runner GPU tests: exit $? in $((SECONDS - start)) s"
sed -n '/^== summary/,$p' "$OUT/runner-tests.txt" | grep -v "^PASS" | head -20
grep -E "^(PASS|FAIL)  .*(check_then_time)" "$OUT/runner-tests.txt" | cut -c1-250
start=$SECONDS
PATH=$PWD/.device/bin:$PATH timeout 50 bash bench/harness/h200-2026-12-05f/gdb_probe.sh "$OUT/gdb-probe" 2>&1 | cut -c1-200
echo "== gdb probe: $((SECONDS - start)) s"
