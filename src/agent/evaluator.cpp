#include "agent/evaluator.h"

#include "task/catalog.h"
#include "util/hash.h"

namespace ptxbench::agent {

bool uses_gpu(const Task& task, const EvalOptions& options) {
  const ArchInfo* arch = find_arch(task.arch);
  return options.gpu.present && task.mode == TaskMode::full && arch &&
         arch->compute_capability == options.gpu.compute_capability && !options.tools.runner.empty();
}

std::shared_ptr<std::mutex> LocalEvaluator::source_lock(const std::string& source) {
  const std::string key = sha256_hex(source);
  std::lock_guard lock(locks_mutex_);
  for (auto it = source_locks_.begin(); it != source_locks_.end();)  // forget the ones nobody holds
    it = it->second.expired() ? source_locks_.erase(it) : std::next(it);
  std::shared_ptr<std::mutex> mutex = source_locks_[key].lock();
  if (!mutex) source_locks_[key] = mutex = std::make_shared<std::mutex>();
  return mutex;
}

Verdict LocalEvaluator::evaluate(const Submission& submission, const Task& task) {
  const EvalOptions options = options_for_(task);
  const std::shared_ptr<std::mutex> same_source = source_lock(submission.source);
  if (!uses_gpu(task, options)) {
    std::lock_guard lock(*same_source);
    return ptxbench::evaluate(submission, task, options);
  }
  {
    std::lock_guard lock(*same_source);
    if (options.compile.use_cache) compile_solution(submission.source, task, options.compile);
  }
  std::lock_guard lock(gpu_);
  return ptxbench::evaluate(submission, task, options);
}

}  // namespace ptxbench::agent
