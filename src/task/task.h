// Tasks: what a solution must compute, on which architecture, with which instructions. One JSON file per task
// under tasks/; see docs/tasks.md for the fields.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "family/family.h"
#include "util/errors.h"

namespace ptxbench {

// A problem size: named dimensions (M, N, K for GEMM) and a label saying why it is checked.
struct Shape {
  std::string label;  // "main", "small-m", "odd-m", ...
  std::map<std::string, int64_t> dims;
  std::vector<std::string> order;  // the family's order of dimensions, for printing
  int64_t operator[](const std::string& name) const { return dims.at(name); }
  std::string to_string() const;  // "M=8192 N=4096 K=4096"
};

// An instruction family a solution must execute, with what proves it statically (PTX opcode prefixes) and
// dynamically (SASS opcode prefixes, as Nsight Compute names them).
struct RequiredFamily {
  std::string name;               // "wgmma", "tma", "mbarrier", "tcgen05.mma"
  std::vector<std::string> ptx;   // PTX opcode prefixes, e.g. "wgmma.mma_async"
  std::vector<std::string> sass;  // SASS opcode prefixes, e.g. "HGMMA"
  bool does_the_math = false;     // its instructions account for the task's FLOPs (coverage)
};

enum class TaskMode {
  full,         // compiled here, then run, checked and timed on a GPU of the task's architecture
  static_only,  // compiled and checked statically only (no GPU of this architecture to run on)
};

struct Task {
  std::string id;
  std::string title;
  std::string family;  // "gemm": its descriptor is find_family(family) (src/family)
  std::string arch;    // "sm_90a", "sm_100a"
  std::string dtype;   // "bf16"
  TaskMode mode = TaskMode::full;
  std::string description;
  Shape main_shape;
  std::vector<Shape> check_shapes;
  std::vector<RequiredFamily> required;
  double coverage_threshold = 0;  // share of the FLOPs the does_the_math family must account for
  Tolerance tolerance;            // every output's, unless `tolerances` names the output
  std::map<std::string, Tolerance> tolerances;  // per-output overrides, by the family's output names ("LSE")
  std::map<std::string, bool> parameters;       // the family's parameters ("causal"), each set by the file
  std::string baseline;                         // one of the family's ("cublaslt", "vendor-attention", "none")
  std::vector<std::string> tracks = {"cuda"};   // the tracks a solution may be written in (track/track.h)
  std::vector<std::string> groups;              // the task groups it belongs to ("gemm", "held-out")
  std::filesystem::path file;

  const Family& family_spec() const;   // the descriptor of `family` (a loaded task always has one)
  int64_t flops(const Shape& shape) const;  // the family's formula, with this task's parameters
  const Tolerance& tolerance_for(const std::string& output) const;
  std::vector<Shape> all_shapes() const;  // main first
};

// A task file that cannot be used: names the file, the field and what is wrong.
struct TaskFileError : ConfigError {
  TaskFileError(const std::filesystem::path& file, const std::string& field, const std::string& problem);
  std::filesystem::path file;
  std::string field;
};

Task load_task_file(const std::filesystem::path& file);

// What --tasks and the like name: comma-separated items, each an fnmatch glob over task ids ("gemm-*") or a
// task group by "@name" ("@held-out": the tasks whose files list the group). Task ids never hold a glob's
// special characters or a comma (the loader refuses them), so a group is the list of its ids.
class TaskSelection {
 public:
  TaskSelection() = default;
  explicit TaskSelection(std::vector<std::string> globs) : globs_(std::move(globs)) {}
  static TaskSelection none() { return TaskSelection(std::vector<std::string>{}); }
  bool matches(const std::string& task_id) const;
  const std::vector<std::string>& globs() const { return globs_; }

 private:
  std::vector<std::string> globs_ = {"*"};
};

class TaskRegistry {
 public:
  // Loads every *.json below `dir`. Any broken file, or two files with one id, is an error.
  static TaskRegistry load(const std::filesystem::path& dir);

  const std::vector<Task>& all() const { return tasks_; }
  const Task* find(const std::string& id) const;
  // The selection `text` names (TaskSelection); throws ConfigError for an unknown group or an empty item.
  TaskSelection select(const std::string& text) const;
  // The same for items given one by one (an empty list selects no task).
  TaskSelection select(const std::vector<std::string>& items) const;
  std::vector<const Task*> matching(const std::string& text) const;  // the tasks select(text) matches
  std::vector<std::string> groups() const;                            // every group a task names, sorted

 private:
  std::vector<Task> tasks_;
};

// "|out - ref| <= 0.002 + 0.01 * |ref|; LSE: |out - ref| <= 0.001 + 0 * |ref|", for people and models.
std::string describe_tolerances(const Task& task);
// "causal = true", or "" for a family without parameters.
std::string describe_parameters(const Task& task);
// "cublaslt (cuBLASLt's bf16 GEMM, ...)": the baseline's name and what it is (its descriptor), for people and
// models.
std::string describe_baseline(const Task& task);

nlohmann::json to_json(const Task& task);
std::string to_string(TaskMode mode);

}  // namespace ptxbench
