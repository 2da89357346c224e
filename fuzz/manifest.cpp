// The solutions manifest reader (eval/solution_run.h) on arbitrary solutions.json files: the entries, or a
// ConfigError naming the entry. The paths it names are looked up in a folder holding one solution.
#include "eval/solution_run.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench;
  static const bool made = [] {
    std::ofstream(fuzz::folder() / "gemm.cu") << "// a solution\n";
    return true;
  }();
  (void)made;
  fuzz::as_file("solutions.json", data, size);
  fuzz::expect_clear_errors([&] { (void)load_solution_manifest(fuzz::folder()); });
  return 0;
}
