// The verdict: one JSON document per evaluation, every stage's status, numbers and the text a model should
// see. docs/verdict.md documents the format.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/documents.h"

namespace ptxbench {

enum class StageStatus {
  passed,
  failed,   // the submission is wrong at this stage (does not compile, wrong numbers, missing instructions)
  timeout,  // the submission ran past the stage's time limit and was killed
  runtime_error,  // the submission crashed or returned an error (CUDA error text in the message)
  skipped,        // not run: the reason is in the message (no GPU, an earlier stage failed, static-only task)
  harness_error,  // ptxbench itself could not run the stage; says nothing about the submission
};

// The stages, in the order they run.
inline constexpr const char* kStageNames[] = {"compile", "static",       "sanitize",
                                              "correct", "instructions", "time"};

struct StageResult {
  std::string name;
  StageStatus status = StageStatus::skipped;
  double wall_s = 0;
  std::string message;                                // one or a few lines a person or a model can act on
  nlohmann::json details = nlohmann::json::object();  // the stage's numbers
};

enum class OverallStatus {
  passed,      // every stage passed
  failed,      // some stage failed, timed out or crashed: the submission is rejected
  incomplete,  // nothing failed, but stages were skipped (no GPU here, or a static-only task)
  error,       // the harness could not judge (a harness_error and no failure)
};

struct Verdict {
  // Its JSON (to_json) is documents::verdict's format (util/documents.h).
  std::string task_id;
  std::string arch;
  std::string track = "cuda";   // the language of the submission (track/track.h)
  std::string submission_hash;  // sha256 of the source
  std::string source_name;      // the file name given, for people
  std::string created_at;       // UTC, ISO 8601
  std::string ptxbench_version;
  std::string host;  // "NVIDIA H200 (sm_90)" or "no GPU"
  // The GPU its GPU stages ran on, as the CUDA_VISIBLE_DEVICES value they were given (run --gpus N, worker
  // --gpu N): "1", or a UUID. Empty when they ran on the judge's own default GPU, or did not run.
  std::string device;
  std::vector<StageResult> stages;
  std::optional<double> speedup;   // baseline time / solution time, main shape
  std::optional<double> coverage;  // share of the FLOPs done by the required MMA instruction

  OverallStatus overall() const;
  // What the verdict decided, in the one meaning the run summary and the report share; nothing when the
  // stages that decide it did not run (no GPU of the task's architecture here, a static-only task, a harness
  // error). Correct: the correct stage passed; not correct: it failed, or a stage before it failed (the code
  // did not compile, broke a rule, or did not finish under the sanitizer).
  std::optional<bool> correct() const;
  // Verified: every stage passed (correct, the required instructions executed, timed); not: some stage
  // failed.
  std::optional<bool> verified() const;
  // The baseline's time over the solution's kernel time: the summed CUPTI durations of the kernels of the
  // timed calls (the time stage's launch log, kept in the instruction stage's `binding`). `speedup` times the
  // whole call, host time inside its clocks included; this is the kernels' speed alone. Nothing when either
  // is missing.
  std::optional<double> kernel_speedup() const;
  // Whether a later identical submission may be answered with this verdict (the evaluation service does):
  // not when the harness could not judge it, nor when a stage ran out of time, which a loaded host can cause
  // (the compile cache keeps no timeout either).
  bool reusable() const;
  const StageResult* stage(const std::string& name) const;
  StageResult& stage_mut(const std::string& name);
  std::string summary() const;   // one line: "failed at correct: 3 of 4 shapes mismatch"
  std::string feedback() const;  // the compact text a model sees on its next turn
};

// Keeps the larger of `best` and `candidate` (a verified turn's speedup), and beside it the kernel speedup of the
// same turn: a kernel figure always describes the turn whose speedup it stands beside.
inline void keep_best_speedup(std::optional<double>& best, std::optional<double>& kernels_of_best,
                              std::optional<double> candidate, std::optional<double> candidate_kernels) {
  if (!candidate || (best && *candidate <= *best)) return;
  best = candidate;
  kernels_of_best = candidate_kernels;
}

std::string to_string(StageStatus status);
StageStatus stage_status_from_string(const std::string& text);
std::string to_string(OverallStatus status);
nlohmann::json to_json(const Verdict& verdict);
Verdict verdict_from_json(const nlohmann::json& doc);

}  // namespace ptxbench
