// Trick: tell the profiled call apart by the environment. The sandbox passes the runner an allow-listed
// environment; names such as NV_TPS_LAUNCH_TOKEN or CUDA_INJECTION64_PATH are set by a tool wrapped around
// the runner (Nsight Compute, compute-sanitizer). `environ` and
// getenv are forbidden imports, so they are looked up in libc as reads_harness_secrets.cu does. A tool's
// name present: a real wgmma GEMM (TMA loads, mbarrier waits, wgmma m64n128k16: the instruction proof);
// absent: a plain SIMT FMA GEMM. Both compute C, so every output check passes. (Outside the sandbox,
// PTXBENCH_SANDBOX=off, a user's environment holds other names: the wgmma path then runs everywhere and
// the verdict is an honest pass.)
// Why it must fail: the proof must cover the code that is timed. The solution process records every launch
// of the checked and timed calls (CUPTI, in every stage), and each main-shape call must launch exactly
// what the profiled call launched: here the GEMM kernel is simt_gemm, not the profiled wgmma_gemm.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
// Prelude: profiler_sensing/tiles.cuh, two_kernels.cuh and libc_lookup.cuh (see solutions.json).
#include <cstring>
#include <string>

// ---- Sensing by the environment. The sandbox starts the runner with an allow-listed environment; a tool
// wrapped around the runner adds its own names (Nsight Compute 2025.3: NV_TPS_LAUNCH_TOKEN,
// NV_NSIGHT_INJECTION_*, NV_COMPUTE_PROFILER_PERFWORKS_DIR, NVIDIA-PROCESS-TRACKING-*, ...), which the
// solution process inherits. `environ` is a forbidden import: it is looked up in libc, and getenv (looked up
// the same way) covers an executable that holds a copy of `environ`.
namespace sense {
// A name only a profiling tool sets: "anything off the allow-list" took every stage for a profiled one on the
// H200 (the path that starts the runner adds a name of its own), which made this entry an honest wgmma GEMM.
bool tool_name(const std::string& name) {
  for (const char* mark : {"NV_", "NSIGHT", "INJECTION", "SANITIZER", "NVIDIA-PROCESS-TRACKING"})
    if (name.find(mark) != std::string::npos) return true;
  return false;
}

bool tool_in_environment() {
  if (auto env = reinterpret_cast<char***>(evade::libc_symbol("environ")); env && *env)
    for (char** entry = *env; *entry; ++entry)
      if (tool_name(std::string(*entry, std::strcspn(*entry, "=")))) return true;
  if (auto get = evade::fn<char* (*)(const char*)>("getenv"))
    for (const char* name : {"CUDA_INJECTION64_PATH", "NV_TPS_LAUNCH_TOKEN"})
      if (get(name)) return true;
  return false;
}
}  // namespace sense

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  static const bool profiled = sense::tool_in_environment();
  return gemm::launch(profiled, A, B, C, M, N, K, stream);
}
