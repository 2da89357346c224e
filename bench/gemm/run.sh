#!/usr/bin/env bash
# Builds a GEMM solution the way the harness does (a shared library) and benchmarks it against cuBLASLt.
# Usage: bench/gemm/run.sh [solution.cu] [reps]
#   SOLUTION_FLAGS  extra nvcc flags for the solution (e.g. -DGEMM_CLUSTER_M=1)
#   BUILD_DIR       where to build (default build/gemm)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
solution="${1:-$root/solutions/reference/gemm_bf16_sm90a.cu}"
reps="${2:-30}"
build="${BUILD_DIR:-$root/build/gemm}"
mkdir -p "$build"
name="$(basename "$solution" .cu)"
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O3 -shared -Xcompiler -fPIC -cudart shared \
  -I "$root/include" -I "$root/kits/common/ptx" -I "$root/kits/hopper/ptx" ${SOLUTION_FLAGS:-} -Xptxas -v \
  "$solution" -o "$build/$name.so" 2> "$build/$name.ptxas.log"
grep -E "registers|spill|warning|C75[0-9][0-9]" "$build/$name.ptxas.log" || true
if [ ! -x "$build/bench_gemm" ] || [ "$root/bench/gemm/bench_gemm.cu" -nt "$build/bench_gemm" ]; then
  nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -O2 "$root/bench/gemm/bench_gemm.cu" \
    -o "$build/bench_gemm" -lcublasLt -ldl
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader || true
timeout 300 "$build/bench_gemm" "$build/$name.so" "$reps"
