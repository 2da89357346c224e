#!/usr/bin/env bash
# Whether cuda-gdb can attach to a hung process that records its kernels with CUPTI's activity API, as the
# judge's solution process does (call I: attaching to a plain process works on this host, to the solution
# process it does not), and whether detaching CUPTI (cuptiFinalize, from another thread) while the kernel hangs
# lets it attach.
cd "$OUT" || exit 1
cat > hang.cu <<'CU'
#include <cstdio>
#include <cstdlib>
#include <cupti.h>
#include <chrono>
#include <thread>
__device__ volatile int flag = 0;
__global__ void wait_for_flag(int* out) {
  if (threadIdx.x < 32) while (flag == 0) __nanosleep(1000);
  out[threadIdx.x] = 1;
}
static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max) {
  *size = 1 << 20; *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size)); *max = 0;
}
static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { free(buffer); }
int main(int argc, char**) {
  if (argc > 1) {
    printf("register %d\n", (int)cuptiActivityRegisterCallbacks(requested, completed));
    printf("enable %d\n", (int)cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  }
  if (argc > 2) {  // detach CUPTI from another thread while the kernel hangs
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      printf("disable %d\n", (int)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
      printf("finalize %d\n", (int)cuptiFinalize());
      fflush(stdout);
    }).detach();
  }
  fflush(stdout);
  int* out = nullptr;
  cudaMalloc(&out, 4096);
  wait_for_flag<<<4, 128>>>(out);
  cudaDeviceSynchronize();
  return 0;
}
CU
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -I"$cuda/extras/CUPTI/include" -L"$cuda/extras/CUPTI/lib64" \
  -o hang hang.cu -lcupti -Xlinker -rpath="$cuda/extras/CUPTI/lib64" > nvcc.log 2>&1 || { cat nvcc.log; exit 1; }
for mode in plain cupti finalized; do
  case $mode in plain) ./hang > $mode.out 2>&1 & ;; cupti) ./hang 1 > $mode.out 2>&1 & ;; finalized) ./hang 1 2 > $mode.out 2>&1 & ;; esac
  hung=$!; sleep 4
  timeout 25 cuda-gdb -q -batch -p "$hung" -ex "info cuda kernels" -ex "info cuda threads" > "attach-$mode.txt" 2>&1
  echo "== $mode: exit $?"; cat $mode.out; grep -E "wait_for_flag|CUDA|Could|No CUDA|error" "attach-$mode.txt" | head -6
  kill -KILL "$hung"
done
