// The agent loop with a scripted model and a fake judge: stop conditions, what each turn shows, resuming
// after a crash at each point of a turn, error classes, feedback, the summary, and the reference model.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "agent/extract.h"
#include "agent/feedback.h"
#include "agent/prompt.h"
#include "agent/reference_model.h"
#include "agent/summary.h"
#include "agent_fakes.h"
#include "cli/project.h"
#include "compile/cache.h"
#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "fake_nvcc.h"
#include "util/files.h"

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::testing_agent;
using nlohmann::json;

namespace {

// Fails to compile on turn 1, fails the instruction stage on turn 2, passes at 0.8x then 1.1x.
std::string improving(int turn) {
  switch (turn) {
    case 1:
      return reply_with("int main( { oops");
    case 2:
      return reply_with("// FAIL instructions\n");
    case 3:
      return reply_with("// PASS x0.8\n");
    default:
      return reply_with("// PASS x1.1\n");
  }
}

// The real compile stage on this host, with no GPU stage.
EvalOptions cpu_eval_options(const fs::path& cache) {
  EvalOptions options;
  options.compile.cache_dir = cache;
  options.compile.include_dirs = ProjectPaths{.root = kRoot}.include_dirs("hopper");
  options.compile.nvcc = testing_compile::real_nvcc();
  options.compile.sandbox = testing_compile::compile_sandbox();
  options.gpu.absent_reason = "test: CPU only";
  return options;
}

std::vector<TurnRow> only_turns(AgentHarness& h, int64_t run_id) {
  auto trajectories = h.store.trajectories(run_id);
  EXPECT_EQ(trajectories.size(), 1u);
  return h.store.turns(trajectories.at(0).id);
}

}  // namespace

TEST(AgentLoop, UsesEveryTurnWithoutAStopCondition) {
  AgentHarness h("budget");
  ScriptedModel model(improving);
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 1, {.max_turns = 5});
  const int64_t run = start_agent_run(h.store, s);
  const auto result = h.run(run, s, model, judge);
  EXPECT_EQ(result.errors, 0);
  const auto turns = only_turns(h, run);
  ASSERT_EQ(turns.size(), 5u);
  EXPECT_EQ(h.store.trajectories(run)[0].status, kFinished);
  EXPECT_EQ(turns[0].error_class, "compile");
  EXPECT_EQ(turns[1].error_class, "instruction");
  EXPECT_EQ(turns[2].error_class, "");
  EXPECT_EQ(model.calls, 5);
  // After a pass, the next turn asks for speed.
  EXPECT_NE(model.requests[3].messages.back().content.find("make it faster"), std::string::npos);
  EXPECT_FALSE(h.store.run(run)->finished_at.empty());
}

// Each context policy, through the loop and the store: the messages the model is sent at turn 4, and the
// policy stored with the run (a resumed run keeps it).
TEST(AgentLoop, EachContextPolicySendsWhatItSays) {
  for (const auto& [policy, roles] : std::vector<std::pair<std::string, std::string>>{
           {"compact", "uau"}, {"last-pair", "uau"}, {"full", "uauauau"}}) {
    AgentHarness h("context-" + policy);
    ScriptedModel model([](int turn) { return reply_with("int oops" + std::to_string(turn) + ";"); });
    FakeJudge judge;
    auto s = h.settings({kHopperTask}, 1, {.max_turns = 4});
    s.context = policy;
    const int64_t run = start_agent_run(h.store, s);
    EXPECT_EQ(h.run(run, s, model, judge).errors, 0) << policy;
    ASSERT_EQ(model.requests.size(), 4u) << policy;
    std::string sent;
    for (const auto& m : model.requests[3].messages) sent += m.role[0];
    EXPECT_EQ(sent, roles) << policy;
    const std::string& last = model.requests[3].messages.back().content;
    EXPECT_EQ(last.find("Earlier turns") != std::string::npos, policy == "compact") << policy << ": " << last;
    EXPECT_EQ(agent_settings_from_json(h.store.run(run)->args).context, policy);
  }
}

// --knowledge with several levels: --samples trajectories of each task at each level, each trajectory shown
// its own level's kit and stored with it, in the order given.
TEST(AgentLoop, ARunSplitsItsTrajectoriesAmongItsKnowledgeLevels) {
  AgentHarness h("levels");
  ScriptedModel model([](int turn) { return reply_with("int oops" + std::to_string(turn) + ";"); });
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 2, {.max_turns = 1});
  s.knowledge = "params,patterns";
  const int64_t run = start_agent_run(h.store, s);
  EXPECT_EQ(h.run(run, s, model, judge).errors, 0);
  const auto trajectories = h.store.trajectories(run);
  ASSERT_EQ(trajectories.size(), 4u);
  std::vector<std::pair<int, std::string>> stored;
  for (const auto& t : trajectories) stored.emplace_back(t.sample, t.knowledge);
  std::sort(stored.begin(), stored.end());
  EXPECT_EQ(stored, (std::vector<std::pair<int, std::string>>{
                        {1, "params"}, {2, "params"}, {3, "patterns"}, {4, "patterns"}}));
  // Each trajectory's first message is its level's: only the patterns level shows the pattern documents.
  for (const auto& t : trajectories) {
    const std::string first = h.store.turns(t.id).at(0).request.dump();
    EXPECT_EQ(first.find("----- kits/hopper/patterns/") != std::string::npos, t.knowledge == "patterns")
        << t.sample;
  }
  s.knowledge = "params,params";
  EXPECT_THROW(start_agent_run(h.store, s), std::invalid_argument);
}

