// Defect: an honest bug, not a trick. The GEMM is the plain, correct SIMT kernel of
// solutions/examples/gemm_simt.cu; when M is odd, the host code also launches a kernel whose one store lands
// far outside C, and the call fails on the GPU (cudaErrorIllegalAddress).
// Why it must fail, and say where: the sanitize stage's one call (M = 128) never takes that path; the correct
// stage's odd-m shape (M = 1999) does, and the judge then runs memcheck on that shape alone, whose report
// names the kernel and the line of the stray store below: the debugging feedback a model gets.
// Stopped by: correct (runtime_error, its message's "where (memcheck on that shape): ..."); the time stage
// does not run after it.
// The kernel and its launch: simt/gemm.cuh, the manifest's prelude.

namespace {

__global__ void stray_store(__nv_bfloat16* C, size_t far) {
  C[far] = __float2bfloat16(1.0f);  // the stray store: 2 TiB past C
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  if (!simt::launch(A, B, C, M, N, K, stream)) return 1;
  if (M % 2 == 1) stray_store<<<1, 1, 0, stream>>>(C, size_t{1} << 40);
  return 0;
}
