// An honest counterpart, with no defect: proves that a solution may call the CUDA driver directly. The GEMM
// is the prelude's (simt/tma_fma_gemm.cuh: TMA loads through maps from a direct cuTensorMapEncodeTiled call,
// an mbarrier per stage, FMA math); the host code encodes the maps on every call from the call's pointers.
// What its verdict proves: cuTensorMapEncodeTiled is on the static scan's short list of driver imports, and a
// map encoded in the call from the call's own pointers is right in every stage however the buffers move:
// static, sanitize (memcheck, synccheck, racecheck, initcheck), correct and time pass. The instruction stage
// fails it, as it must: no wgmma is executed (none is compiled).

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (K % 8 != 0) return 1;  // TMA needs 16-byte row pitches
  CUtensorMap map_a, map_b;  // from this call's own pointers, every call
  if (!tma_fma::encode(&map_a, A, M, K) || !tma_fma::encode(&map_b, B, N, K)) return 2;
  return tma_fma::launch(map_a, map_b, C, M, N, K, stream) ? 0 : 3;
}