// A model whose window cannot hold even the first message: the trajectory stops with an error that names the
// limit (the run can be resumed once the catalogue says more), and nothing is sent cut short.
TEST(AgentLoop, AContextThatCannotFitIsAnErrorNamingTheLimit) {
  AgentHarness h("context-window");
  ScriptedModel model([](int turn) { return reply_with("int oops" + std::to_string(turn) + ";"); });
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 1, {.max_turns = 3});
  s.model_spec = {{"max_tokens", 1000}, {"context_tokens", 1100}};  // room for 300 characters
  const int64_t run = start_agent_run(h.store, s);
  std::vector<std::string> outcomes;
  const auto result =
      agent::run_agent(run, s,
                       {.store = &h.store,
                        .registry = &h.registry,
                        .provider = &model,
                        .evaluator = &judge,
                        .kits_dir = kRoot / "kits",
                        .on_event = [&](const TurnEvent& e) { outcomes.push_back(e.outcome); }});
  EXPECT_EQ(result.errors, 1);
  EXPECT_EQ(model.calls, 0) << "not even the first message fits: nothing is sent";
  bool named = false;
  for (const std::string& o : outcomes) named = named || o.find("more than the 300") != std::string::npos;
  EXPECT_TRUE(named) << (outcomes.empty() ? "" : outcomes.back());
  EXPECT_EQ(h.store.trajectories(run)[0].status, kError);
}

TEST(AgentLoop, StopsWhenVerifiedAndAtTheTargetSpeedup) {
  AgentHarness h("stop");
  {
    ScriptedModel model(improving);
    FakeJudge judge;
    auto s = h.settings({kHopperTask}, 1, {.max_turns = 8, .stop_when_verified = true});
    const int64_t run = start_agent_run(h.store, s);
    h.run(run, s, model, judge);
    EXPECT_EQ(only_turns(h, run).size(), 3u);
    EXPECT_EQ(h.store.trajectories(run)[0].status, kSolved);
  }
  {
    ScriptedModel model(improving);
    FakeJudge judge;
    auto s =
        h.settings({kHopperTask}, 1, {.max_turns = 8, .stop_when_verified = true, .target_speedup = 1.0});
    const int64_t run = start_agent_run(h.store, s);
    h.run(run, s, model, judge);
    EXPECT_EQ(only_turns(h, run).size(), 4u);  // 0.8x is not enough
    EXPECT_EQ(h.store.trajectories(run)[0].status, kSolved);
  }
  {
    ScriptedModel model([](int) { return reply_with("// INCOMPLETE"); });
    FakeJudge judge;
    auto s = h.settings({kHopperTask}, 1, {.max_turns = 8, .stop_when_verified = true});
    const int64_t run = start_agent_run(h.store, s);
    h.run(run, s, model, judge);
    EXPECT_EQ(only_turns(h, run).size(), 1u);  // a CPU host cannot verify: nothing more to learn
    EXPECT_EQ(h.store.trajectories(run)[0].status, kUnverified);
  }
}

TEST(AgentLoop, StopStatusRules) {
  const Verdict pass = passed_verdict("t", "x", 0.9);
  const Verdict fail = failed_at("t", "x", "correct", "wrong");
  EXPECT_EQ(stop_status({.max_turns = 8}, 1, &pass), std::nullopt);
  EXPECT_EQ(stop_status({.max_turns = 8}, 8, &fail), kFinished);
  EXPECT_EQ(stop_status({.max_turns = 8, .stop_when_verified = true}, 1, &pass), kSolved);
  EXPECT_EQ(stop_status({.max_turns = 8, .stop_when_verified = true, .target_speedup = 1.0}, 1, &pass),
            std::nullopt);
  EXPECT_EQ(stop_status({.max_turns = 8, .stop_when_verified = true}, 2, nullptr), std::nullopt);
  EXPECT_EQ(stop_status({.max_turns = 2, .stop_when_verified = true}, 2, nullptr), kFinished);
}

TEST(AgentLoop, EachTurnShowsThePreviousCodeAndItsVerdict) {
  AgentHarness h("request");
  ScriptedModel model(improving);
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 1, {.max_turns = 3});
  const int64_t run = start_agent_run(h.store, s);
  h.run(run, s, model, judge);
  ASSERT_EQ(model.requests.size(), 3u);
  const auto& first = model.requests[0];
  ASSERT_EQ(first.messages.size(), 1u);
  EXPECT_TRUE(first.messages[0].content.starts_with(std::string("Task: ") + kHopperTask));
  const auto& second = model.requests[1];
  ASSERT_EQ(second.messages.size(), 3u);
  EXPECT_EQ(second.messages[0].content, first.messages[0].content);
  EXPECT_NE(second.messages[1].content.find("int main( { oops"), std::string::npos);
  EXPECT_NE(second.messages[2].content.find("identifier \"oops\" is undefined"), std::string::npos);
  EXPECT_NE(second.messages[2].content.find("[compile] failed"), std::string::npos);
  const auto& third = model.requests[2];
  EXPECT_NE(third.messages[1].content.find("FAIL instructions"), std::string::npos);
  EXPECT_NE(third.messages[2].content.find("the instructions stage says no"), std::string::npos);
  EXPECT_NE(third.messages[2].content.find("- turn 1: failed at compile"), std::string::npos);
  // What was asked is what is stored.
  const auto turns = only_turns(h, run);
  EXPECT_EQ(turns[1].request, to_json(second));
}

