// The worker library's C interface for the Python host of Triton solutions (python_worker.h).
#include "runner/python_worker.h"

#include <fcntl.h>

#include <cstdlib>
#include <string>

#include "runner/solution_worker.h"

namespace ptxbench::runner {
namespace {

Confinement confinement;  // set once, by ptxbench_worker_confine, before any other thread exists

class PythonBinding final : public SolutionBinding {
 public:
  explicit PythonBinding(const ptxbench_python_callbacks& callbacks) : callbacks_(callbacks) {}

  std::optional<std::string> load(const std::string& path, const EntrySpec& entry) override {
    return failure(callbacks_.load(path.c_str(), entry.entry.c_str(), entry.workspace.c_str(),
                                   entry.codes.c_str(), message_, sizeof(message_)));
  }

  // The judge's clock around a request includes this, and its calibration does not: the timed calls, which
  // repeat one call's buffers, sizes and stream, find their tensors made and the stream current already.
  std::optional<std::string> prepare(const CallArguments& a) override {
    if (prepared_ && *prepared_ == a) return std::nullopt;
    prepared_.reset();
    uint64_t addresses[solution::kMaxPointers] = {};
    for (uint32_t k = 0; k < a.pointer_count; ++k) addresses[k] = reinterpret_cast<uintptr_t>(a.pointers[k]);
    auto error = failure(callbacks_.prepare(addresses, a.bytes, a.dtypes, a.ranks, &a.extents[0][0],
                                            a.pointer_count, a.ints, a.int_count, a.floats, a.float_count,
                                            reinterpret_cast<uintptr_t>(a.stream), message_, sizeof(message_)));
    if (!error) prepared_ = a;
    return error;
  }

  Returned invoke(const CallArguments&) override {
    int64_t returned = 0;
    const int status = callbacks_.call(&returned, message_, sizeof(message_));
    if (status == 0)
      return {.code = returned == static_cast<int>(returned) ? static_cast<int>(returned) : -1};
    message_[sizeof(message_) - 1] = '\0';
    if (status == 1) return {.code = -1, .raised = std::string(message_)};
    return {.code = -1, .raised = "(the worker's Python host failed: " + std::string(message_) + ")"};
  }

  Size workspace_bytes(const int64_t* ints, uint32_t count) override {
    Size size;
    size.error = failure(callbacks_.workspace_bytes(ints, count, &size.bytes, message_, sizeof(message_)));
    return size;
  }

 private:
  std::optional<std::string> failure(int status) {
    if (status == 0) return std::nullopt;
    message_[sizeof(message_) - 1] = '\0';
    return std::string(message_);
  }

  ptxbench_python_callbacks callbacks_;
  std::optional<CallArguments> prepared_;  // the arguments the script's tensors and stream are for
  char message_[480] = {};
};

}  // namespace
}  // namespace ptxbench::runner

extern "C" uint32_t ptxbench_worker_confine(void) {
  using namespace ptxbench::runner;
  // Triton's cache, which the runner names (python_worker in solution_process.h) and the solution cannot have
  // changed yet: when the judge shares it among an evaluation's stages, it lies outside /tmp.
  confinement = confine_solution_process(std::getenv("TRITON_CACHE_DIR"), started_for_debugger());
  return confinement.writes_confined ? confinement.threads : 0;
}

extern "C" int ptxbench_worker_serve(int socket, const ptxbench_python_callbacks* callbacks,
                                     const char* unavailable) {
  using namespace ptxbench::runner;
  // Close-on-exec, as the CUDA worker's: a program the solution's process starts (Triton runs ptxas and a C
  // compiler) does not inherit the socket.
  (void)fcntl(socket, F_SETFD, FD_CLOEXEC);
  if (unavailable != nullptr) return refuse_to_serve(socket, unavailable);
  if (callbacks == nullptr || !callbacks->load || !callbacks->prepare || !callbacks->call ||
      !callbacks->workspace_bytes)
    return 2;
  PythonBinding binding(*callbacks);
  return serve_solution(socket, confinement, binding);
}
