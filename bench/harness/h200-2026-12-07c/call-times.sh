#!/usr/bin/env bash
# Issue 32 (prepared 2026-12-07, twelfth session): where a reference's evaluation spends its seconds, with the
# binaries of main at 6e2df2c or later, bundled beside the shipped record's (`bench/harness/bundle.sh
# .device/head`; `.device/bin` stays the record's until it is whole). Their time stage reports `loop_s` (the
# timed loop's seconds by step) and their instructions stage the runner's `phases_s` under Nsight Compute. In
# order, while END (seconds after the call's start; default 500) allows:
#   1. the runner's GPU tests (tests/gpu/runner/run.sh; correct.check_then_time's new expectation, loop_s);
#   2. the references alone (--gpu-share 1) on call W's 9 tasks, with their stage times and steps.
source bench/harness/h200-2026-12-05/env.sh
export PATH=$PWD/.device/head/bin:$PATH LD_LIBRARY_PATH=$PWD/.device/head/lib
export PTXBENCH_RUNNER=.device/head/bin/ptxbench-runner PTXBENCH_DATA=/tmp/h/head
mkdir -p "$PTXBENCH_DATA"
end=${END:-500}
step() { echo "== $1: exit $2 at $SECONDS s"; }
timeout 200 bash tests/gpu/runner/run.sh > "$OUT/runner-tests.txt" 2>&1
step "runner tests" $?; grep -E "^FAIL|summary" "$OUT/runner-tests.txt" | cut -c1-300
gemm='gemm-bf16-n4096-k4096-sm90a gemm-bf16-n7168-k5120-sm90a gemm-bf16-n4096-k14336-sm90a'
fwd='attention-fwd-d64-sm90a attention-fwd-d128-sm90a attention-fwd-d128-causal-sm90a'
bwd='attention-bwd-d64-sm90a attention-bwd-d128-sm90a attention-bwd-d64-causal-sm90a'
left=$((end - SECONDS - 20))
if ((left > 60)); then
  timeout -s INT $left ptxbench run --solutions solutions --gpu-share 1 --only 'reference/*.cu' \
    --tasks "$(echo $gemm $fwd $bwd | tr ' ' ,)" > "$OUT/alone.txt" 2>&1
  step "stages alone" $?; grep -E "evaluations in run|as expected: no" "$OUT/alone.txt" | cut -c1-200
fi
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
grep -E "steps|time:" "$OUT/stage-times.txt" | cut -c1-400 | tail -30