// Code the trajectory has judged already is not judged again: the turn takes that evaluation, and the model
// is told which turn's verdict stands. Other code is judged as ever.
TEST(AgentLoop, TheSameCodeAgainTakesItsEarlierVerdict) {
  AgentHarness h("same-code");
  ScriptedModel model([](int turn) {
    return reply_with(turn == 4   ? "// PASS x1.1\n"
                      : turn == 2 ? "// FAIL correct\n"
                                  : "// FAIL instructions\n");
  });
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 1, {.max_turns = 4});
  const int64_t run = start_agent_run(h.store, s);
  h.run(run, s, model, judge);
  const auto turns = only_turns(h, run);
  ASSERT_EQ(turns.size(), 4u);
  EXPECT_EQ(judge.calls, 3);  // turns 1, 2 and 4
  EXPECT_EQ(turns[2].evaluation_id, turns[0].evaluation_id);
  EXPECT_EQ(turns[2].code_hash, turns[0].code_hash);
  EXPECT_EQ(turns[2].error_class, turns[0].error_class);
  EXPECT_EQ(turns[2].outcome, turns[0].outcome);
  EXPECT_NE(turns[2].feedback.find("the same as your turn 1's; it was not judged again"), std::string::npos)
      << turns[2].feedback;
  EXPECT_NE(turns[2].feedback.find("the instructions stage says no"), std::string::npos) << turns[2].feedback;
  EXPECT_EQ(turns[1].feedback.find("not judged again"), std::string::npos);
  EXPECT_NE(turns[3].evaluation_id, turns[0].evaluation_id);
  EXPECT_NE(model.requests[3].messages[2].content.find("the same as your turn 1's"), std::string::npos);
}

TEST(AgentLoop, AReplyWithoutCodeIsAFailedTurnThatSaysSo) {
  AgentHarness h("nocode");
  ScriptedModel model(
      [](int turn) { return turn == 1 ? std::string("I would use wgmma here.") : reply_with("// PASS x1"); });
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 1, {.max_turns = 3, .stop_when_verified = true});
  const int64_t run = start_agent_run(h.store, s);
  h.run(run, s, model, judge);
  const auto turns = only_turns(h, run);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].error_class, "extraction");
  EXPECT_EQ(turns[0].evaluation_id, 0);
  EXPECT_TRUE(turns[0].code_hash.empty());
  EXPECT_TRUE(turns[0].finished());
  EXPECT_EQ(judge.calls, 1);
  EXPECT_EQ(model.requests[1].messages[1].content, "I would use wgmma here.");
  EXPECT_NE(model.requests[1].messages[2].content.find("no fenced code block"), std::string::npos);
}

// An answer with no text (a reasoning model that spent its token limit) is a turn without code, and the next
// turn says why; it does not stop the trajectory as a failed call.
TEST(AgentLoop, AnAnswerWithoutTextIsASpentTurnThatSaysWhy) {
  AgentHarness h("notext");
  ScriptedModel model([](int) { return reply_with("// PASS x1"); });
  model.no_text_on_call = 1;
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 1, {.max_turns = 3, .stop_when_verified = true});
  const int64_t run = start_agent_run(h.store, s);
  h.run(run, s, model, judge);
  const auto turns = only_turns(h, run);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].error_class, "extraction");
  EXPECT_TRUE(turns[0].finished());
  const std::string& told = model.requests[1].messages[2].content;
  EXPECT_NE(told.find("your reply had no text (the reply has no text (finish_reason \"length\"))"),
            std::string::npos)
      << told;
  EXPECT_NE(told.find("output token limit"), std::string::npos) << told;
  EXPECT_EQ(judge.calls, 1);
}

// A crash at each point of a turn, then --resume: the stored trajectories equal an uninterrupted run's, a
// finished turn is never repeated, a stored reply is judged again and not asked again.
TEST(AgentLoop, ResumeAfterAModelFailureAsksAgain) {
  AgentHarness whole("whole"), broken("model-fails");
  auto s = whole.settings({kHopperTask, kOtherHopperTask}, 2, {.max_turns = 4, .stop_when_verified = true});
  {
    ScriptedModel model(improving);
    FakeJudge judge;
    const int64_t run = start_agent_run(whole.store, s);
    EXPECT_EQ(whole.run(run, s, model, judge).errors, 0);
  }
  const int64_t run = start_agent_run(broken.store, s);
  ScriptedModel failing(improving);
  failing.fail_on_call = 6;
  FakeJudge judge;
  const auto first = broken.run(run, s, failing, judge);
  EXPECT_EQ(first.errors, 1);
  EXPECT_TRUE(broken.store.run(run)->finished_at.empty());
  ScriptedModel model(improving);
  const auto resumed = broken.run(run, s, model, judge);
  EXPECT_EQ(resumed.errors, 0);
  EXPECT_EQ(resumed.driven, 1);  // only the trajectory that failed
  EXPECT_EQ(model.calls, 1);     // the failed turn asked again; it passed
  EXPECT_EQ(export_trajectories(broken.store, run, false), export_trajectories(whole.store, 1, false));
}

