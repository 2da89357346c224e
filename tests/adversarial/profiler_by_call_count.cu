// Trick: tell the profiled call apart by its place. The profile mode's process makes exactly two calls: a
// warm-up, then the profiled one. So the process's second call runs a real wgmma GEMM (TMA loads, mbarrier
// waits, wgmma m64n128k16: the instruction proof) and every other call a plain SIMT FMA GEMM. Both compute
// C, so every output check passes. No sensing at all: nothing a tool could hide.
// Why it must fail: the proof must cover the code that is timed. The solution process records every launch
// of the checked and timed calls (CUPTI, in every stage), and each main-shape call must launch exactly
// what the profiled call launched. The correct stage's process makes its main-shape trials first: its
// second call launches wgmma_gemm, the first and third simt_gemm; every timed call launches simt_gemm.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
// Prelude: profiler_sensing/tiles.cuh, two_kernels.cuh (see solutions.json).

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  static int calls = 0;
  return gemm::launch(++calls == 2, A, B, C, M, N, K, stream);
}
