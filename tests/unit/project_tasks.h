// The project's own task files (tasks/), loaded once, for tests that need a real task.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "task/task.h"

namespace ptxbench::test_support {

inline const Task& project_task(const std::string& id) {
  static const TaskRegistry registry =
      TaskRegistry::load(std::filesystem::path(PTXBENCH_SOURCE_DIR) / "tasks");
  const Task* task = registry.find(id);
  if (!task) throw std::runtime_error("no task " + id);
  return *task;
}

}  // namespace ptxbench::test_support
