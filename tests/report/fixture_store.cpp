#include "fixture_store.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "agent/agent_run.h"
#include "store/store.h"
#include "util/hash.h"

namespace ptxbench::report_fixture {

namespace {

constexpr const char* kTask = "gemm-bf16-n4096-k4096-sm90a";

// A turn's outcome: "verified" with its speedup, a failing stage ("compile", "correct" for numerical,
// "instructions"), or "extraction" (no code).
struct Step {
  std::string outcome;
  double speedup = 0;
  std::optional<double> kernel_speedup = {};  // a verified turn's kernels alone: a launch log in its verdict
};

double stage_seconds(const std::string& stage) {
  if (stage == "compile") return 2.0;
  if (stage == "static") return 0.1;
  if (stage == "sanitize") return 1.0;
  if (stage == "correct") return 3.0;
  if (stage == "instructions") return 4.0;
  return 5.0;
}

Verdict verdict_for(const Step& step, const std::string& source) {
  Verdict v;
  v.task_id = kTask;
  v.arch = "sm_90a";
  v.submission_hash = sha256_hex(source);
  v.source_name = "fixture.cu";
  v.created_at = "2026-12-01T00:00:00Z";
  v.ptxbench_version = "test";
  v.host = "NVIDIA H200 (sm_90)";
  bool after = false;
  for (const char* name : kStageNames) {
    StageResult stage{.name = name};
    if (after) {
      stage.status = StageStatus::skipped;
    } else if (name == step.outcome) {
      stage.status = StageStatus::failed;
      stage.message = fmt::format("{} failed on purpose", name);
      stage.wall_s = std::string(name) == "compile" ? 1.0 : stage_seconds(name);
      after = true;
    } else {
      stage.status = StageStatus::passed;
      stage.wall_s = stage_seconds(name);
    }
    v.stages.push_back(stage);
  }
  if (step.outcome == "verified") {
    v.speedup = step.speedup;
    v.coverage = 0.99;
  }
  if (step.kernel_speedup) {  // the baseline took 100 us; the call's one kernel 100 / kernel_speedup us
    v.stage_mut("time").details["baseline"]["event_us"]["median"] = 100.0;
    v.stage_mut("instructions").details["binding"]["stages"]["time"]["signatures"] = {
        {{"calls", 52},
         {"launches", {{{"name", "kernel_2"}, {"duration_us", 100.0 / *step.kernel_speedup}}}}}};
  }
  return v;
}

std::string error_class_of(const std::string& outcome) {
  if (outcome == "verified") return "";
  if (outcome == "correct") return "numerical";
  if (outcome == "instructions") return "instruction";
  return outcome;  // compile, extraction
}

void add_run(Store& store, const std::string& model, int turns, bool stop_when_verified,
             const std::vector<std::vector<Step>>& samples, const std::string& track = "cuda",
             const std::string& knowledge = "contracts", const std::string& context = "compact",
             const std::string& feedback = "verdict") {
  agent::AgentRunSettings settings;
  settings.model = model;
  settings.context = context;
  settings.feedback = feedback;
  settings.track = track;
  settings.knowledge = knowledge;
  settings.tasks_pattern = kTask;
  settings.archs = {"sm_90a"};
  settings.task_ids = {kTask};
  settings.samples = static_cast<int>(samples.size());
  settings.loop.max_turns = turns;
  settings.loop.stop_when_verified = stop_when_verified;
  const int64_t run = agent::start_agent_run(store, settings);
  for (size_t s = 0; s < samples.size(); ++s) {
    const int sample = static_cast<int>(s) + 1;
    const int64_t trajectory = store.add_trajectory(run, kTask, sample, model, knowledge);
    for (size_t i = 0; i < samples[s].size(); ++i) {
      const Step& step = samples[s][i];
      const int n = static_cast<int>(i) + 1;
      const nlohmann::json request = {{"system", "fixture"},
                                      {"messages", {{{"role", "user"}, {"content", "Task: " + std::string(kTask)}}}}};
      const int64_t turn = store.begin_turn(trajectory, n, request);
      nlohmann::json meta = {
          {"finish_reason", "stop"},
          {"usage", {{"input_tokens", 1000 * n}, {"output_tokens", 100 * n}, {"reasoning_tokens", 50 * n}}},
          {"attempts", 1},
          {"latency_s", 2.0 * n}};
      // The second turn's server returned its reasoning beside the reply (vLLM's reasoning_content).
      if (n == 2)
        meta["reasoning"] = fmt::format("{} sample {}: the first turn failed, so <try> again", model, sample);
      const bool code = step.outcome != "extraction";
      const std::string source = fmt::format(
          "// {} sample {} turn {}\n#include <ptxbench/abi.h>\n__global__ void kernel_{}() {{}}\nint tile = {};\n",
          model, sample, n, n, 64 * n);
      store.record_reply(turn, code ? "```cuda\n" + source + "```" : "I have no code.", meta,
                         code ? std::optional<std::string>(source) : std::nullopt);
      const TurnEnd end{.error_class = error_class_of(step.outcome),
                        .outcome = code ? fmt::format("{} (fixture)", step.outcome) : "no code: no code block",
                        .feedback = fmt::format("Feedback on turn {}: {}", n, step.outcome)};
      if (code) {
        const Verdict verdict = verdict_for(step, source);
        store.finish_turn(turn, end, &verdict, source, run);
      } else {
        store.finish_turn(turn, end, nullptr, "", run);
      }
    }
    const bool solved = stop_when_verified && samples[s].back().outcome == "verified";
    store.set_trajectory_status(trajectory, solved ? "solved" : "finished");
  }
  store.finish_run(run);
}

}  // namespace

void write_fixture_store(const std::filesystem::path& database) {
  Store store(database);
  add_run(store, "m1", 4, false,
          {{{"compile"}, {"verified", 0.8}, {"verified", 1.2}, {"correct"}},
           {{"verified", 0.5}, {"verified", 0.9}, {"instructions"}, {"extraction"}},
           {{"extraction"}, {"compile"}, {"correct"}, {"instructions"}}});
  add_run(store, "m2", 2, true, {{{"verified", 1.5}}, {{"compile"}, {"correct"}}});
}

void write_two_track_store(const std::filesystem::path& database) {
  Store store(database);
  add_run(store, "m1", 2, true, {{{"verified", 1.1}}, {{"correct"}, {"verified", 0.7}}}, "cuda");
  add_run(store, "m1", 2, true, {{{"verified", 0.9, 1.25}}, {{"instructions"}, {"instructions"}}}, "triton");
}

void write_two_context_store(const std::filesystem::path& database) {
  Store store(database);
  add_run(store, "m1", 2, true, {{{"verified", 1.1}}, {{"correct"}, {"verified", 0.7}}});
  add_run(store, "m1", 2, true, {{{"compile"}, {"compile"}}, {{"correct"}, {"correct"}}}, "cuda", "contracts",
          "full");
  add_run(store, "m1", 2, true, {{{"compile"}, {"verified", 0.9}}}, "cuda", "contracts", "compact",
          "profile");
}

void write_ablation_store(const std::filesystem::path& database) {
  Store store(database);
  // Stored in neither the ablation's order nor the alphabet's, so that the report must put them in order.
  add_run(store, "m1", 3, false,
          {{{"verified", 1.4}, {"verified", 1.6}, {"verified", 1.6}},
           {{"compile"}, {"correct"}, {"verified", 1.0}}},
          "cuda", "contracts");
  add_run(store, "m1", 3, false,
          {{{"compile"}, {"compile"}, {"correct"}}, {{"compile"}, {"correct"}, {"instructions"}}}, "cuda",
          "templates");
  add_run(store, "m1", 3, false,
          {{{"extraction"}, {"compile"}, {"compile"}}, {{"compile"}, {"compile"}, {"compile"}}}, "cuda",
          "params");
  add_run(store, "m1", 3, false,
          {{{"correct"}, {"verified", 0.9}, {"verified", 1.1}}, {{"compile"}, {"compile"}, {"instructions"}}},
          "triton", "contracts");
}

}  // namespace ptxbench::report_fixture
