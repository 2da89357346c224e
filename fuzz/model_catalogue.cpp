// The model catalogue reader (llm/provider.h) on arbitrary models.json files.
#include "fuzz_input.h"
#include "llm/provider.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench;
  const auto path = fuzz::as_file("models.json", data, size);
  fuzz::expect_clear_errors([&] { (void)llm::load_model_catalogue(path.string()); });
  return 0;
}
