#!/usr/bin/env bash
# Owed call C (README.md, item 5), two device calls: after the attention baseline's calls were queued behind a spin
# (2026-12-05), the 5-run spreads of both CUDA attention references on three tasks each, with the 2 ms spin
# (`call-c.sh spreads`, about 7 minutes), and the attention references on every task they serve
# (`call-c.sh references`, up to 9 minutes). gpu.txt says which GPU gave each: compare within one kind.
source bench/harness/h200-2026-12-05/env.sh
case ${1:-} in
  spreads)
    for pair in attention_forward_sm90a.cu:attention-fwd-d64-sm90a attention_forward_sm90a.cu:attention-fwd-d128-sm90a \
      attention_forward_sm90a.cu:attention-fwd-d128-causal-sm90a attention_backward_sm90a.cu:attention-bwd-d64-sm90a \
      attention_backward_sm90a.cu:attention-bwd-d128-sm90a attention_backward_sm90a.cu:attention-bwd-d64-causal-sm90a; do
      OUT=$OUT/spread timeout -s INT 85 bench/time-stage/spread.sh 5 solutions/reference/${pair%%:*} ${pair#*:}
    done | tee "$OUT/spread-attention.txt"
    ;;
  references)
    start=$SECONDS
    timeout -s INT 540 ptxbench run --solutions solutions --only 'reference/attention_*' \
      --tasks 'attention-fwd-*-sm90a,attention-bwd-*-sm90a' --gpu-share 4 > "$OUT/attention-references.txt" 2>&1
    echo "== attention references: exit $? in $((SECONDS - start)) s"; tail -14 "$OUT/attention-references.txt" | cut -c1-200
    ;;
  *) echo "usage: call-c.sh spreads|references"; exit 2 ;;
esac
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
