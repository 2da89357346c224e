// The task file reader (task/task.h) on arbitrary files: a task, or a ConfigError naming the field.
#include "fuzz_input.h"
#include "task/task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench;
  // The id must match the file name: the seeds' ids are this one's.
  const auto path = fuzz::as_file("gemm-bf16-n4096-k4096-sm90a.json", data, size);
  fuzz::expect_clear_errors([&] { (void)load_task_file(path); });
  return 0;
}
