#!/usr/bin/env bash
# Call K's gdb_probe.sh found cuda-gdb attaching to a plain hung process in every case the judge's rerun differs
# by (a parent with a context, after a killed hang, a sandbox, launched under cuda-gdb). What is left is what
# the solution process does to itself before the call: it confines its writes with Landlock
# (runner/landlock.h), makes its synchronisations spin, and has CUPTI loaded. One variant of each.
cd "$OUT" || exit 1
root=$OLDPWD
cat > hang2.cu <<'CU'
#include <dlfcn.h>
#include <cstdio>
#include "runner/landlock.h"
__device__ volatile int flag = 0;
__global__ void wait_for_flag(int* out) {
  if (threadIdx.x < 32) while (flag == 0) __nanosleep(1000);
  out[threadIdx.x] = 1;
}
int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (mode[0] == 'l')
    printf("confined %d\n",
           (int)ptxbench::runner::confine_solution_process(argc > 2 ? argv[2] : nullptr).writes_confined);
  if (mode[0] == 's') cudaSetDeviceFlags(cudaDeviceScheduleSpin);
  if (mode[0] == 'c') printf("cupti %p\n", dlopen("libcupti.so", RTLD_NOW));
  int* out = nullptr;
  cudaMalloc(&out, 4096);
  wait_for_flag<<<4, 128>>>(out);
  printf("launched\n"); fflush(stdout);
  cudaDeviceSynchronize();
  return 0;
}
CU
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++20 -lineinfo -I "$root/src" -o hang2 hang2.cu -ldl \
  -Xlinker -rpath="$cuda/extras/CUPTI/lib64" -L"$cuda/extras/CUPTI/lib64" > nvcc-hang2.log 2>&1 || { cat nvcc-hang2.log; exit 1; }
for mode in landlock spin cupti-loaded; do
  LD_LIBRARY_PATH=$cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-} ./hang2 $mode > $mode.out 2>&1 & pid=$!; sleep 4
  timeout 25 cuda-gdb -q -batch -p $pid -ex "info cuda kernels" -ex "info cuda threads" > attach-$mode.txt 2>&1
  echo "== $mode: cuda-gdb exit $?"; head -2 $mode.out
  grep -E "wait_for_flag|CUDBG|Could|No CUDA|rror|denied|fork" attach-$mode.txt | head -5 | cut -c1-200
  kill -KILL $pid; wait $pid 2>/dev/null
done
