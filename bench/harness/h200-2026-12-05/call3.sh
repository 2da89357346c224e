#!/usr/bin/env bash
# Call 3: the adversarial corpus with its expected verdicts (issue 29's rerun), on the GEMM task with four
# evaluations sharing the GPU, then its entries of the attention backward task.
source bench/harness/h200-2026-12-05/env.sh
start=$SECONDS
timeout -s INT 440 ptxbench run --solutions tests/adversarial --tasks gemm-bf16-n4096-k4096-sm90a \
  --stage-time-limit 30 --gpu-share 4 > "$OUT/corpus-gemm.txt" 2>&1
echo "== corpus on GEMM: exit $? in $((SECONDS - start)) s"; tail -30 "$OUT/corpus-gemm.txt"
start=$SECONDS
timeout -s INT $((575 - SECONDS)) ptxbench run --solutions tests/adversarial --tasks attention-bwd-d64-sm90a \
  --stage-time-limit 60 --gpu-share 4 > "$OUT/corpus-attention.txt" 2>&1
echo "== corpus on attention: exit $? in $((SECONDS - start)) s"; tail -12 "$OUT/corpus-attention.txt"
