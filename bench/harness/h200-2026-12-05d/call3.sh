#!/usr/bin/env bash
# Call 3 (2026-12-05, evening): the cuDNN baseline replayed from a CUDA graph (baselines/attention_cudnn.py):
# the probe again, the attention spreads again, then the attention references on every task they serve.
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 in $3 s"; }
start=$SECONDS
timeout 60 python3 bench/time-stage/baseline_probe.py forward 64 40 > "$OUT/probe-forward.txt" 2>&1
timeout 60 python3 bench/time-stage/baseline_probe.py backward 64 30 > "$OUT/probe-backward.txt" 2>&1
step "baseline probe" $? $((SECONDS - start)); grep -hv "^    \|warn" "$OUT/probe-forward.txt" "$OUT/probe-backward.txt" | cut -c1-160
start=$SECONDS
for pair in attention_forward_sm90a.cu:attention-fwd-d64-sm90a attention_forward_sm90a.cu:attention-fwd-d128-causal-sm90a \
  attention_backward_sm90a.cu:attention-bwd-d64-sm90a attention_backward_sm90a.cu:attention-bwd-d64-causal-sm90a; do
  OUT=$OUT/spread timeout -s INT 70 bench/time-stage/spread.sh 5 solutions/reference/${pair%%:*} ${pair#*:}
done | tee "$OUT/spread-attention.txt"
step "attention spreads" $? $((SECONDS - start))
start=$SECONDS
timeout -s INT $((580 - SECONDS)) ptxbench run --solutions solutions --only 'reference/attention_*_sm90a.cu' \
  --tasks 'attention-fwd-*-sm90a,attention-bwd-*-sm90a' --gpu-share 4 > "$OUT/attention-references.txt" 2>&1
step "attention references" $? $((SECONDS - start)); tail -28 "$OUT/attention-references.txt" | cut -c1-220
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
