// Prelude (after tiles.cuh) of the entries that switch between two kernels: wgmma_gemm and simt_gemm, and
// gemm::launch, which launches one of them.
namespace gemm {
__global__ void __launch_bounds__(128)
    wgmma_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
               __nv_bfloat16* C, int M, int N, int K) {
  __shared__ uint8_t raw[kSmemBytes];
  __shared__ uint64_t bar;
  float acc[kBN / 2] = {};
  wgmma_tile(aligned(raw), &bar, &map_a, &map_b, blockIdx.y * kBM, blockIdx.x * kBN, K, acc);
  store_tile(C, M, N, blockIdx.y * kBM, blockIdx.x * kBN, acc);
}

__global__ void __launch_bounds__(128)
    simt_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  __shared__ float slice[kSlice * (kBM + kBN)];
  float acc[kBN / 2] = {};
  fma_tile(slice, A, B, M, N, K, blockIdx.y * kBM, blockIdx.x * kBN, acc);
  store_tile(C, M, N, blockIdx.y * kBM, blockIdx.x * kBN, acc);
}

// The wgmma kernel or the SIMT one, same grid and block: only the kernel differs.
inline int launch(bool use_wgmma, const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                  int N, int K, cudaStream_t stream) {
  if (M <= 0 || N % 8 != 0 || K % 8 != 0) return 2;  // TMA needs 16-byte row pitches
  const dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
  if (use_wgmma) {
    CUtensorMap map_a, map_b;
    if (make_tensor_map_2d_bf16(&map_a, A, M, K, kBM, kBK) != cudaSuccess ||
        make_tensor_map_2d_bf16(&map_b, B, N, K, kBN, kBK) != cudaSuccess)
      return 3;
    wgmma_gemm<<<grid, 128, 0, stream>>>(map_a, map_b, C, M, N, K);
  } else {
    simt_gemm<<<grid, 128, 0, stream>>>(A, B, C, M, N, K);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
}  // namespace gemm
