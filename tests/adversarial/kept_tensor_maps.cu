// Defect: builds its tensor maps once per value of M and reuses them. The kernel is the prelude's
// (simt/tma_fma_gemm.cuh, driver_tensor_map.cu's too: TMA loads of A and B through maps from a direct
// cuTensorMapEncodeTiled call, an mbarrier per stage, FMA math), but the host code keeps the two maps of each
// M in a static table, encoded from the pointers of the first call of that M, as host code that treats the
// encoding as set-up does. C is written through the pointer of the call.
// Why it must fail: a tensor map holds the global address it was encoded with, and the ABI allows no state
// between calls: the harness moves every buffer between calls of a shape (two disjoint places per buffer,
// alternating, at random 256-byte offsets, everything around the current place a guard pattern). The
// sanitize stage's one call per process encodes from its own pointers and is clean; from the correct stage's
// second trial on, TMA loads the guard pattern where A and B used to be (the old place is in the same
// allocation, so nothing faults) and C comes out wrong. Stopped by: correct (moved buffers).

namespace {

// The planted defect: the maps of each M, kept from its first call.
struct KeptMaps {
  int M = 0;
  CUtensorMap a, b;
};
KeptMaps kept[8];
int kept_count = 0;

const KeptMaps* maps_for(const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int N, int K) {
  for (int i = 0; i < kept_count; ++i)
    if (kept[i].M == M) return &kept[i];
  KeptMaps& slot = kept[kept_count < 8 ? kept_count++ : 7];
  slot.M = M;
  if (!tma_fma::encode(&slot.a, A, M, K) || !tma_fma::encode(&slot.b, B, N, K)) {
    slot.M = 0;
    return nullptr;
  }
  return &slot;
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (K % 8 != 0) return 1;  // TMA needs 16-byte row pitches
  const KeptMaps* maps = maps_for(A, B, M, N, K);
  if (maps == nullptr) return 2;
  return tma_fma::launch(maps->a, maps->b, C, M, N, K, stream) ? 0 : 3;
}
