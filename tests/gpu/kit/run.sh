#!/usr/bin/env bash
# Builds and runs a GPU test of the Hopper kit (needs an sm_90 GPU and nvcc >= 12.3): kit_test (every function of
# kits/hopper/ptx and kits/common/ptx, the default) or patterns_test (every code fragment of
# kits/hopper/patterns/*.md; run_patterns.sh).
# Usage: tests/gpu/kit/run.sh [build-dir [kit_test|patterns_test]]     Exit status: the test's (0 = all passed).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:-$root/build/kit}"
test="${2:-kit_test}"
mkdir -p "$build"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O2 -I "$root/kits/common/ptx" -I "$root/kits/hopper/ptx" \
  -Xptxas -v \
  "$root/tests/gpu/kit/$test.cu" -o "$build/$test" 2> "$build/$test-ptxas.log"
echo "ptxas warnings: $(grep -cE 'warning|C75[0-9][0-9]' "$build/$test-ptxas.log" || true)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
timeout 120 "$build/$test"
