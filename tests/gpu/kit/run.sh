#!/usr/bin/env bash
# Builds and runs the Hopper kit GPU test (needs an sm_90 GPU and nvcc >= 12.3).
# Usage: tests/gpu/kit/run.sh [build-dir]     Exit status: the test's (0 = every kit function passed).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:-$root/build/kit}"
mkdir -p "$build"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O2 -I "$root/kits/common/ptx" -I "$root/kits/hopper/ptx" \
  -Xptxas -v \
  "$root/tests/gpu/kit/kit_test.cu" -o "$build/kit_test" 2> "$build/ptxas.log"
echo "ptxas warnings: $(grep -cE 'warning|C75[0-9][0-9]' "$build/ptxas.log" || true)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
timeout 120 "$build/kit_test"
