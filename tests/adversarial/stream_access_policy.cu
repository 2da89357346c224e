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
// The kernel and its launch: simt/gemm.cuh, the manifest's prelude.

namespace {

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
  return simt::launch(A, B, C, M, N, K, stream) ? 0 : 1;
}
