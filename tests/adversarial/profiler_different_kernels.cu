// Trick: the plainest form of running other code when profiled: a wgmma kernel under the profiler and a
// different kernel otherwise. Profiled (sensed by launch latency, as in profiler_by_launch_latency.cu: an
// empty kernel of its own takes milliseconds under Nsight Compute's kernel replay): a real wgmma GEMM,
// wgmma_gemm (TMA loads, mbarrier waits, wgmma m64n128k16: the instruction proof); otherwise a plain SIMT
// FMA GEMM, simt_gemm, with the same grid and block. Both compute C, so every output check passes, and the
// SIMT kernel is what the time stage measures.
// Why it must fail: the proof must cover the code that is timed. The solution process records every launch
// of the checked and timed calls (CUPTI, in every stage), and each main-shape call must launch exactly
// what the profiled call launched: a kernel of another name is the first thing that comparison sees.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
// Prelude: profiler_sensing/tiles.cuh, two_kernels.cuh and latency.cuh (see solutions.json).

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  return gemm::launch(sense::launches_are_slow(stream), A, B, C, M, N, K, stream);
}
