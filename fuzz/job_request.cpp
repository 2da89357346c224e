// The evaluation service's job parser (service/jobs.h) on arbitrary request bodies: a job, or a RequestError
// with its HTTP status; anything else would be a 500 for a client's mistake.
#include "fuzz_input.h"
#include "service/jobs.h"
#include "task/task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptxbench;
  static const TaskRegistry registry =
      TaskRegistry::load(std::filesystem::path(PTXBENCH_SOURCE_DIR) / "tasks");
  try {
    const service::JobRequest job = service::parse_job_request(fuzz::text(data, size), registry);
    if (job.source.empty() || !registry.find(job.task)) __builtin_trap();  // accepted what it must refuse
  } catch (const service::RequestError& e) {
    if (e.status < 400 || e.status > 499) __builtin_trap();
  }
  return 0;
}
