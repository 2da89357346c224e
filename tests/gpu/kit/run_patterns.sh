#!/usr/bin/env bash
# Builds and runs the GPU test of the Hopper kit's pattern documents (kits/hopper/patterns/*.md): every code
# fragment of the documents, run in kernels and checked against the host. Needs an sm_90 GPU and nvcc >= 12.3.
# Same flags and include folders as run.sh (the kit test). tests/kit/check_patterns.py (no GPU) checks that the
# documents' fragments and the test's copies agree.
# Usage: tests/gpu/kit/run_patterns.sh [build-dir]     Exit status: the test's (0 = every fragment passed).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:-$root/build/kit}"
mkdir -p "$build"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O2 -I "$root/kits/common/ptx" -I "$root/kits/hopper/ptx" \
  -Xptxas -v \
  "$root/tests/gpu/kit/patterns_test.cu" -o "$build/patterns_test" 2> "$build/patterns_ptxas.log"
echo "ptxas warnings: $(grep -cE 'warning|C75[0-9][0-9]' "$build/patterns_ptxas.log" || true)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
timeout 120 "$build/patterns_test"
