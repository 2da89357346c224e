#!/usr/bin/env bash
# Call O (prepared 2026-12-06, fourth session, for the next): decode_probe.sh with its new variants (two
# producer warps; the copies as two large copies a tile; pages of 64 by tensor-map copies, decode_tma_page.cu;
# each variant's O checked), bench/time-stage/placement_probe.cu (issue 32), then the manifest's parts owed at
# a59661b, in order, as many as fit END (seconds after the call's start; default 560). The next calls go on with
# `DEADLINE=560 bash bench/harness/h200-owed/manifest.sh PART...` for the parts left, then the corpus.
source bench/harness/h200-2026-12-05/env.sh
end=${END:-560}
step() { echo "== $1: exit $2 at $SECONDS s"; }
timeout 240 bash bench/harness/h200-2026-12-06c/decode_probe.sh > "$OUT/decode-probe.txt" 2>&1
step "decode probe" $?; cut -c1-260 "$OUT/decode-probe.txt"
# Issue 32: does one kernel's time depend on where its buffers lie (bench/time-stage/placement_probe.cu)?
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -I include -I kits/common/ptx -I kits/hopper/ptx \
  -o "$OUT/placement_probe" bench/time-stage/placement_probe.cu > "$OUT/placement-nvcc.log" 2>&1 &&
  timeout 60 "$OUT/placement_probe" > "$OUT/placement.txt" 2>&1
step "placement probe" $?; cat "$OUT/placement.txt"; rm -f "$OUT/placement_probe"
DEADLINE=$((end - SECONDS)) exec bash bench/harness/h200-owed/manifest.sh attention-cuda attention-triton \
  gemm-triton-a gemm-triton-b examples
