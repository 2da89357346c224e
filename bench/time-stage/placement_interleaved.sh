#!/usr/bin/env bash
# placement_interleaved.cu in PROCESSES fresh processes (default 4), each with its own placements (seed = the
# process's number). From the repository's root; prints each process's lines and writes them to
# $OUT/placement-interleaved.txt.
set -u
processes=${1:-4}
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -I include -I src -I kits/common/ptx -I kits/hopper/ptx \
  -o /tmp/placement_interleaved bench/time-stage/placement_interleaved.cu src/runner/kernels.cu || exit 1
for process in $(seq 1 "$processes"); do
  echo "== process $process"
  /tmp/placement_interleaved "$process"
done 2>&1 | tee "$OUT/placement-interleaved.txt"
