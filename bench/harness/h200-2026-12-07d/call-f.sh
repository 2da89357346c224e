#!/usr/bin/env bash
# Owed item 20's first step (prepared 2026-12-07, thirteenth session), with main's binaries bundled in .device
# (bench/harness/bundle.sh), about 4 minutes:
#   1. the runner's GPU tests (correct.check_then_time checks setup_s's steps and placement's alignment);
#   2. the 9 references alone, their stage times with setup_s (where the backward's second before its timed
#      loop goes);
#   3. the causal backward reference 10 times, each run's time beside where its buffers lay (placement).
source bench/harness/h200-2026-12-05/env.sh
timeout 200 bash tests/gpu/runner/run.sh > "$OUT/runner-tests.txt" 2>&1
echo "== runner tests: exit $? at $SECONDS s"; grep -E "^FAIL|summary" "$OUT/runner-tests.txt" | cut -c1-300
gemm='gemm-bf16-n4096-k4096-sm90a gemm-bf16-n7168-k5120-sm90a gemm-bf16-n4096-k14336-sm90a'
fwd='attention-fwd-d64-sm90a attention-fwd-d128-sm90a attention-fwd-d128-causal-sm90a'
bwd='attention-bwd-d64-sm90a attention-bwd-d128-sm90a attention-bwd-d64-causal-sm90a'
timeout -s INT 200 ptxbench run --solutions solutions --gpu-share 1 --only 'reference/*.cu' \
  --tasks "$(echo $gemm $fwd $bwd | tr ' ' ,)" > "$OUT/alone.txt" 2>&1
echo "== stages alone: exit $? at $SECONDS s"; grep -E "evaluations in run|as expected: no" "$OUT/alone.txt" | cut -c1-200
run=$(sed -n 's/^run \([0-9]*\)[ :].*/\1/p' "$OUT/alone.txt" | head -1)
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" --run "$run" > "$OUT/stage-times-alone.txt" 2>&1
grep -E "time:|gpu stages" "$OUT/stage-times-alone.txt" | sed 's/.*checked_calls/checked_calls/' | cut -c1-300
(OUT=$OUT/spread timeout 180 bash bench/time-stage/spread.sh 10 solutions/reference/attention_backward_sm90a.cu \
  attention-bwd-d64-causal-sm90a)
