// The embedded default model, provider "reference": no network, deterministic. It answers every task with the
// solution shipped for it (solutions/solutions.json), first with a deliberately broken copy (a call to an
// undeclared function in the entry point: a compile error) so that the feedback path is exercised, then with
// the solution itself on every later turn.
//   - A task with a shipped solution expected to pass every stage: that solution (the reference GEMM on
//   Hopper).
//   - Otherwise a shipped solution expected to be correct (the SIMT example): it says so, and that it has no
//     solution using the required instructions; its verdicts fail the instruction stage.
//   - For a static-only task (Blackwell), where no GPU stage runs, a shipped solution expected to pass the
//     static stage (the reference Blackwell GEMM, never run): its verdicts are incomplete, never verified.
//   - Otherwise a reply without code saying it has no solution (an extraction failure, every turn).
// It answers in one track, with the manifest's solutions of that track.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "llm/provider.h"
#include "task/task.h"
#include "track/track.h"

namespace ptxbench::agent {

class ReferenceModel : public llm::Provider {
 public:
  // Reads the manifest and the sources it names once; throws ConfigError for a broken manifest.
  ReferenceModel(const std::filesystem::path& solutions_dir, const TaskRegistry& registry,
                 const Track& track);

  // The task comes from the first user message ("Task: <id>"), the turn from the assistant messages before
  // it.
  llm::Reply complete(const llm::Request& request) override;

  std::string answer(const std::string& task_id, int turn) const;
  // Whether it has a solution expected to pass every stage for the task.
  bool has_reference(const std::string& task_id) const;

 private:
  struct Shipped {
    std::string path;  // relative to solutions/
    std::string source;
    bool verified = false;     // expected to pass every stage
    bool static_only = false;  // for a static-only task: expected to pass the static stage, never run
  };
  std::map<std::string, Shipped> by_task_;
  std::map<std::string, std::string> entry_points_;  // task id -> the C symbol its solution defines
  const Track& track_;
};

// The deterministic broken variant: a call to an undeclared function inserted as the first statement of the
// entry point (after its opening brace), or an undeclared name at the end of the file when the entry point is
// not found. In a Python file (no extern "C", no brace) the line at the end is a syntax error: the compile
// stage fails it in either track.
std::string break_on_purpose(const std::string& source, const std::string& entry_point);

}  // namespace ptxbench::agent