TEST(AgentLoop, ResumeAfterAJudgeCrashJudgesTheStoredReply) {
  AgentHarness whole("whole2"), broken("judge-crashes");
  auto s = whole.settings({kHopperTask}, 1, {.max_turns = 4, .stop_when_verified = true});
  {
    ScriptedModel model(improving);
    FakeJudge judge;
    whole.run(start_agent_run(whole.store, s), s, model, judge);
  }
  const int64_t run = start_agent_run(broken.store, s);
  ScriptedModel model(improving);
  FakeJudge crashing;
  crashing.crash_on_call = 2;
  EXPECT_EQ(broken.run(run, s, model, crashing).errors, 1);
  auto turns = only_turns(broken, run);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_TRUE(turns[1].answered());
  EXPECT_FALSE(turns[1].finished());
  EXPECT_EQ(model.calls, 2);
  FakeJudge judge;
  EXPECT_EQ(broken.run(run, s, model, judge).errors, 0);
  EXPECT_EQ(model.calls, 3);  // turn 2 was not asked again; turn 3 was asked
  EXPECT_EQ(export_trajectories(broken.store, run, false), export_trajectories(whole.store, 1, false));
}

// A full disk while nvcc runs is the host's failure, not the model's: the turn is not stored as a compile
// error, nothing is cached, and once the disk has room --resume judges the stored reply again (the model is
// not asked again).
TEST(AgentLoop, AHostFailureAtCompileLeavesTheTurnToResume) {
  AgentHarness h("disk-full");
  const fs::path full = h.dir / "disk-is-full";
  write_file(full, "");
  EvalOptions options = cpu_eval_options(h.dir / "cache");
  options.compile.nvcc = testing_compile::write_fake_nvcc(
      h.dir / "nvcc",
      "if [ -e '" + full.string() +
          "' ]; then echo 'cc1plus: fatal error: error writing to /tmp/ccX.s: No space left on "
          "device' >&2; exit 1; fi\nexec \"$REAL_NVCC\" \"$@\"");
  const uint64_t room = options.compile.min_free_bytes;
  options.compile.min_free_bytes = ~uint64_t{0};  // the disk full as the host sees it
  LocalEvaluator judge([&](const Task&) { return options; });
  ScriptedModel model([](int) { return reply_with("__global__ void tiny() {}"); });
  const auto s = h.settings({kHopperTask}, 1, {.max_turns = 1});
  const int64_t run = start_agent_run(h.store, s);
  EXPECT_EQ(h.run(run, s, model, judge).errors, 1);
  auto turns = only_turns(h, run);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_TRUE(turns[0].answered());
  EXPECT_FALSE(turns[0].finished()) << turns[0].error_class << ": " << turns[0].outcome;
  EXPECT_EQ(h.store.trajectories(run)[0].status, kError);
  EXPECT_EQ(compile_cache_usage(options.compile.cache_dir).entries, 0);

  fs::remove(full);
  options.compile.min_free_bytes = room;
  EXPECT_EQ(h.run(run, s, model, judge).errors, 0);
  EXPECT_EQ(model.calls, 1);
  turns = only_turns(h, run);
  ASSERT_TRUE(turns[0].finished());
  const auto verdict = h.store.verdict(turns[0].evaluation_id);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->stage("compile")->status, StageStatus::passed) << verdict->summary();
  EXPECT_EQ(h.store.trajectories(run)[0].status, kFinished);
}

TEST(AgentLoop, ParallelTrajectoriesStoreWhatSerialOnesDo) {
  AgentHarness serial("serial"), parallel("parallel");
  auto s = serial.settings({kHopperTask, kOtherHopperTask}, 3, {.max_turns = 4});
  ScriptedModel m1(improving), m2(improving);
  FakeJudge j1, j2;
  serial.run(start_agent_run(serial.store, s), s, m1, j1, 1);
  parallel.run(start_agent_run(parallel.store, s), s, m2, j2, 4);
  const json a = export_trajectories(serial.store, 1, false);
  EXPECT_EQ(a.size(), 6u);
  EXPECT_EQ(a, export_trajectories(parallel.store, 1, false));
  EXPECT_EQ(m2.calls, 24);
}

