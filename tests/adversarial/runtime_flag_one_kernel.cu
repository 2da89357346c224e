// Trick: make every call's launches identical, so that comparing them with the profiled call's finds
// nothing. ONE kernel, launched with the same name, grid, block and shared memory in every call, takes a
// run-time int that picks its inner loop: wgmma (TMA loads, mbarrier waits, wgmma m64n128k16) or plain
// FMA, both into the same accumulators and the same epilogue. The flag comes from the launch latency (as
// in profiler_by_launch_latency.cu: an empty kernel of its own takes milliseconds under Nsight Compute's
// kernel replay). Nsight Compute counts executed instructions, so in the profiled call the FMA loop is
// dead code: the proof sees wgmma doing all the FLOPs. Both loops compute C, so every output check passes.
// Why it must fail: the launches match, what they do does not. Each kernel's median time in the time stage
// must be within 2x (or 20 us) of the duration Nsight Compute measured, and the FMA loop takes several
// times the wgmma loop's; and a checked or timed call chosen at random is counted with hardware counters
// (no replay, no patching, so launches are not delayed and the flag says FMA), which must show the
// profiled call's wgmma count: it shows none.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
// Prelude: profiler_sensing/tiles.cuh and latency.cuh (see solutions.json).

namespace gemm {
// ONE kernel for both paths: same name, grid, block and shared memory in every call; `use_wgmma` (a uniform
// run-time argument) picks the inner loop. Nsight Compute counts executed instructions, so in the profiled
// call the FMA loop is dead code and the proof sees wgmma only.
__global__ void __launch_bounds__(128)
    gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                int use_wgmma) {
  __shared__ uint8_t raw[kSmemBytes];
  __shared__ uint64_t bar;
  float acc[kBN / 2] = {};
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  if (use_wgmma)
    wgmma_tile(aligned(raw), &bar, &map_a, &map_b, m0, n0, K, acc);
  else
    fma_tile(reinterpret_cast<float*>(aligned(raw)), A, B, M, N, K, m0, n0, acc);
  store_tile(C, M, N, m0, n0, acc);
}

inline int launch(bool use_wgmma, const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                  int N, int K, cudaStream_t stream) {
  if (M <= 0 || N % 8 != 0 || K % 8 != 0) return 2;  // TMA needs 16-byte row pitches
  CUtensorMap map_a, map_b;  // built on both paths: the launch is the same whichever path runs
  if (make_tensor_map_2d_bf16(&map_a, A, M, K, kBM, kBK) != cudaSuccess ||
      make_tensor_map_2d_bf16(&map_b, B, N, K, kBN, kBK) != cudaSuccess)
    return 3;
  const dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
  gemm_kernel<<<grid, 128, 0, stream>>>(map_a, map_b, A, B, C, M, N, K, use_wgmma ? 1 : 0);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
}  // namespace gemm

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  return gemm::launch(sense::launches_are_slow(stream), A, B, C, M, N, K, stream);
}
