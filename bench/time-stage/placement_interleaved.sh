#!/usr/bin/env bash
# placement_interleaved.cu, one fresh process per SEED (each seed draws its own placements; a seed given twice
# tells the process from the placement), on WORKLOAD (gemm or backward-causal) with INPUTS (INPUTS=zero-lse,
# fixed or fresh: placement_interleaved.cu says what each is; the default zero-lse). From the repository's root;
# prints each process's lines and writes them to $OUT/placement-interleaved-WORKLOAD-INPUTS.txt.
#   [INPUTS=...] bench/time-stage/placement_interleaved.sh WORKLOAD SEED...
set -u
workload=$1
shift
case $workload in
  gemm) define=() ;;
  backward-causal) define=(-DPROBE_BACKWARD_CAUSAL src/runner/attention_kernels.cu -lcublas) ;;
  *) echo "no workload $workload: gemm or backward-causal"; exit 2 ;;
esac
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 "${define[@]}" -I include -I src -I kits/common/ptx \
  -I kits/hopper/ptx -o "/tmp/placement_$workload" bench/time-stage/placement_interleaved.cu \
  src/runner/kernels.cu || exit 1
inputs=${INPUTS:-zero-lse}
for seed in "$@"; do
  echo "== process of seed $seed, inputs $inputs"
  "/tmp/placement_$workload" "$seed" "$inputs"
done 2>&1 | tee "$OUT/placement-interleaved-$workload-$inputs.txt"
