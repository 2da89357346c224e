#!/usr/bin/env bash
# Call W (prepared 2026-12-06, sixth session; issue 32): the first GPU run of the time stage's sampled checks
# (dense attention), the backward's inputs from a forward with P in bf16, the baseline process opened while the
# check runs, and the timed calls that stop once both medians are settled. In order, while END (seconds after
# the call's start; default 570) allows:
#   1. the attention reference's GPU test (tests/gpu/attention/run.sh: the sampled forward and backward against
#      float64, their marks, and the reference's times at the main shapes, sampled and whole);
#   2. the runner's GPU tests (tests/gpu/runner/run.sh);
#   3. the corpus's attention entries (rows_skipped_when_timed.cu and slow_warmup_then_rows_skipped.cu must
#      fail at time, on their samples);
#   4. every stage's time with the GPU to one evaluation (--gpu-share 1), the three references on the tasks of
#      ../h200-2026-12-06d/call-p.sh, to set beside that call's (the GPU stages of a59661b);
#   5. the 5-run spreads of the attention references on those tasks (bench/time-stage/spread.sh).
source bench/harness/h200-2026-12-05/env.sh
end=${END:-570}
step() { echo "== $1: exit $2 at $SECONDS s"; }
timeout 150 bash tests/gpu/attention/run.sh /tmp/gpu-attention > "$OUT/attention-reference.txt" 2>&1
step "attention reference test" $?; grep -E "FAIL|^time|failure" "$OUT/attention-reference.txt" | cut -c1-200
timeout 200 bash tests/gpu/runner/run.sh > "$OUT/runner-tests.txt" 2>&1
step "runner tests" $?; tail -3 "$OUT/runner-tests.txt"
timeout 150 ptxbench run --solutions tests/adversarial --tasks attention-fwd-d64-sm90a,attention-bwd-d64-sm90a \
  --stage-time-limit 60 --gpu-share 2 > "$OUT/corpus-attention.txt" 2>&1
step "corpus on attention" $?; grep -E "as expected|evaluations in run" "$OUT/corpus-attention.txt" | cut -c1-250
gemm='gemm-bf16-n4096-k4096-sm90a gemm-bf16-n7168-k5120-sm90a gemm-bf16-n4096-k14336-sm90a'
fwd='attention-fwd-d64-sm90a attention-fwd-d128-sm90a attention-fwd-d128-causal-sm90a'
bwd='attention-bwd-d64-sm90a attention-bwd-d128-sm90a attention-bwd-d64-causal-sm90a'
left=$((end - SECONDS - 150))
if ((left > 60)); then
  timeout -s INT $left ptxbench run --solutions solutions --gpu-share 1 --only 'reference/*.cu' \
    --tasks "$(echo $gemm $fwd $bwd | tr ' ' ,)" > "$OUT/alone.txt" 2>&1
  step "stages alone" $?; grep -E "evaluations in run|as expected: no" "$OUT/alone.txt" | cut -c1-200
fi
spread() {  # spread SOLUTION TASK...: skipped when fewer than 60 s are left
  ((end - SECONDS > 60)) || { echo "== spread $1: not started at $SECONDS s"; return; }
  OUT=$OUT/spread timeout $((end - SECONDS - 20)) bash bench/time-stage/spread.sh 5 "$@" 2>&1 | tee -a "$OUT/spread.txt"
  step "spread $1" "${PIPESTATUS[0]}"
}
spread solutions/reference/attention_backward_sm90a.cu $bwd
spread solutions/reference/attention_forward_sm90a.cu $fwd
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
tail -8 "$OUT/stage-times.txt"
