#!/usr/bin/env bash
# Builds bench/timing/cupti_overhead.cu with the runner's recorders and runs each configuration (see its header).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-bench/timing/out}
mkdir -p "$out"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O2 -I src -I include bench/timing/cupti_overhead.cu \
  src/runner/launch_recorder.cpp src/runner/tensor_counter.cpp -lcupti -o "$out/cupti_overhead"
for mode in none recorder counter both; do "$out/cupti_overhead" "$mode"; done
"$out/cupti_overhead" recorder flush-each
"$out/cupti_overhead" both flush-each