TEST(AgentFeedback, ClassesFollowTheFirstFailingStage) {
  EXPECT_EQ(classify(failed_at("t", "x", "compile", "e")), ErrorClass::compile);
  EXPECT_EQ(classify(failed_at("t", "x", "compile", "e", StageStatus::timeout)), ErrorClass::timeout);
  EXPECT_EQ(classify(failed_at("t", "x", "static", "e")), ErrorClass::forbidden);
  // A static stage that failed only for a missing entry point: the ABI's link error, a compile failure.
  Verdict unexported = failed_at("t", "x", "static", "e");
  unexported.stage_mut("static").details = {
      {"violations", {{{"rule", "entry-point"}, {"evidence", "ptxbench_gemm_bf16"}}}}};
  EXPECT_EQ(classify(unexported), ErrorClass::compile);
  unexported.stage_mut("static").details["violations"].push_back({{"rule", "dynamic-loading"}});
  EXPECT_EQ(classify(unexported), ErrorClass::forbidden);
  EXPECT_EQ(classify(failed_at("t", "x", "sanitize", "e")), ErrorClass::memory_safety);
  EXPECT_EQ(classify(failed_at("t", "x", "sanitize", "e", StageStatus::timeout)), ErrorClass::timeout);
  EXPECT_EQ(classify(failed_at("t", "x", "correct", "e")), ErrorClass::numerical);
  EXPECT_EQ(classify(failed_at("t", "x", "correct", "e", StageStatus::runtime_error)), ErrorClass::runtime);
  EXPECT_EQ(classify(failed_at("t", "x", "instructions", "e")), ErrorClass::instruction);
  EXPECT_EQ(classify(failed_at("t", "x", "time", "wrong output")), ErrorClass::timing);
  EXPECT_EQ(classify(failed_at("t", "x", "time", "work outside `stream`")), ErrorClass::forbidden);
  EXPECT_EQ(classify(passed_verdict("t", "x", 1)), ErrorClass::none);
  EXPECT_EQ(classify(failed_at("t", "x", "sanitize", "e", StageStatus::harness_error)), ErrorClass::harness);
  EXPECT_EQ(error_class_from_string("memory_safety"), ErrorClass::memory_safety);
}

TEST(AgentFeedback, IsCompactAndSaysWhatMatters) {
  Verdict v = failed_at("t", "x", "correct",
                        "3 of 3 shapes wrong. First: [0,1] expected 1 got 2\n" + std::string(5000, 'e'));
  const std::string text = compact_feedback(v, {.stage_chars = 300, .stage_lines = 5, .total_chars = 2000});
  EXPECT_NE(text.find("3 of 3 shapes wrong"), std::string::npos);
  EXPECT_NE(text.find("[... cut ...]"), std::string::npos);
  EXPECT_LT(text.size(), 1000u);
  EXPECT_NE(text.find("[instructions, time] skipped"), std::string::npos);  // one line for one reason
  const std::string fast = compact_feedback(passed_verdict("t", "x", 1.234));
  EXPECT_NE(fast.find("1.234x"), std::string::npos);
  EXPECT_NE(fast.find("Coverage: 99.0%"), std::string::npos);
}

TEST(AgentSummary, Arithmetic) {
  auto turn = [](int index, std::string error_class, bool correct, bool verified_turn,
                 std::optional<double> speedup) {
    return TurnFacts{.index = index,
                     .finished = true,
                     .error_class = std::move(error_class),
                     .correct = correct,
                     .verified = verified_turn,
                     .speedup = speedup,
                     .kernel_speedup = speedup ? std::optional<double>(*speedup + 0.05) : std::nullopt};
  };
  std::vector<TrajectoryFacts> t = {
      {"a", 1, kSolved, {turn(1, "compile", false, false, {}), turn(2, "", true, true, 0.9)}},
      {"a", 2, kFinished, {turn(1, "numerical", false, false, {}), turn(2, "instruction", true, false, 0.1)}},
      {"a",
       3,
       kSolved,
       {turn(1, "extraction", false, false, {}), turn(2, "compile", false, false, {}),
        turn(3, "", true, true, 1.2), turn(4, "", true, true, 1.1)}},
      {"a", 4, kFinished, {turn(1, "compile", false, false, {})}},
      {"b", 1, kUnverified, {TurnFacts{.index = 1, .finished = true}}},
  };
  const RunSummary s = summarize(7, t);
  ASSERT_EQ(s.tasks.size(), 2u);
  const TaskSummary& a = s.tasks[0];
  EXPECT_EQ(a.trajectories, 4);
  EXPECT_EQ(a.finished_turns, 9);
  EXPECT_DOUBLE_EQ(*a.correct_rate, 3.0 / 4);
  EXPECT_DOUBLE_EQ(*a.verified_rate, 2.0 / 4);
  EXPECT_DOUBLE_EQ(*a.best_speedup, 1.2);          // over verified turns: not 0.1x of the unverified one
  EXPECT_DOUBLE_EQ(*a.best_kernel_speedup, 1.25);  // the same turn's kernels
  EXPECT_DOUBLE_EQ(*a.turns_to_verified_mean, (2 + 3) / 2.0);
  EXPECT_EQ(a.error_classes.at("compile"), 3);
  EXPECT_EQ(a.error_classes.at("numerical"), 1);
  EXPECT_EQ(a.error_classes.at("instruction"), 1);
  EXPECT_EQ(a.error_classes.at("extraction"), 1);
  const TaskSummary& b = s.tasks[1];
  EXPECT_FALSE(b.correct_rate);  // nothing judged: unknown, not 0%
  EXPECT_FALSE(b.turns_to_verified_mean);
  EXPECT_EQ(s.total.trajectories, 5);
  EXPECT_DOUBLE_EQ(*s.total.verified_rate,
                   2.0 / 4);  // b's trajectory decided nothing: left out, as in the report
  EXPECT_NE(render(s).find("all"), std::string::npos);
  const std::string rendered = render(s);
  const size_t best = rendered.find("1.200x");  // task a's row: the best speedup, then its kernels'
  ASSERT_NE(best, std::string::npos) << rendered;
  EXPECT_LT(rendered.find("1.250x", best), rendered.find('\n', best)) << rendered;
  EXPECT_EQ(to_json(s)["tasks"][0]["error_classes"]["compile"], 3);
}

