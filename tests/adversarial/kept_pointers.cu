// Defect: remembers its arguments. On the first call of each value of M it stores A, B and C in a small
// static table, and every later call of that M launches the kernel with the remembered pointers instead of
// the ones it was given (as host code that builds its launch arguments, or a graph, once per shape would).
// The kernel itself is the plain, correct SIMT GEMM of solutions/examples/gemm_simt.cu.
// Why it must fail: the ABI allows no state between calls, and the harness moves every buffer between calls
// of a shape (two disjoint places per buffer, alternating, at random 256-byte offsets; everything around the
// current place is a guard pattern). The first call of a process passes: the sanitize stage's single call
// on the smallest shape is clean. From the correct stage's second trial on, the kernel reads the guard
// pattern where A and B used to be and writes where C used to be, so the current C stays NaN and the guards
// change. Stopped by: correct (moved buffers); time is skipped.
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

// The planted defect: launch arguments kept per value of M.
struct Remembered {
  int M = 0;
  const __nv_bfloat16* A = nullptr;
  const __nv_bfloat16* B = nullptr;
  __nv_bfloat16* C = nullptr;
};
Remembered table[8];
int remembered = 0;

const Remembered& arguments_for(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M) {
  for (int i = 0; i < remembered; ++i)
    if (table[i].M == M) return table[i];
  Remembered& slot = table[remembered < 8 ? remembered++ : 7];
  slot = {M, A, B, C};
  return slot;
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  const Remembered& args = arguments_for(A, B, C, M);
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_simt_kernel<<<grid, 256, 0, stream>>>(args.A, args.B, args.C, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
