// Fakes for the agent's tests: a scripted model and a judge that needs no compiler or GPU.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/agent_run.h"
#include "eval/evaluator.h"
#include "llm/provider.h"
#include "store/store.h"
#include "util/hash.h"

namespace ptxbench::testing_agent {

namespace fs = std::filesystem;

inline const fs::path kRoot = PTXBENCH_SOURCE_DIR;

// Answers from a script: turn (1-based) -> reply text. Records every
// request. `fail_on_call` makes that call (1-based, over all trajectories) fail like an API error.
class ScriptedModel : public llm::Provider {
 public:
  explicit ScriptedModel(std::function<std::string(int turn)> script) : script_(std::move(script)) {}
  llm::Reply complete(const llm::Request& request) override {
    std::lock_guard lock(mutex_);
    ++calls;
    requests.push_back(request);
    if (calls == fail_on_call) return {.ok = false, .error = "HTTP 500 after 6 attempts", .http_status = 500};
    if (calls == no_text_on_call)
      return {.ok = false,
              .finish_reason = "length",
              .error = "the reply has no text (finish_reason \"length\")",
              .http_status = 200,
              .attempts = 1,
              .no_text = true};
    // The turn: later turns say "This is turn N." (a request shows only the turn before it).
    int turn = 1;
    const std::string& last = request.messages.back().content;
    if (auto p = last.find("This is turn "); p != std::string::npos) turn = std::stoi(last.substr(p + 13));
    return {.ok = true,
            .text = script_(turn),
            .finish_reason = "stop",
            .usage = {.input_tokens = 100, .output_tokens = 50},
            .attempts = 1,
            .latency_s = 0.25};
  }
  int calls = 0;
  int fail_on_call = 0;
  int no_text_on_call = 0;  // that call answers with no text (the token limit spent on reasoning)
  std::vector<llm::Request> requests;

 private:
  std::function<std::string(int)> script_;
  std::mutex mutex_;
};

inline std::string reply_with(const std::string& code) {
  return "Here:\n```cuda\n" + code + "\n```\n";
}

inline Verdict verdict_with(const std::string& task, const std::string& source,
                            std::vector<std::pair<std::string, StageStatus>> stages,
                            const std::string& message = "") {
  Verdict v;
  v.task_id = task;
  v.arch = "sm_90a";
  v.submission_hash = sha256_hex(source);
  v.source_name = "fake.cu";
  v.created_at = "2026-11-30T00:00:00Z";
  v.ptxbench_version = "test";
  v.host = "fake";
  for (const auto& [name, status] : stages)
    v.stages.push_back(
        {.name = name,
         .status = status,
         .message = status == StageStatus::passed || status == StageStatus::skipped ? "" : message});
  return v;
}

inline Verdict passed_verdict(const std::string& task, const std::string& source, double speedup) {
  Verdict v = verdict_with(task, source,
                           {{"compile", StageStatus::passed},
                            {"static", StageStatus::passed},
                            {"sanitize", StageStatus::passed},
                            {"correct", StageStatus::passed},
                            {"instructions", StageStatus::passed},
                            {"time", StageStatus::passed}});
  v.speedup = speedup;
  v.coverage = 0.99;
  return v;
}

inline Verdict failed_at(const std::string& task, const std::string& source, const std::string& stage,
                         const std::string& message, StageStatus status = StageStatus::failed) {
  std::vector<std::pair<std::string, StageStatus>> stages;
  bool after = false;
  for (const char* name : kStageNames) {
    stages.push_back({name, after ? StageStatus::skipped : name == stage ? status : StageStatus::passed});
    after = after || name == stage;
  }
  return verdict_with(task, source, stages, message);
}

// Judges by the code's text: "PASS x1.25" passes at 1.25x, "INCOMPLETE" is judged as a CPU host would,
// "FAIL <stage>" fails there; anything else fails to compile. `crash_on_call` throws on that call.
class FakeJudge : public Evaluator {
 public:
  Verdict evaluate(const Submission& submission, const Task& task) override {
    std::lock_guard lock(mutex_);
    ++calls;
    if (calls == crash_on_call) throw std::runtime_error("the judge crashed");
    const std::string& code = submission.source;
    if (auto p = code.find("PASS x"); p != std::string::npos)
      return passed_verdict(task.id, code, std::stod(code.substr(p + 6)));
    if (code.find("INCOMPLETE") != std::string::npos)
      return verdict_with(task.id, code,
                          {{"compile", StageStatus::passed},
                           {"static", StageStatus::passed},
                           {"sanitize", StageStatus::skipped},
                           {"correct", StageStatus::skipped},
                           {"instructions", StageStatus::skipped},
                           {"time", StageStatus::skipped}});
    if (auto p = code.find("FAIL "); p != std::string::npos) {
      const std::string stage = code.substr(p + 5, code.find_first_of(" \n", p + 5) - p - 5);
      return failed_at(task.id, code, stage, "the " + stage + " stage says no");
    }
    return failed_at(task.id, code, "compile", "error: identifier \"oops\" is undefined");
  }
  int calls = 0;
  int crash_on_call = 0;

 private:
  std::mutex mutex_;
};

// A fresh store and the project's tasks.
struct AgentHarness {
  explicit AgentHarness(const std::string& name)
      : dir(fs::temp_directory_path() / ("ptxbench-agent-" + name + "-" + std::to_string(getpid()))),
        store((fs::remove_all(dir), dir / "ptxbench.db")),
        registry(TaskRegistry::load(kRoot / "tasks")) {}
  ~AgentHarness() { fs::remove_all(dir); }

  agent::AgentRunSettings settings(std::vector<std::string> tasks, int samples, agent::LoopOptions loop) {
    agent::AgentRunSettings s;
    s.model = "scripted";
    s.knowledge = "params";
    s.task_ids = std::move(tasks);
    s.samples = samples;
    s.loop = loop;
    return s;
  }
  agent::AgentRunResult run(int64_t run_id, const agent::AgentRunSettings& s, llm::Provider& model,
                            Evaluator& judge, int parallel = 1) {
    return agent::run_agent(run_id, s,
                            {.store = &store,
                             .registry = &registry,
                             .provider = &model,
                             .evaluator = &judge,
                             .kits_dir = kRoot / "kits",
                             .parallel = parallel});
  }

  fs::path dir;
  Store store;
  TaskRegistry registry;
};

inline const char* kHopperTask = "gemm-bf16-n4096-k4096-sm90a";
inline const char* kOtherHopperTask = "gemm-bf16-n7168-k5120-sm90a";

}  // namespace ptxbench::testing_agent