TEST(AgentSummary, ACompileFailureDecidesEvenWithoutAGpu) {
  // On any host a turn that did not compile is not correct; one that compiled but met no GPU is unknown.
  Verdict broken{.task_id = "t",
                 .stages = {{.name = "compile", .status = StageStatus::failed},
                            {.name = "correct", .status = StageStatus::skipped}}};
  Verdict untested{.task_id = "t",
                   .stages = {{.name = "compile", .status = StageStatus::passed},
                              {.name = "correct", .status = StageStatus::skipped}}};
  const TurnRow row{.index = 1, .outcome = "judged", .finished_at = "2026-12-01T00:00:00Z"};
  const TurnFacts failed = turn_facts(row, &broken), open = turn_facts(row, &untested);
  EXPECT_EQ(failed.correct, false);
  EXPECT_EQ(failed.verified, false);
  EXPECT_FALSE(open.correct.has_value());
  EXPECT_FALSE(open.verified.has_value());
  const RunSummary s = summarize(1, {{"c", 1, kFinished, {failed}}, {"d", 1, kFinished, {open}}});
  EXPECT_DOUBLE_EQ(*s.tasks[0].correct_rate, 0.0);  // decided: 0%, not unknown
  EXPECT_FALSE(s.tasks[1].correct_rate);
}

TEST(AgentSummary, FromAStoredRun) {
  AgentHarness h("summary");
  ScriptedModel model(improving);
  FakeJudge judge;
  auto s = h.settings({kHopperTask}, 2, {.max_turns = 8, .stop_when_verified = true});
  const int64_t run = start_agent_run(h.store, s);
  h.run(run, s, model, judge);
  const RunSummary summary = summarize_run(h.store, run);
  ASSERT_EQ(summary.tasks.size(), 1u);
  EXPECT_DOUBLE_EQ(*summary.tasks[0].verified_rate, 1.0);
  EXPECT_DOUBLE_EQ(*summary.tasks[0].turns_to_verified_mean, 3.0);
  EXPECT_DOUBLE_EQ(*summary.tasks[0].best_speedup, 0.8);
  EXPECT_EQ(summary.tasks[0].error_classes.at("compile"), 2);
}

TEST(ReferenceModel, FirstReplyIsBrokenAndTheSecondCompiles) {
  const TaskRegistry registry = TaskRegistry::load(kRoot / "tasks");
  ReferenceModel reference(kRoot / "solutions", registry, cuda_track());
  EXPECT_TRUE(reference.has_reference(kHopperTask));
  EXPECT_FALSE(reference.has_reference("gemm-bf16-n4096-k4096-sm100a"));

  const Task& task = *registry.find(kHopperTask);
  llm::Request request{.system = "s", .messages = {{"user", std::string("Task: ") + kHopperTask + "\n..."}}};
  const llm::Reply first = reference.complete(request);
  ASSERT_TRUE(first.ok);
  EXPECT_EQ(first.text, reference.complete(request).text);  // deterministic
  request.messages.push_back({"assistant", "..."});
  request.messages.push_back({"user", "verdict"});
  const llm::Reply second = reference.complete(request);
  const std::string shipped = read_file(kRoot / "solutions" / "reference" / "gemm_bf16_sm90a.cu");
  const Extraction broken = extract_code(cuda_track(), first.text),
                   fixed = extract_code(cuda_track(), second.text);
  ASSERT_TRUE(broken.found && fixed.found);
  EXPECT_EQ(fixed.code, shipped);
  EXPECT_NE(broken.code, shipped);

  // The real compile stage judges them (CPU only).
  const fs::path cache = fs::temp_directory_path() / ("ptxbench-reference-" + std::to_string(getpid()));
  const EvalOptions options = cpu_eval_options(cache);
  LocalEvaluator judge([&](const Task&) { return options; });
  const Verdict v1 = judge.evaluate({broken.code, "t1.cu"}, task);
  EXPECT_EQ(classify(v1), ErrorClass::compile);
  EXPECT_NE(v1.stage("compile")->message.find("ptxbench_check_arguments"), std::string::npos);
  const Verdict v2 = judge.evaluate({fixed.code, "t2.cu"}, task);
  EXPECT_EQ(v2.stage("compile")->status, StageStatus::passed) << v2.summary();
  EXPECT_EQ(v2.overall(), OverallStatus::incomplete) << v2.summary();
  fs::remove_all(cache);
}

