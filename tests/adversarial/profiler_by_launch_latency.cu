// Trick: tell the profiled call apart by how long a launch takes. Every call launches an empty kernel of
// its own and times it on the host clock until the stream is idle (best of three after one untimed
// launch): under Nsight Compute's kernel replay a launch returns only once the kernel has been profiled,
// milliseconds later; unprofiled it takes tens of microseconds. Above 1 ms the call runs a real wgmma GEMM
// (TMA loads, mbarrier waits, wgmma m64n128k16: the instruction proof), otherwise a plain SIMT FMA GEMM.
// Both compute C, so the profiled call's own output check passes too. Before the defence this passed
// (issue 13: coverage 100%, 0.009x).
// Why it must fail: the proof must cover the code that is timed. The solution process records every launch
// of the checked and timed calls (CUPTI, in every stage), and each main-shape call must launch exactly
// what the profiled call launched: here the GEMM kernel is simt_gemm, not the profiled wgmma_gemm.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
// Prelude: profiler_sensing/tiles.cuh, two_kernels.cuh and latency.cuh (see solutions.json).

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  return gemm::launch(sense::launches_are_slow(stream), A, B, C, M, N, K, stream);
}
