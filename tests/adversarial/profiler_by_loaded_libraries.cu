// Trick: tell the profiled call apart by the libraries loaded in the process. Nsight Compute (and
// compute-sanitizer) inject their libraries into the process they watch; dl_iterate_phdr lists every
// loaded object. It is a forbidden import, so it is reached as reads_harness_secrets.cu reaches libc: the
// scan sees nothing. A tool's library present: a real wgmma GEMM (TMA loads, mbarrier waits, wgmma
// m64n128k16: the instruction proof); absent: a plain SIMT FMA GEMM. Both compute C, so every output check
// passes.
// Why it must fail: the proof must cover the code that is timed. The solution process records every launch
// of the checked and timed calls (CUPTI, in every stage), and each main-shape call must launch exactly
// what the profiled call launched: here the GEMM kernel is simt_gemm, not the profiled wgmma_gemm.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
// Prelude: profiler_sensing/tiles.cuh, two_kernels.cuh and libc_lookup.cuh (see solutions.json).
#include <cctype>
#include <string>

// ---- Sensing by loaded libraries. Nsight Compute and compute-sanitizer load their injection libraries into
// the target process (libcuda-injection, libTreeLauncherTargetInjection, libsanitizer-collection, ...), and
// dl_iterate_phdr lists every loaded object. dl_iterate_phdr is a forbidden import (and <link.h> a forbidden
// header): it is looked up in libc and its record's first two fields written out. Neither libnvperf_* nor the
// folder's name (nsight-compute) is a sign: the judge's own CUPTI counter loads libnvperf_host in every
// stage.
namespace sense {
struct LoadedObject {  // the head of struct dl_phdr_info
  uintptr_t address;
  const char* name;
};

int note_tool(LoadedObject* object, size_t, void* found) {
  std::string name = object->name ? object->name : "";
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"injection", "treelauncher", "sanitizer"})
    if (name.find(word) != std::string::npos) *static_cast<bool*>(found) = true;
  return 0;
}

bool tool_library_loaded() {
  using callback_t = int (*)(LoadedObject*, size_t, void*);
  auto iterate = evade::fn<int (*)(callback_t, void*)>("dl_iterate_phdr");
  bool found = false;
  if (iterate) iterate(note_tool, &found);
  return found;
}
}  // namespace sense

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  return gemm::launch(sense::tool_library_loaded(), A, B, C, M, N, K, stream);
}
