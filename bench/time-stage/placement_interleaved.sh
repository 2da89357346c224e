#!/usr/bin/env bash
# placement_interleaved.cu, one fresh process per SEED (each seed draws its own placements; a seed given twice
# tells the process from the placement), on WORKLOAD (gemm or backward-causal). From the repository's root;
# prints each process's lines and writes them to $OUT/placement-interleaved-WORKLOAD.txt.
#   bench/time-stage/placement_interleaved.sh WORKLOAD SEED...
set -u
workload=$1
shift
case $workload in
  gemm) define=() ;;
  backward-causal) define=(-DPROBE_BACKWARD_CAUSAL) ;;
  *) echo "no workload $workload: gemm or backward-causal"; exit 2 ;;
esac
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 "${define[@]}" -I include -I src -I kits/common/ptx \
  -I kits/hopper/ptx -o "/tmp/placement_$workload" bench/time-stage/placement_interleaved.cu \
  src/runner/kernels.cu || exit 1
for seed in "$@"; do
  echo "== process of seed $seed"
  "/tmp/placement_$workload" "$seed"
done 2>&1 | tee "$OUT/placement-interleaved-$workload.txt"
