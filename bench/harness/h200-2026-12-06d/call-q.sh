#!/usr/bin/env bash
# Call Q (2026-12-06, fifth session): the decode reference with call P's two findings merged (tensor-map copies
# for pages of 64, decode_tma_page.cu's path; two producer warps for the per-row copies): its share of the read
# bandwidth in decode_probe.cu (O checked), then the reference through the judge on every decode task, every
# stage, four evaluations sharing the GPU.
source bench/harness/h200-2026-12-05/env.sh
step() { echo "== $1: exit $2 at $SECONDS s"; }
here=bench/harness/h200-2026-12-06c
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -lineinfo -I include -I kits/common/ptx -I kits/hopper/ptx \
  -DSOLUTION="\"$PWD/solutions/reference/attention_decode_paged_sm90a.cu\"" -DVARIANT='"shipped"' \
  -o /tmp/decode_shipped "$here/decode_probe.cu" > "$OUT/decode-nvcc.log" 2>&1
step nvcc $?
for hq in 64 32; do for page in 64 1; do timeout 60 /tmp/decode_shipped $hq $page; done; done 2>&1 | tee "$OUT/decode-probe.txt" | cut -c1-220
timeout -s INT 300 ptxbench run --solutions solutions --gpu-share 4 --only 'reference/attention_decode*' \
  --tasks 'attention-decode-*-sm90a' > "$OUT/decode-tasks.txt" 2>&1
step "decode tasks" $?; grep -E "evaluations in run|as expected|speedup|bandwidth|roofline" "$OUT/decode-tasks.txt" | cut -c1-240 | tail -20
python3 bench/harness/stage_times.py "$PTXBENCH_DATA/ptxbench.db" > "$OUT/stage-times.txt" 2>&1; tail -8 "$OUT/stage-times.txt"
