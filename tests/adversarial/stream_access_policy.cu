// Defect: changes the stream it was given and leaves it changed. The GEMM is the plain, correct SIMT kernel
// of solutions/examples/gemm_simt.cu; before launching it the host code sets an access-policy window over B
// on `stream` (cudaStreamSetAttribute, cudaStreamAttributeAccessPolicyWindow: hitRatio 1, hits persisting,
// misses streaming), as a tuning that keeps the weight in L2 would. No forbidden function: the static scan
// passes it.
// Why it must fail: no state may survive a call. The stream is the harness's; its window stays set after the
// call, over an address the next call may not even use (buffers move between calls), and applies to whatever
// the harness enqueues on it next. The solution process compares the stream's attributes (access-policy
// window, priority, synchronisation policy) before and after each call. Stopped by: sanitize, the first
// stage that calls it (failed: "state kept between calls").
#include <ptxbench/abi.h>

namespace {

constexpr int kTile = 64;
constexpr int kSlice = 16;

__global__ void __launch_bounds__(256) gemm_simt_kernel(const __nv_bfloat16* __restrict__ A,
                                                        const __nv_bfloat16* __restrict__ B,
                                                        __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float a_tile[kSlice][kTile + 1];  // [k][m], padded against bank conflicts
  __shared__ float b_tile[kSlice][kTile + 1];  // [k][n]
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;  // this thread's 4x4 block
  float acc[4][4] = {};

  for (int k0 = 0; k0 < K; k0 += kSlice) {
    // 64 x 16 elements of each operand, 4 per thread; rows past M or N and columns past K load as zero.
    for (int i = threadIdx.x; i < kTile * kSlice; i += blockDim.x) {
      int r = i / kSlice, k = i % kSlice;
      int ga = row0 + r, gb = col0 + r, gk = k0 + k;
      a_tile[k][r] = ga < M && gk < K ? __bfloat162float(A[(size_t)ga * K + gk]) : 0.f;
      b_tile[k][r] = gb < N && gk < K ? __bfloat162float(B[(size_t)gb * K + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kSlice; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = a_tile[k][tr * 4 + i], b[i] = b_tile[k][tc * 4 + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int r = row0 + tr * 4 + i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int c = col0 + tc * 4 + j;
      if (c < N) C[(size_t)r * N + c] = __float2bfloat16(acc[i][j]);
    }
  }
}

// The planted defect: a persisting access-policy window over B, left on the caller's stream.
void keep_b_in_l2(const __nv_bfloat16* B, size_t bytes, cudaStream_t stream) {
  int device = 0, max_window = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device) != cudaSuccess ||
      max_window <= 0)
    return;
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = const_cast<__nv_bfloat16*>(B);
  value.accessPolicyWindow.num_bytes = bytes < static_cast<size_t>(max_window) ? bytes : max_window;
  value.accessPolicyWindow.hitRatio = 1.0f;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  if (cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value) != cudaSuccess)
    (void)cudaGetLastError();  // a hint only: where the window is refused, run without it
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  keep_b_in_l2(B, static_cast<size_t>(N) * K * sizeof(__nv_bfloat16), stream);
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_simt_kernel<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
