#!/usr/bin/env bash
# Call P (2026-12-06, fifth session), in place of ../h200-2026-12-06c/call-o.sh's plan: its probes, then issue 32's
# figures at the GPU stages of ef4d5d0, before any change they may lead to, and no manifest part (a change to the
# time stage would make them owed again):
#   1. decode_probe.sh's variants (no profile: call M has it) and placement_probe.cu (call O's);
#   2. the 5-run spreads: each reference evaluated 5 times in separate processes on three tasks of its family
#      (bench/time-stage/spread.sh, the correct and time stages);
#   3. every stage's time with the GPU to one evaluation at a time (--gpu-share 1), the three references on the
#      same tasks, while END (seconds after the call's start; default 570) allows.
source bench/harness/h200-2026-12-05/env.sh
end=${END:-570}
step() { echo "== $1: exit $2 at $SECONDS s"; }
NCU=0 timeout 200 bash bench/harness/h200-2026-12-06c/decode_probe.sh > "$OUT/decode-probe.txt" 2>&1
step "decode probe" $?; cut -c1-260 "$OUT/decode-probe.txt"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -I include -I kits/common/ptx -I kits/hopper/ptx \
  -o /tmp/placement_probe bench/time-stage/placement_probe.cu > "$OUT/placement-nvcc.log" 2>&1 &&
  timeout 60 /tmp/placement_probe > "$OUT/placement.txt" 2>&1
step "placement probe" $?; cat "$OUT/placement.txt"
gemm='gemm-bf16-n4096-k4096-sm90a gemm-bf16-n7168-k5120-sm90a gemm-bf16-n4096-k14336-sm90a'
fwd='attention-fwd-d64-sm90a attention-fwd-d128-sm90a attention-fwd-d128-causal-sm90a'
bwd='attention-bwd-d64-sm90a attention-bwd-d128-sm90a attention-bwd-d64-causal-sm90a'
spread() {  # spread SOLUTION TASK...: skipped when fewer than 100 s are left
  ((end - SECONDS > 100)) || { echo "== spread $1: not started at $SECONDS s"; return; }
  OUT=$OUT/spread timeout $((end - SECONDS - 60)) bash bench/time-stage/spread.sh 5 "$@" 2>&1 | tee -a "$OUT/spread.txt"
  step "spread $1" "${PIPESTATUS[0]}"
}
spread solutions/reference/gemm_bf16_sm90a.cu $gemm
spread solutions/reference/attention_forward_sm90a.cu $fwd
spread solutions/reference/attention_backward_sm90a.cu $bwd
left=$((end - SECONDS))
if ((left > 40)); then
  timeout -s INT $left ptxbench run --solutions solutions --gpu-share 1 --only 'reference/*.cu' \
    --tasks "$(echo $gemm $fwd $bwd | tr ' ' ,)" > "$OUT/alone.txt" 2>&1
  step "stages alone" $?; grep -E "evaluations in run|as expected: no" "$OUT/alone.txt" | cut -c1-200
fi
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1
cat "$OUT/stage-times.txt"
