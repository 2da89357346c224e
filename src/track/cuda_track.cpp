// The CUDA track: one .cu file, compiled by nvcc into a shared library whose C entry points
// (include/ptxbench/abi.h) the runner's solution process loads with dlopen.
#include <fmt/format.h>
#include <set>

#include "track/track.h"

namespace ptxbench {
namespace {

class CudaTrack final : public Track {
 public:
  std::string name() const override { return "cuda"; }
  std::string title() const override { return "CUDA"; }
  std::string source_name() const override { return "solution.cu"; }

  CompileResult compile(const std::string& source, const Task& task,
                        const CompileOptions& options) const override {
    return compile_with_nvcc(source, task, options);
  }

  // The source for a message that points at a line (it runs even when nvcc failed: `ptxbench compile`
  // shows it), then the library's imports, which macros and token pasting cannot hide, and its exports: the
  // family's entry points, which nvcc compiles without (a misspelt or C++-linkage one is found only when
  // the runner cannot load it).
  std::vector<Violation> scan(const std::string& source, const CompileResult& compiled, const Task& task,
                              const CompileOptions&) const override {
    std::vector<Violation> found = scan_source(source);
    if (compiled.ok()) {
      const auto imports = scan_library(compiled.library);
      found.insert(found.end(), imports.begin(), imports.end());
      const auto entries = missing_entry_points(compiled.library, task.family_spec().symbols());
      found.insert(found.end(), entries.begin(), entries.end());
    }
    return found;
  }

  SolutionWorker worker() const override {
    return {.implemented = true,
            .loads =
                "ptxbench-runner --solution-worker loads solution.so with dlopen and calls the entry "
                "point's C symbol"};
  }

  std::string system_prompt() const override {
    return R"(You write GPU kernels for ptxbench, a benchmark of CUDA kernels that must use an architecture's own PTX instructions.

Your answer is one complete .cu file that:
- defines the task's entry point with C linkage (extern "C"), exactly as declared in <ptxbench/abi.h>;
- computes the task's result correctly for every shape listed (any M), within the tolerance;
- executes the task's required PTX instruction families. This is checked by counting the instructions that actually run (Nsight Compute), so instructions in code that never runs do not count, and the MMA family must do (nearly) all of the FLOPs;
- enqueues all GPU work on `stream`, and does not synchronise, allocate or free memory, create streams or events, or keep state between calls;
- uses no vendor library (cuBLAS, cuDNN, CUTLASS/CuTe), no dlopen, processes, threads, files or network;
- is as fast as you can make it: it is timed against the vendor library.
Inline PTX (asm volatile) is expected; where a kit of PTX template functions is shown, you may #include it.

The file is compiled with nvcc, checked for forbidden means, run under compute-sanitizer, checked against a trusted reference on fresh random inputs, profiled and timed.

Answer with the whole file in one fenced code block that starts with ```cuda. Only the last code block of your reply is used; keep any explanation short and outside it. Later turns show you the verdict on your previous file: answer each with the whole corrected file, again in one ```cuda block.)";
  }

  std::string toolchain(const ArchProfile& arch) const override {
    return fmt::format("compiled with nvcc -gencode {} -std=c++20 -O3 -lineinfo -shared -Xcompiler -fPIC -cudart "
                       "shared -lcuda",
                       arch.gencode);
  }

  std::string entry_point(const Family& family) const override {
    return fmt::format("Entry point (declared in <ptxbench/abi.h>; define it with extern \"C\"):\n{}",
                       c_declarations(family));
  }

  std::string file_start() const override {
    return "Start the file with #include <ptxbench/abi.h> (it includes cuda_bf16.h and cuda_runtime.h).";
  }

  KitLayout kit(const ArchProfile& arch) const override {
    return {.folder = arch.kit,
            .shared_folder = "common",
            .title = arch.marketing + " kit",
            .templates = "ptx",
            .template_extension = ".cuh",
            .templates_intro = fmt::format(
                "The kit's PTX template functions follow. kits/common/ptx (what every architecture shares) and "
                "kits/{0}/ptx are on the include path: #include <{0}.cuh> brings in all of them (namespace "
                "ptxkit::{0}), or include one file by its name.",
                arch.kit),
            .no_templates =
                "No kit header is shown at this level: write the PTX instructions yourself with inline asm.",
            .no_template_files = "(the kit has no template functions yet)",
            .no_kit =
                "no parameters, template functions or contracts can be shown. Work from the task "
                "statement and write the PTX inline."};
  }

  std::string fence() const override { return "cuda"; }
  bool takes_fence(const std::string& language) const override {
    static const std::set<std::string> languages = {"",    "cuda", "cu", "cuh", "cpp", "c++",
                                                    "cxx", "cc",   "c",  "h",   "hpp"};
    return languages.contains(language);
  }
  std::string file_noun() const override { return ".cu file"; }
  std::string language_noun() const override { return "CUDA/C++"; }
};

}  // namespace

const Track& cuda_track() {
  static const CudaTrack track;
  return track;
}

}  // namespace ptxbench
