#!/usr/bin/env bash
# Call 1 (2026-12-05, evening): Blackwell's static records (issue 33), the corpus's attention entry (issue 29),
# and the 5-run spreads of the time stage on GEMM and attention forward (issue 32).
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 in $3 s"; }
start=$SECONDS
tests/kit/sass_inventory.sh --all "$OUT/kit-sm100a" > "$OUT/kit-sass-all.txt" 2>&1
tests/kit/sass_inventory.sh > "$OUT/kit-sass.txt" 2>&1
step "kit SASS inventory" $? $((SECONDS - start)); cat "$OUT/kit-sass.txt"
rm -f "$OUT/kit-sm100a/blackwell_wrappers.cubin"
start=$SECONDS
nvcc -gencode arch=compute_100a,code=sm_100a -std=c++20 -O3 -I include -I kits/common/ptx -I kits/blackwell/ptx \
  -cubin -o /tmp/gemm_sm100a.cubin solutions/reference/gemm_bf16_sm100a.cu &&
  cuobjdump -sass /tmp/gemm_sm100a.cubin > "$OUT/gemm_bf16_sm100a.sass.gz"
step "reference sm_100a GEMM's SASS" $? $((SECONDS - start))
grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T]+\s+)?[A-Z][A-Z0-9_]*' "$OUT/gemm_bf16_sm100a.sass.gz" |
  awk '{print $NF}' | sort | uniq -c | sort -rn | head -40
start=$SECONDS
timeout -s INT 120 python3 bench/blackwell/triton_sm100a.py /tmp/triton-sm100a > "$OUT/triton-sm100a.txt" 2>&1
step "Triton references for sm_100a" $? $((SECONDS - start)); cut -c1-400 "$OUT/triton-sm100a.txt"
mkdir -p "$OUT/triton-sm100a" && cp /tmp/triton-sm100a/*.sass "$OUT/triton-sm100a/" 2>/dev/null
start=$SECONDS
timeout -s INT 150 ptxbench run --solutions tests/adversarial --tasks attention-bwd-d64-sm90a \
  --stage-time-limit 60 > "$OUT/corpus-attention.txt" 2>&1
step "corpus on attention" $? $((SECONDS - start)); tail -8 "$OUT/corpus-attention.txt"
export OUT_SPREAD=$OUT/spread
start=$SECONDS
OUT=$OUT_SPREAD timeout -s INT 120 bench/time-stage/spread.sh 5 solutions/reference/gemm_bf16_sm90a.cu \
  gemm-bf16-n4096-k4096-sm90a gemm-bf16-n7168-k5120-sm90a gemm-bf16-n4096-k14336-sm90a | tee "$OUT/spread-gemm.txt"
step "GEMM spreads" $? $((SECONDS - start))
start=$SECONDS
OUT=$OUT_SPREAD timeout -s INT $((580 - SECONDS)) bench/time-stage/spread.sh 5 \
  solutions/reference/attention_forward_sm90a.cu attention-fwd-d64-sm90a attention-fwd-d128-sm90a \
  attention-fwd-d128-causal-sm90a | tee "$OUT/spread-forward.txt"
step "forward spreads" $? $((SECONDS - start))
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
