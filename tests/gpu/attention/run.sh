#!/usr/bin/env bash
# GPU test of the attention reference (run on a GPU host, not in CI): builds tests/gpu/attention/reference_check.cu
# with the runner's src/runner/attention_kernels.cu and compares the reference kernels with a float64 CPU
# implementation on small shapes (causal, GQA, Sq != Sk, fully masked rows; the paged decode on drawn layouts). Exits non-zero on any failure.
#
#   tests/gpu/attention/run.sh [build_dir]        NVCC (default nvcc), ARCH (default 90a)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$root/build/gpu-attention}
arch=${ARCH:-90a}
mkdir -p "$out"
"${NVCC:-nvcc}" -std=c++17 -O2 -gencode "arch=compute_$arch,code=sm_$arch" -I "$root/src" -I "$root/include" \
  "$here/reference_check.cu" "$root/src/runner/attention_kernels.cu" "$root/src/runner/layouts.cpp" \
  -lcublas -o "$out/attention_reference_check"
"$out/attention_reference_check"
