// Defect: changes a device limit and leaves it changed. The GEMM is the plain, correct SIMT kernel of
// solutions/examples/gemm_simt.cu; on each call the host code sets CU_LIMIT_PERSISTING_L2_CACHE_SIZE to
// 16 MiB (as a tuning that sets aside L2 for persisting accesses would), through cuCtxSetLimit fetched by name
// with cudaGetDriverEntryPointByVersion: no banned import (cudaDeviceSetLimit is forbidden, and so is
// importing cuCtxSetLimit), so the static scan passes it.
// Why it must fail: no state may survive a call, and a device limit is state of the whole context, seen by
// every later call and by the harness's own work (its timing of the vendor library included). The solution
// process compares the device limits before and after each call. Stopped by: sanitize, the first stage that
// calls it (failed: "state kept between calls").
// The kernel and its launch: simt/gemm.cuh, the manifest's prelude.

#include <cuda.h>

namespace {

// The planted defect: a device limit set in the call, through a driver function fetched by name.
using SetLimit = CUresult (*)(CUlimit, size_t);

int reserve_persisting_l2(size_t bytes) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxSetLimit", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr)
    return 1;
  return reinterpret_cast<SetLimit>(fn)(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, bytes) == CUDA_SUCCESS ? 0 : 1;
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (reserve_persisting_l2(size_t{16} << 20) != 0) return 2;
  return simt::launch(A, B, C, M, N, K, stream) ? 0 : 1;
}