TEST(ReferenceModel, WithoutAVerifiedSolutionItSaysSo) {
  const TaskRegistry registry = TaskRegistry::load(kRoot / "tasks");
  ReferenceModel reference(kRoot / "solutions", registry, cuda_track());
  // A task whose manifest has no reference solution, only the SIMT example, correct without the required
  // instructions (every shipped Hopper task has one: a manifest of the example alone).
  const fs::path alone = fs::temp_directory_path() / ("ptxbench-example-alone-" + std::to_string(getpid()));
  fs::create_directories(alone / "examples");
  fs::copy_file(kRoot / "solutions" / "examples" / "attention_prefill_paged_simt.cu",
                alone / "examples" / "attention_prefill_paged_simt.cu", fs::copy_options::overwrite_existing);
  write_file(alone / "solutions.json",
             R"([{"path": "examples/attention_prefill_paged_simt.cu", "tasks": "attention-prefill-paged-*",
                 "purpose": "correct without the required instructions",
                 "expect": {"compile": "passed", "static": "passed", "correct": "passed",
                            "instructions": "failed", "overall": "failed"}}])");
  const std::string prefill = ReferenceModel(alone, registry, cuda_track())
                                  .answer("attention-prefill-paged-gqa32x8-d128-p16-sm90a", 2);
  fs::remove_all(alone);
  EXPECT_NE(prefill.find("no solution"), std::string::npos) << prefill.substr(0, 300);
  EXPECT_NE(prefill.find("attention_prefill_paged_simt.cu"), std::string::npos);
  EXPECT_TRUE(extract_code(cuda_track(), prefill).found);
  // A static-only task: the reference Blackwell GEMM, said never to have run.
  const std::string blackwell = reference.answer("gemm-bf16-n4096-k4096-sm100a", 2);
  EXPECT_NE(blackwell.find("gemm_bf16_sm100a.cu, which has never run on a GPU"), std::string::npos)
      << blackwell.substr(0, 300);
  EXPECT_TRUE(extract_code(cuda_track(), blackwell).found);
  EXPECT_FALSE(reference.has_reference("gemm-bf16-n4096-k4096-sm100a"));
  const std::string unknown = reference.answer("no-such-task", 1);
  EXPECT_FALSE(extract_code(cuda_track(), unknown).found);
  // The broken variant without an entry point to break still fails to compile, deterministically.
  EXPECT_NE(break_on_purpose("int x;\n", "ptxbench_gemm_bf16").find("ptxbench_check_arguments()"),
            std::string::npos);
  EXPECT_EQ(break_on_purpose("extern \"C\" int f(int a,\n int b) {\n  return 0;\n}\n", "f"),
            "extern \"C\" int f(int a,\n int b) {\n  ptxbench_check_arguments(stream);  // validate the "
            "arguments first\n"
            "  return 0;\n}\n");
}

// In the Triton track it answers with the manifest's Triton solutions, in a ```python block; its broken copy
// fails the compile stage there too (the inserted line is not Python).
TEST(ReferenceModel, AnswersInItsTrack) {
  const TaskRegistry registry = TaskRegistry::load(kRoot / "tasks");
  const fs::path dir = fs::temp_directory_path() / ("ptxbench-reference-triton-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(PTXBENCH_TEST_DATA) / "triton" / "gemm_scan_fixture.py", dir / "gemm.py");
  fs::copy_file(kRoot / "solutions" / "examples" / "gemm_simt.cu", dir / "gemm_simt.cu");
  write_file(dir / "solutions.json", R"([
    {"path": "gemm_simt.cu", "tasks": "gemm-*", "purpose": "CUDA", "expect": {"overall": "passed"}},
    {"path": "gemm.py", "track": "triton", "tasks": "gemm-*-sm90a", "purpose": "Triton",
     "expect": {"overall": "passed"}}])");
  ReferenceModel triton(dir, registry, triton_track());
  EXPECT_TRUE(triton.has_reference(kHopperTask));
  EXPECT_FALSE(triton.has_reference("gemm-bf16-n4096-k4096-sm100a"));
  const Extraction fixed = extract_code(triton_track(), triton.answer(kHopperTask, 2));
  ASSERT_TRUE(fixed.found);
  EXPECT_EQ(fixed.language, "python");
  EXPECT_EQ(fixed.code, read_file(dir / "gemm.py"));
  const Extraction broken = extract_code(triton_track(), triton.answer(kHopperTask, 1));
  ASSERT_TRUE(broken.found);
  const CompileResult parsed = triton_track().compile(
      broken.code, *registry.find(kHopperTask),
      CompileOptions{.time_limit_s = 60, .sandbox = testing_compile::compile_sandbox()});
  EXPECT_EQ(parsed.status, CompileResult::Status::compile_error) << parsed.diagnostics;
  EXPECT_TRUE(extract_code(cuda_track(), ReferenceModel(dir, registry, cuda_track()).answer(kHopperTask, 2))
                  .code.starts_with("// "))
      << "the CUDA track keeps its own";
  fs::remove_all(dir);
}

