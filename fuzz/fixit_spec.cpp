// The fixit build spec reader (fixit/dataset.h) on arbitrary spec files.
#include "fixit/dataset.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench;
  const auto path = fuzz::as_file("spec.json", data, size);
  fuzz::expect_clear_errors([&] { (void)fixit::load_spec(path); });
  return 0;
}