// A full pool: the next acquire() waits until `device` is given back, and then gets it.
static void expect_acquire_waits_for_release(DevicePool& pool, const std::string& device, const char* why) {
  std::atomic<bool> got{false};
  std::thread waiting([&] {
    EXPECT_EQ(pool.acquire(), device);
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(got) << why;
  pool.release(device);
  waiting.join();
  EXPECT_TRUE(got);
}

// Several GPUs: each evaluation holds one, in the order given; the next waits until one is given back.
TEST(DevicePool, HandsOutEachGpuToOneEvaluationAtATime) {
  DevicePool pool({"0", "1"});
  EXPECT_EQ(pool.acquire(), "0");
  EXPECT_EQ(pool.acquire(), "1");
  expect_acquire_waits_for_release(pool, "1", "both GPUs are busy");
  // One GPU or none named: one evaluation at a time, on the GPU the runner inherits.
  DevicePool single({"3"});
  EXPECT_EQ(single.acquire(), "");
}

// Shared GPUs (run --gpu-share): each GPU to `share` evaluations, the least used first.
TEST(DevicePool, SharesEachGpuAmongAsManyEvaluationsAsAsked) {
  DevicePool pool({"0", "1"}, 2);
  EXPECT_EQ(pool.acquire(), "0");
  EXPECT_EQ(pool.acquire(), "1");
  EXPECT_EQ(pool.acquire(), "0");
  pool.release("0");
  EXPECT_EQ(pool.acquire(), "0") << "the least used";
  EXPECT_EQ(pool.acquire(), "1");
  expect_acquire_waits_for_release(pool, "1", "both GPUs hold two evaluations");
}

// The gate: shared stages side by side; a stage alone waits for them to leave, and no shared stage enters
// while it waits or runs; overlapped() says whether another stage was inside at some moment.
TEST(GpuGate, SharedStagesOverlapAndAStageAloneHasTheGpuToItself) {
  GpuGate gate;
  auto first = std::make_unique<GpuGate::Pass>(gate.enter(GpuGate::Use::shared));
  {
    const GpuGate::Pass second = gate.enter(GpuGate::Use::shared);
    EXPECT_TRUE(second.overlapped());
  }
  EXPECT_TRUE(first->overlapped()) << "the second entered while the first was inside";
  std::atomic<bool> alone_in{false}, shared_in{false};
  std::thread alone([&] {
    const GpuGate::Pass pass = gate.enter(GpuGate::Use::alone);
    alone_in = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(shared_in) << "no shared stage while one is alone";
    EXPECT_FALSE(pass.overlapped());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(alone_in) << "a shared stage is inside";
  std::thread shared([&] {
    const GpuGate::Pass pass = gate.enter(GpuGate::Use::shared);
    shared_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(shared_in) << "a stage waiting to be alone goes first";
  first.reset();
  alone.join();
  shared.join();
  EXPECT_TRUE(shared_in);
  const GpuGate::Pass lone = gate.enter(GpuGate::Use::shared);
  EXPECT_FALSE(lone.overlapped());
}

// Stages of one owner (an evaluation's, run beside each other on purpose) do not overlap each other; another
// owner's stage overlaps them all.
TEST(GpuGate, OnlyAnotherOwnersStageOverlaps) {
  GpuGate gate;
  const int first_evaluation = 0, second_evaluation = 0;
  auto sanitize = std::make_unique<GpuGate::Pass>(gate.enter(GpuGate::Use::shared, &first_evaluation));
  auto profile = std::make_unique<GpuGate::Pass>(gate.enter(GpuGate::Use::profiler, &first_evaluation));
  EXPECT_FALSE(sanitize->overlapped());
  EXPECT_FALSE(profile->overlapped());
  {
    const GpuGate::Pass other = gate.enter(GpuGate::Use::shared, &second_evaluation);
    EXPECT_TRUE(other.overlapped());
  }
  EXPECT_TRUE(sanitize->overlapped());
  EXPECT_TRUE(profile->overlapped());
}

// The profiler runs beside shared stages, one at a time, and never beside a stage alone.
TEST(GpuGate, TheProfilerRunsBesideSharedStagesButAloneOfItsKind) {
  GpuGate gate;
  auto shared = std::make_unique<GpuGate::Pass>(gate.enter(GpuGate::Use::shared));
  auto profiler = std::make_unique<GpuGate::Pass>(gate.enter(GpuGate::Use::profiler));
  EXPECT_TRUE(profiler->overlapped()) << "a shared stage was inside";
  EXPECT_TRUE(shared->overlapped());
  std::atomic<bool> second_in{false}, alone_in{false};
  std::thread second([&] {
    const GpuGate::Pass pass = gate.enter(GpuGate::Use::profiler);
    second_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(second_in) << "one profiler at a time";
  profiler.reset();
  second.join();
  EXPECT_TRUE(second_in);
  profiler = std::make_unique<GpuGate::Pass>(gate.enter(GpuGate::Use::profiler));
  shared.reset();
  std::thread alone([&] {
    const GpuGate::Pass pass = gate.enter(GpuGate::Use::alone);
    alone_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(alone_in) << "a stage alone waits for the profiler";
  profiler.reset();
  alone.join();
  EXPECT_TRUE(alone_in);
  const GpuGate::Pass lone = gate.enter(GpuGate::Use::profiler);
  EXPECT_FALSE(lone.overlapped());
}
