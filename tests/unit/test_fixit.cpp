// Fixit offline: a student's agent run with a scripted model, mined; a teacher and a reasoner behind scripted
// fake OpenAI-compatible servers; the judge is the agent tests' fake (the seam every agent test uses instead
// of a GPU), whose verdicts pass only for code that says so. Covered: normalisation and deduplication,
// filters, quotas, repair verification (verified, correct-only and unverified kept apart), resume after a
// model error and a judge crash, the reasoning checks, spec parsing (the shipped specs too), the build end to
// end and resumed, and the export (every line parsed back, roles in order, the loss marked, every example's
// code a passing evaluation of the store; each format held to the schema of the trainer that reads it; the
// folder a Hugging Face dataset whose card names its splits; the source's knowledge level and the agent's own
// prompt).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "agent/extract.h"
#include "agent/feedback.h"
#include "agent/prompt.h"
#include "agent/summary.h"
#include "agent_fakes.h"
#include "fixit/build.h"
#include "fixit/dataset.h"
#include "fixit/fixit.h"
#include "spawned.h"
#include "util/files.h"
#include "util/subprocess.h"

using namespace ptxbench;
using namespace ptxbench::fixit;
using namespace ptxbench::testing_agent;
using nlohmann::json;


namespace {

// An OpenAI-compatible chat server on 127.0.0.1 answering each request with answer(the request's messages).
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<std::string(const json& messages)> answer) : answer_(std::move(answer)) {
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      const json body = json::parse(req.body);
      const int call = ++calls;
      if (call == stall_on_call) std::this_thread::sleep_for(std::chrono::seconds(5));  // killed meanwhile
      const std::string text = answer_(body.at("messages"));
      res.set_content(json{{"id", "x"},
                           {"object", "chat.completion"},
                           {"choices",
                            {{{"index", 0},
                              {"message", {{"role", "assistant"}, {"content", text}}},
                              {"finish_reason", "stop"}}}},
                           {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 20}}}}
                          .dump(),
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedServer() {
    server_.stop();
    thread_.join();
  }
  std::unique_ptr<llm::Provider> provider(const std::string& name) const {
    llm::ModelSpec spec{.name = name + "-" + std::to_string(port_),
                        .provider = "openai",
                        .base_url = "http://127.0.0.1:" + std::to_string(port_) + "/v1",
                        .model_id = name};
    spec.max_attempts = 1;
    return llm::make_provider(spec);
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::atomic<int> calls{0};
  int stall_on_call = 0;  // that call answers only after 5 s

 private:
  std::function<std::string(const json&)> answer_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

std::string last_user(const json& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it)
    if ((*it)["role"] == "user") return (*it)["content"].get<std::string>();
  return "";
}

// The student: per trajectory, turn 1 fails the correct stage (the same code but for a comment: one distinct
// attempt per task), turn 2 fails to compile (distinct each time), turn 3 passes.
struct Student {
  std::atomic<int> n{0};
  std::string operator()(int turn) {
    const int k = ++n;
    if (turn == 1) return reply_with(fmt::format("FAIL correct\n// attempt {}\n   int  a;", k));
    if (turn == 2) return reply_with(fmt::format("int oops{};", k));
    return reply_with(fmt::format("// PASS x1.1\n// try {}", k));
  }
};

// A store with the student's run: 2 tasks x 3 samples x 3 turns, the kit shown at `knowledge`.
int64_t student_run(AgentHarness& h, const std::string& knowledge = "params") {
  Student student;
  ScriptedModel model([&student](int turn) { return student(turn); });
  FakeJudge judge;
  auto settings = h.settings({kHopperTask, kOtherHopperTask}, 3, {.max_turns = 3});
  settings.model = "student";
  settings.knowledge = knowledge;
  const int64_t run = agent::start_agent_run(h.store, settings);
  EXPECT_EQ(h.run(run, settings, model, judge).errors, 0);
  return run;
}

std::map<std::string, int> count_by(const std::vector<Mined>& items, std::string Mined::*field) {
  std::map<std::string, int> out;
  for (const auto& m : items) ++out[m.*field];
  return out;
}

// The teacher: on the first task fails the instruction stage on its turn 1 (correct-only), passes on turn 2;
// on the other task answers what only a CPU host would judge (nothing failed, nothing verified).
std::string teacher_answer(const json& messages) {
  const std::string first = messages.at(0)["role"] == "system" ? messages.at(1)["content"].get<std::string>()
                                                               : messages.at(0)["content"].get<std::string>();
  int turn = 1;
  for (const auto& m : messages) turn += m["role"] == "assistant";
  if (first.find(kOtherHopperTask) != std::string::npos) return reply_with("// INCOMPLETE");
  return turn == 1 ? reply_with("// FAIL instructions\nint t1;") : reply_with("// PASS x1.3\nint fixed;");
}

std::string good_reasoning() {
  return "The verdict says the correct stage failed: the outputs did not match the reference on every shape. "
         "The cause is the accumulation, which is done in the wrong order, so partial sums are lost. The fix keeps "
         "the structure of the kernel and changes only how the partial results are combined, so that every "
         "element is written once, after all of its products are summed.";
}

std::vector<json> read_jsonl(const fs::path& file) {
  std::vector<json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));  // each line parses
  return lines;
}

}  // namespace

TEST(Fixit, NormalisedCodeIgnoresCommentsAndWhitespaceButNotStrings) {
  EXPECT_EQ(normalize_code("int  a; // x\n/* block\n */ int b;\n"), normalize_code("int a;\nint b;"));
  EXPECT_NE(normalize_code("int a;"), normalize_code("int b;"));
  EXPECT_NE(normalize_code("const char* s = \"// not a comment\";"), normalize_code("const char* s = \"\";"));
}

TEST(Fixit, MinesFailedTurnsDeduplicatedAndFiltered) {
  AgentHarness h("fixit-mine");
  const int64_t run = student_run(h);
  const auto all = mine(h.store, h.registry, {.runs = {run}});
  // Per task: one distinct turn-1 attempt (they differ only in a comment), three distinct compile failures.
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(count_by(all, &Mined::error_class), (std::map<std::string, int>{{"compile", 6}, {"numerical", 2}}));
  EXPECT_EQ(count_by(all, &Mined::task_id),
            (std::map<std::string, int>{{kHopperTask, 4}, {kOtherHopperTask, 4}}));
  for (const auto& m : all) {
    EXPECT_EQ(m.model, "student");
    const auto v = h.store.verdict(m.evaluation_id);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->overall(), OverallStatus::failed);
    EXPECT_EQ(v->submission_hash, m.code_hash);
  }
  EXPECT_EQ(mine(h.store, h.registry, {.runs = {run}, .error_classes = {"compile"}}).size(), 6u);
  EXPECT_EQ(mine(h.store, h.registry, {.runs = {run}, .max_turn = 1}).size(), 2u);
  EXPECT_EQ(mine(h.store, h.registry, {.runs = {run}, .min_turn = 2}).size(), 6u);
  EXPECT_EQ(mine(h.store, h.registry, {.runs = {run}, .tasks = "*n7168*"}).size(), 4u);
  EXPECT_EQ(mine(h.store, h.registry, {.runs = {run}, .model = "someone-else"}).size(), 0u);
  EXPECT_EQ(mine(h.store, h.registry, {}).size(), 8u);  // every agent run
  // Stored as a run and read back.
  const int64_t set = store_mined(h.store, {.runs = {run}}, all);
  const auto back = mined_set(h.store, set);
  ASSERT_EQ(back.size(), all.size());
  EXPECT_EQ(to_json(back[3]), to_json(all[3]));
  EXPECT_THROW(mined_set(h.store, run), std::invalid_argument);  // an agent run is no mined set
  // An item stored before it used the other documents' names reads the same.
  json old = to_json(all[3]);
  for (const auto& [now, before] : {std::pair{"run_id", "run"},
                                    {"trajectory_id", "trajectory"},
                                    {"submission", "code"},
                                    {"evaluation_id", "evaluation"}}) {
    old[before] = old[now];
    old.erase(now);
  }
  EXPECT_EQ(to_json(mined_from_json(old)), to_json(all[3]));
}

// Fixit's prompts and exports are CUDA's: a Triton run's failed turns are passed over, and naming one is an
// error.
TEST(Fixit, MinesCudaRunsOnly) {
  AgentHarness h("fixit-tracks");
  const int64_t cuda = student_run(h);
  ScriptedModel python(
      [](int turn) { return "```python\n# FAIL correct\nx = " + std::to_string(turn) + "\n```\n"; });
  FakeJudge judge;
  auto settings = h.settings({kHopperTask}, 1, {.max_turns = 2});
  settings.track = "triton";
  const int64_t triton = agent::start_agent_run(h.store, settings);
  ASSERT_EQ(h.run(triton, settings, python, judge).errors, 0);
  ASSERT_EQ(h.store.turns(h.store.trajectories(triton).at(0).id).at(0).error_class, "numerical")
      << "the Triton run has failed turns with code to mine";
  EXPECT_EQ(mine(h.store, h.registry, {}).size(), mine(h.store, h.registry, {.runs = {cuda}}).size());
  EXPECT_THROW(mine(h.store, h.registry, {.runs = {triton}}), std::invalid_argument);
}

TEST(Fixit, QuotasPerTaskAndPerClassStratifiedByClassAndTurn) {
  AgentHarness h("fixit-quotas");
  const int64_t run = student_run(h);
  // Two per task: one from each (class, turn) stratum.
  const auto two = mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_task = 2}});
  ASSERT_EQ(two.size(), 4u);
  EXPECT_EQ(count_by(two, &Mined::error_class), (std::map<std::string, int>{{"compile", 2}, {"numerical", 2}}));
  // One per task and class.
  EXPECT_EQ(mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_class = 1}}).size(), 4u);
  // Three per task, at most two of a class: 1 numerical + 2 compile per task.
  const auto three = mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_task = 3, .per_class = 2}});
  EXPECT_EQ(count_by(three, &Mined::error_class), (std::map<std::string, int>{{"compile", 4}, {"numerical", 2}}));
  // The seed chooses which compile failures; the same seed chooses the same ones.
  auto codes = [](const std::vector<Mined>& items) {
    std::set<std::string> out;
    for (const auto& m : items) out.insert(m.code_hash);
    return out;
  };
  const auto again = mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_task = 3, .per_class = 2}});
  EXPECT_EQ(codes(three), codes(again));
  bool some_seed_differs = false;
  for (uint64_t seed = 2; seed < 12 && !some_seed_differs; ++seed)
    some_seed_differs =
        codes(mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_task = 3, .per_class = 2}, .seed = seed})) !=
        codes(three);
  EXPECT_TRUE(some_seed_differs);
}

TEST(Fixit, MinesVerifiedTurnsForDirectGeneration) {
  AgentHarness h("fixit-correct");
  const int64_t run = student_run(h);
  const auto correct = mine(h.store, h.registry, {.runs = {run}, .correct = true});
  ASSERT_EQ(correct.size(), 2u);  // one distinct passing code per task
  for (const auto& m : correct) {
    EXPECT_TRUE(m.error_class.empty());
    EXPECT_TRUE(agent::verified(*h.store.verdict(m.evaluation_id)));
  }
  const auto examples = make_examples(h.store, h.registry, Layout::direct, {.correct = correct});
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].messages.size(), 3u);
  EXPECT_EQ(examples[0].messages[2]["weight"], 1);
  EXPECT_EQ(examples[0].meta["evaluation_id"], correct[0].evaluation_id);
}

TEST(Fixit, RepairKeepsOnlyVerifiedFixesAndMarksCorrectOnlyOnesApart) {
  AgentHarness h("fixit-repair");
  const int64_t run = student_run(h);
  const auto items = mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_task = 2}});
  ASSERT_EQ(items.size(), 4u);
  ScriptedServer server(teacher_answer);
  auto teacher = server.provider("teacher");
  FakeJudge judge;

  // One fix turn: the first task's teacher is only correct (instructions failed); the other's cannot be verified.
  const int64_t short_run = start_repair(h.store, {.teacher = "teacher", .turns = 1}, items);
  EXPECT_EQ(run_repair(short_run, h.store, h.registry, *teacher, judge, kRoot / "kits", 1).errors, 0);
  for (const auto& r : repairs(h.store, short_run))
    EXPECT_EQ(r.status, r.failure.task_id == kHopperTask ? kCorrectOnly : kUnverifiedFix) << r.failure.task_id;
  EXPECT_TRUE(make_examples(h.store, h.registry, Layout::fix, {.repairs = repairs(h.store, short_run)}).empty());

  // Two: the first task's fixes verify on turn 2.
  const int64_t repair_run = start_repair(h.store, {.teacher = "teacher", .turns = 2}, items);
  EXPECT_EQ(run_repair(repair_run, h.store, h.registry, *teacher, judge, kRoot / "kits", 2).errors, 0);
  const auto fixes = repairs(h.store, repair_run);
  ASSERT_EQ(fixes.size(), 4u);
  int verified = 0;
  for (const auto& r : fixes) {
    if (r.failure.task_id != kHopperTask) {
      EXPECT_EQ(r.status, kUnverifiedFix);
      continue;
    }
    ++verified;
    EXPECT_EQ(r.status, kVerified);
    EXPECT_EQ(r.fix_turn, 2);
    EXPECT_TRUE(agent::verified(*h.store.verdict(r.fix_evaluation_id)));
  }
  EXPECT_EQ(verified, 2);
  // The teacher was shown the failed code and the verdict on it.
  const auto turns = h.store.turns(fixes[0].trajectory_id);
  const std::string asked = turns.at(0).request["messages"][0]["content"];
  EXPECT_NE(asked.find(*h.store.source(fixes[0].failure.code_hash)), std::string::npos);
  EXPECT_NE(asked.find("An earlier attempt at this task failed"), std::string::npos);
  EXPECT_NE(asked.find(h.store.turns(fixes[0].failure.trajectory_id).at(fixes[0].failure.turn - 1).feedback),
            std::string::npos);
  EXPECT_NE(asked.find("Verdict: "), std::string::npos);

  const auto examples = make_examples(h.store, h.registry, Layout::fix, {.repairs = fixes, .teacher = "teacher"});
  ASSERT_EQ(examples.size(), 2u);
  for (const auto& e : examples) {
    const auto v = h.store.verdict(e.meta["evaluation_id"].get<int64_t>());
    ASSERT_TRUE(v);
    EXPECT_TRUE(agent::verified(*v));
    const std::string last = e.messages[4]["content"];
    EXPECT_NE(last.find(*h.store.source(e.meta["submission"].get<std::string>())), std::string::npos);
  }
  // A repair claimed verified whose evaluation did not pass is refused, not exported.
  Repair forged = fixes[0].failure.task_id == kHopperTask ? fixes[0] : fixes[1];
  forged.fix_evaluation_id = forged.failure.evaluation_id;
  forged.fix_hash = forged.failure.code_hash;
  EXPECT_THROW(make_examples(h.store, h.registry, Layout::fix, {.repairs = {forged}}), std::runtime_error);
}

TEST(Fixit, RepairResumesAfterAModelErrorAndAJudgeCrashWithoutAskingAgain) {
  AgentHarness h("fixit-resume");
  const int64_t run = student_run(h);
  const auto items = mine(h.store, h.registry, {.runs = {run}, .tasks = kHopperTask, .quotas = {.per_task = 2}});
  ASSERT_EQ(items.size(), 2u);
  auto script = [](int turn) { return turn == 1 ? reply_with("FAIL instructions") : reply_with("PASS x1.2"); };

  // Uninterrupted.
  ScriptedModel whole_teacher(script);
  FakeJudge whole_judge;
  const int64_t whole = start_repair(h.store, {.teacher = "t", .turns = 3}, items);
  EXPECT_EQ(run_repair(whole, h.store, h.registry, whole_teacher, whole_judge, kRoot / "kits", 1).errors, 0);

  // The model fails on its second call, the judge crashes on its third: both stop with an error.
  ScriptedModel teacher(script);
  teacher.fail_on_call = 2;
  FakeJudge judge;
  judge.crash_on_call = 3;
  const int64_t broken = start_repair(h.store, {.teacher = "t", .turns = 3}, items);
  const auto first = run_repair(broken, h.store, h.registry, teacher, judge, kRoot / "kits", 1);
  EXPECT_EQ(first.errors, 2);
  EXPECT_TRUE(h.store.run(broken)->finished_at.empty());
  ScriptedModel resumed_teacher(script);
  FakeJudge resumed_judge;
  EXPECT_EQ(run_repair(broken, h.store, h.registry, resumed_teacher, resumed_judge, kRoot / "kits", 1).errors, 0);
  EXPECT_FALSE(h.store.run(broken)->finished_at.empty());
  // Nothing asked twice: the answered-but-unjudged turn is judged, not asked again.
  EXPECT_EQ(teacher.calls - 1 + resumed_teacher.calls, whole_teacher.calls);
  auto statuses = [&](int64_t r) {
    std::vector<std::pair<std::string, int>> out;
    for (const auto& x : repairs(h.store, r)) out.push_back({x.status, x.fix_turn});
    return out;
  };
  EXPECT_EQ(statuses(broken), statuses(whole));
  EXPECT_EQ(statuses(whole), (std::vector<std::pair<std::string, int>>{{kVerified, 2}, {kVerified, 2}}));
}

TEST(Fixit, ReasoningIsCheckedForLengthAndPastedCode) {
  const std::string failed = "__global__ void kernel_with_a_long_name(float* out) {\n  out[0] = 1.0f;\n}\n";
  const std::string fix =
      "__global__ void kernel_with_a_long_name(float* out) {\n  out[threadIdx.x] = 1.0f + 0.0f;\n"
      "  asm volatile(\"wgmma.fence.sync.aligned;\");\n  unsigned long long descriptor_a = 0;\n"
      "  unsigned long long descriptor_b = 0;\n}\n";
  const ReasonLimits limits{.min_chars = 100, .max_chars = 800, .max_code_lines = 1};
  EXPECT_EQ(check_reasoning(good_reasoning(), failed, fix, limits), "");
  EXPECT_NE(check_reasoning("Too short.", failed, fix, limits).find("too short"), std::string::npos);
  EXPECT_NE(check_reasoning(std::string(900, 'x'), failed, fix, limits).find("too long"), std::string::npos);
  EXPECT_NE(check_reasoning(good_reasoning() + "\n```cuda\nint x;\n```\n", failed, fix, limits).find("code block"),
            std::string::npos);
  const std::string quoting = good_reasoning() + " asm volatile(\"wgmma.fence.sync.aligned;\"); and "
                                                 "unsigned long long descriptor_a = 0; then more.";
  EXPECT_NE(check_reasoning(quoting, failed, fix, limits).find("quotes 2 lines"), std::string::npos);
}

TEST(Fixit, ReasonerRunIsStoredRefusedAttemptsAskedAgainAndResumable) {
  AgentHarness h("fixit-reason");
  const int64_t run = student_run(h);
  const auto items = mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_task = 1}});
  ScriptedServer teacher_server(teacher_answer);
  FakeJudge judge;
  auto teacher = teacher_server.provider("teacher");
  const int64_t repair_run = start_repair(h.store, {.teacher = "teacher", .turns = 2}, items);
  ASSERT_EQ(run_repair(repair_run, h.store, h.registry, *teacher, judge, kRoot / "kits", 1).errors, 0);

  // The reasoner pastes the fix the first time it is asked about each fix, then explains.
  std::map<std::string, int> asked;
  std::mutex mutex;
  ScriptedServer server([&](const json& messages) {
    const std::string user = last_user(messages);
    std::lock_guard lock(mutex);
    if (++asked[user] == 1) return "Here is the fix:\n" + agent::fenced(cuda_track(), "int fixed;");
    return good_reasoning();
  });
  auto reasoner = server.provider("reasoner");
  const int64_t reason_run =
      start_reasoning(h.store, {.reasoner = "reasoner", .repair_run = repair_run, .limits = {.min_chars = 100}});
  const ReasonResult result = run_reasoning(reason_run, h.store, h.registry, *reasoner);
  EXPECT_EQ(result.fixes, 1);  // the verified one only
  EXPECT_EQ(result.accepted, 1);
  EXPECT_EQ(server.calls, 2);
  const auto texts = reasonings(h.store, reason_run);
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts.begin()->second, good_reasoning());
  // The reasoner saw the failed code, the verdict and the fix.
  const std::string shown = server.calls > 0 ? asked.begin()->first : "";
  EXPECT_NE(shown.find("the failed attempt"), std::string::npos);
  EXPECT_NE(shown.find("Verdict: "), std::string::npos);
  EXPECT_NE(shown.find("PASS x1.3"), std::string::npos);
  // Run again: nothing is asked.
  EXPECT_EQ(run_reasoning(reason_run, h.store, h.registry, *reasoner).accepted, 1);
  EXPECT_EQ(server.calls, 2);
}

// A spec is read as every JSON file a user names is: a key given twice, or a file that is not a regular one
// (a device read without end), is refused with the file's name, at once.
TEST(Fixit, ASpecWithAKeyTwiceOrThatIsNoFileIsRefused) {
  const fs::path dir = fs::temp_directory_path() / ("ptxbench-fixit-spec-" + std::to_string(getpid()));
  fs::create_directories(dir);
  write_file(dir / "twice.json", R"({"name": "a", "name": "b"})");
  try {
    load_spec(dir / "twice.json");
    ADD_FAILURE() << "a key given twice was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("given twice"), std::string::npos) << e.what();
  }
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(load_spec("/dev/zero"), std::invalid_argument);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  fs::remove_all(dir);
}

TEST(Fixit, ShippedSpecsParseAndBadOnesAreRefusedByField) {
  int shipped = 0;
  for (const auto& entry : fs::directory_iterator(kRoot / "fixit")) {
    if (entry.path().extension() != ".json") continue;
    ++shipped;
    const Spec spec = load_spec(entry.path());
    EXPECT_FALSE(spec.about.empty()) << entry.path();
    EXPECT_EQ(parse_spec(to_json(spec)).name, spec.name);  // round trip
  }
  EXPECT_GE(shipped, 7);
  const Spec s0 = load_spec(kRoot / "fixit" / "s0.json");
  EXPECT_TRUE(s0.correct_source);
  EXPECT_EQ(s0.layout, Layout::direct);
  const Spec s4 = load_spec(kRoot / "fixit" / "s4.json");
  EXPECT_EQ(s4.balance, Balance::after_repair);
  EXPECT_FALSE(s4.mine.quotas.any());  // mined whole, balanced after repair
  const Spec s5 = load_spec(kRoot / "fixit" / "s5.json");
  EXPECT_EQ(s5.mine.quotas.per_task, 33);
  EXPECT_EQ(load_spec(kRoot / "fixit" / "s6.json").reasoner, "@source");

  auto refused = [](const std::string& text) {
    try {
      parse_spec(json::parse(text));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string teacher = R"("teacher": {"model": "t"})";
  EXPECT_NE(refused(R"({"name": "x", "teachr": 1})").find("unknown field \"teachr\""), std::string::npos);
  EXPECT_NE(refused(R"({"name": 3})").find("\"name\""), std::string::npos);
  EXPECT_NE(refused(R"({"name": "x"})").find("needs a \"teacher\""), std::string::npos);
  EXPECT_NE(refused(R"({"name": "x", "source": "correct", )" + teacher + "}").find("no teacher"),
            std::string::npos);
  EXPECT_NE(refused(R"({"name": "x", "error_classes": ["extraction"], )" + teacher + "}").find("extraction"),
            std::string::npos);
  EXPECT_NE(refused(R"({"name": "x", "balance": {"when": "later", "per_task": 3}, )" + teacher + "}")
                .find("balance.when"),
            std::string::npos);
  EXPECT_NE(refused(R"({"name": "x", "balance": {"when": "after_repair"}, )" + teacher + "}").find("positive"),
            std::string::npos);
  EXPECT_NE(refused(R"({"name": "x", "reasoner": {"model": "r", "min_chars": 900, "max_chars": 100}, )" +
                    teacher + "}")
                .find("min_chars"),
            std::string::npos);
  EXPECT_EQ(refused(R"({"name": "x", "turns": {"min": 2}, )" + teacher + "}"), "accepted");
}

TEST(Fixit, BuildExportsChatJsonlWithACardAndResumes) {
  AgentHarness h("fixit-build");
  const int64_t run = student_run(h);
  ScriptedServer teacher_server(teacher_answer);
  ScriptedServer reasoner_server([](const json&) { return good_reasoning(); });
  auto teacher = teacher_server.provider("teacher");
  auto reasoner = reasoner_server.provider("reasoner");
  FakeJudge judge;
  Spec spec = parse_spec(json::parse(fmt::format(
      R"({{"name": "t5", "about": "test", "runs": [{}], "balance": {{"when": "before_repair", "per_task": 2}},
          "teacher": {{"model": "teacher", "turns": 2}}, "reasoner": {{"model": "reasoner", "min_chars": 100}},
          "holdout": ["*n7168*"]}})",
      run)));
  const BuildContext context{.store = &h.store,
                             .registry = &h.registry,
                             .kits_dir = kRoot / "kits",
                             .model = [&](const std::string& role, const std::string& name,
                                          const json&) -> ChosenModel {
                               return {role == "teacher" ? teacher.get() : reasoner.get(), {{"name", name}}};
                             },
                             .judge = &judge,
                             .parallel = 2};
  const fs::path out = h.dir / "t5";
  const BuildResult built = build_variant(spec, out, ExportFormat::messages, context);
  ASSERT_TRUE(built.complete);
  // Per task two failures mined; the first task's are verified on turn 2, the second task's cannot be.
  EXPECT_EQ(built.exported.train, 2);
  EXPECT_EQ(built.exported.test, 0);
  EXPECT_FALSE(fs::exists(out / "test.jsonl"));  // no held-out example: no test split
  const auto lines = read_jsonl(out / "train.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  const std::vector<std::string> roles = {"system", "user", "assistant", "user", "assistant"};
  for (const auto& line : lines) {
    ASSERT_EQ(line["messages"].size(), roles.size());
    for (size_t i = 0; i < roles.size(); ++i) EXPECT_EQ(line["messages"][i]["role"], roles[i]) << i;
    EXPECT_EQ(line["messages"][2]["weight"], 0);
    EXPECT_EQ(line["messages"][4]["weight"], 1);
    EXPECT_FALSE(line["messages"][0].contains("weight"));
    const std::string last = line["messages"][4]["content"];
    EXPECT_EQ(last.rfind(good_reasoning(), 0), 0u);  // the reasoning, then the code
    const auto v = h.store.verdict(line["metadata"]["evaluation_id"].get<int64_t>());
    ASSERT_TRUE(v);
    EXPECT_TRUE(agent::verified(*v));
    EXPECT_EQ(agent::extract_code(cuda_track(), last).code, *h.store.source(v->submission_hash));
    EXPECT_EQ(line["metadata"]["split"], "train");
    EXPECT_EQ(line["metadata"]["teacher"], "teacher");
    EXPECT_EQ(line["metadata"]["reasoner"], "reasoner");
  }
  const json card = json::parse(read_file(out / "card.json"));
  EXPECT_EQ(card["counts"]["task"][kHopperTask]["train"], 2);
  EXPECT_EQ(card["heldout_tasks"].size(), 0u);
  EXPECT_EQ(card["pipeline"]["repairs"][kUnverifiedFix], 2);
  EXPECT_EQ(card["judge_versions"], json::array({"test"}));
  EXPECT_NE(read_file(out / "README.md").find("Per error class"), std::string::npos);

  // The same build again: every step is found done; nothing is asked; the same lines.
  const int teacher_calls = teacher_server.calls, reasoner_calls = reasoner_server.calls;
  const BuildResult again = build_variant(spec, out, ExportFormat::messages, context);
  EXPECT_EQ(again.state.repair_run, built.state.repair_run);
  EXPECT_EQ(teacher_server.calls, teacher_calls);
  EXPECT_EQ(reasoner_server.calls, reasoner_calls);
  EXPECT_EQ(read_jsonl(out / "train.jsonl"), lines);
  // Another spec into the same folder is refused.
  Spec other = spec;
  other.name = "other";
  EXPECT_THROW(build_variant(other, out, ExportFormat::messages, context), std::invalid_argument);

  // Held out by task: the first task's examples go to test.jsonl; the other formats.
  ExampleSources sources{.repairs = repairs(h.store, built.state.repair_run),
                         .reasoning = reasonings(h.store, built.state.reason_run),
                         .need_reasoning = true};
  const auto examples = make_examples(h.store, h.registry, Layout::fix, sources);
  const auto split = export_examples(examples, h.dir / "split", ExportFormat::openai, {"*n4096-k4096*"},
                                      TaskSelection({"*n4096-k4096*"}), {});
  EXPECT_EQ(split.train, 0);
  EXPECT_EQ(split.test, 2);
  const std::string card_text = read_file(h.dir / "split" / "README.md");  // the card names no empty train split
  EXPECT_NE(card_text.find("  data_files:\n  - split: test\n    path: test.jsonl\n---\n"), std::string::npos)
      << card_text;
  const auto openai_lines = read_jsonl(h.dir / "split" / "test.jsonl");
  const auto openai_meta = read_jsonl(h.dir / "split" / kOpenaiMetadataFile);
  ASSERT_EQ(openai_meta.size(), openai_lines.size());
  for (size_t i = 0; i < openai_lines.size(); ++i) {
    EXPECT_EQ(openai_lines[i].size(), 1u);  // messages alone
    EXPECT_EQ(openai_lines[i]["messages"].size(), 5u);
    EXPECT_EQ(openai_meta[i]["split"], "test");
    EXPECT_EQ(openai_meta[i]["line"], i + 1);
    EXPECT_TRUE(agent::verified(*h.store.verdict(openai_meta[i]["evaluation_id"].get<int64_t>())));
  }
  export_examples(examples, h.dir / "pc", ExportFormat::prompt_completion, {}, TaskSelection::none(), {});
  for (const auto& line : read_jsonl(h.dir / "pc" / "train.jsonl")) {
    EXPECT_EQ(line["prompt"].size(), 4u);
    ASSERT_EQ(line["completion"].size(), 1u);
    EXPECT_EQ(line["completion"][0]["role"], "assistant");
    EXPECT_FALSE(line["prompt"][2].contains("weight"));
  }
}

TEST(Fixit, BuildBalancedAfterRepairKeepsQuotasOfVerifiedFixes) {
  AgentHarness h("fixit-after");
  const int64_t run = student_run(h);
  ScriptedModel teacher([](int turn) { return turn == 1 ? reply_with("FAIL time") : reply_with("PASS x2"); });
  FakeJudge judge;
  Spec spec = parse_spec(json::parse(fmt::format(
      R"({{"name": "t4", "runs": [{}], "balance": {{"when": "after_repair", "per_task": 1}},
          "teacher": {{"model": "teacher", "turns": 2}}}})",
      run)));
  const BuildResult built =
      build_variant(spec, h.dir / "t4", ExportFormat::messages,
                    {.store = &h.store,
                     .registry = &h.registry,
                     .kits_dir = kRoot / "kits",
                     .model = [&](const std::string&, const std::string&,
                                  const json&) { return ChosenModel{&teacher, {}}; },
                     .judge = &judge,
                     .parallel = 1});
  ASSERT_TRUE(built.complete);
  EXPECT_EQ(built.exported.card["pipeline"]["mined"], 8);  // all mined, all repaired
  EXPECT_EQ(built.exported.card["pipeline"]["repairs"][kVerified], 8);
  EXPECT_EQ(built.exported.train, 2);  // then one per task
  for (const auto& line : read_jsonl(h.dir / "t4" / "train.jsonl"))
    EXPECT_EQ(line["messages"][4]["content"].get<std::string>().rfind("```cuda", 0), 0u);  // no reasoner: the fix
}

// --- the export's formats, each against the schema its trainer documents; the dataset folder ---

namespace {

// Verified fixes of the student's failures (two per task, the teacher's second turn passes) and the
// student's verified solutions, from a run at `knowledge`.
struct ExportSources {
  int64_t repair_run = 0;
  std::vector<Repair> fixes;
  std::vector<Mined> correct;
};

ExportSources export_sources(AgentHarness& h, const std::string& knowledge = "params") {
  const int64_t run = student_run(h, knowledge);
  ScriptedModel teacher([](int turn) { return turn == 1 ? reply_with("FAIL time") : reply_with("PASS x2"); });
  FakeJudge judge;
  const int64_t repair_run = start_repair(h.store, {.teacher = "teacher", .turns = 2},
                                          mine(h.store, h.registry, {.runs = {run}, .quotas = {.per_task = 2}}));
  EXPECT_EQ(run_repair(repair_run, h.store, h.registry, teacher, judge, kRoot / "kits", 1).errors, 0);
  return {.repair_run = repair_run,
          .fixes = repairs(h.store, repair_run),
          .correct = mine(h.store, h.registry, {.runs = {run}, .correct = true})};
}

std::vector<Example> fix_examples(AgentHarness& h, const ExportSources& s,
                                  PromptSource prompt = PromptSource::statement) {
  return make_examples(h.store, h.registry, Layout::fix,
                       {.repairs = s.fixes, .teacher = "teacher", .prompt = prompt});
}

std::vector<Example> direct_examples(AgentHarness& h, const ExportSources& s,
                                     PromptSource prompt = PromptSource::statement) {
  return make_examples(h.store, h.registry, Layout::direct, {.correct = s.correct, .prompt = prompt});
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

// A chat message as TRL's dataset formats and OpenAI's chat fine-tuning format write one: an object whose
// "role" is system, user or assistant and whose "content" is a string (here never empty).
void expect_chat_message(const json& m, const std::string& where) {
  ASSERT_TRUE(m.is_object()) << where;
  ASSERT_TRUE(m.contains("role") && m["role"].is_string()) << where;
  const std::string role = m["role"];
  EXPECT_TRUE(role == "system" || role == "user" || role == "assistant") << where << ": " << role;
  ASSERT_TRUE(m.contains("content") && m["content"].is_string()) << where;
  EXPECT_FALSE(m["content"].get<std::string>().empty()) << where;
}

std::vector<std::string> roles_of(const json& messages) {
  std::vector<std::string> roles;
  for (const auto& m : messages) roles.push_back(m.at("role"));
  return roles;
}

// What `datasets` needs of a JSON Lines file to build one table of it: every line an object of the same
// fields, each field of one JSON type on every line (objects compared field by field).
json shape_of(const json& value) {
  if (!value.is_object()) return value.type_name();
  json shape = json::object();
  for (const auto& [key, field] : value.items())
    shape[key] = field.is_array() ? json("array") : shape_of(field);
  return shape;
}

void expect_one_shape(const std::vector<json>& lines, const std::string& where) {
  ASSERT_FALSE(lines.empty()) << where;
  for (const auto& line : lines) EXPECT_EQ(shape_of(line), shape_of(lines.front())) << where;
}

const std::vector<std::string> kFixRoles = {"system", "user", "assistant", "user", "assistant"};
const std::vector<std::string> kDirectRoles = {"system", "user", "assistant"};

}  // namespace

// The default format, prompt-completion, is TRL's conversational prompt-completion type (its "Dataset
// formats" page): "prompt" a list of messages, "completion" a list holding the assistant's answer;
// SFTTrainer's loss is on the completion alone by default. Here the completion is the fix (or the verified
// code) and nothing else, and no line carries a "weight", which TRL would not read.
TEST(FixitExport, PromptCompletionIsTrlsConversationalPromptCompletionWithTheFixAsTheCompletion) {
  AgentHarness h("fixit-pc");
  const ExportSources sources = export_sources(h);
  for (const bool fix : {true, false}) {
    const auto examples = fix ? fix_examples(h, sources) : direct_examples(h, sources);
    ASSERT_EQ(examples.size(), fix ? 4u : 2u);
    const fs::path dir = h.dir / (fix ? "pc-fix" : "pc-direct");
    export_examples(examples, dir, ExportFormat::prompt_completion, {}, TaskSelection::none(), {});
    const auto lines = read_jsonl(dir / "train.jsonl");
    ASSERT_EQ(lines.size(), examples.size());
    expect_one_shape(lines, dir.string());
    for (size_t i = 0; i < lines.size(); ++i) {
      const json& line = lines[i];
      const std::string where = fmt::format("{} line {}", dir.filename().string(), i + 1);
      EXPECT_EQ(keys_of(line), (std::set<std::string>{"prompt", "completion", "metadata"})) << where;
      ASSERT_TRUE(line["prompt"].is_array()) << where;
      ASSERT_TRUE(line["completion"].is_array()) << where;
      ASSERT_EQ(line["completion"].size(), 1u) << where;  // one message: the answer to learn
      for (const json* part : {&line["prompt"], &line["completion"]})
        for (const auto& m : *part) {
          expect_chat_message(m, where);
          EXPECT_EQ(keys_of(m), (std::set<std::string>{"role", "content"})) << where << ": no weight";
        }
      const json& answer = line["completion"][0];
      EXPECT_EQ(answer["role"], "assistant") << where;
      EXPECT_EQ(line["prompt"].back()["role"], "user") << where;  // the completion answers the last user turn
      std::vector<std::string> roles = roles_of(line["prompt"]);
      roles.push_back(answer["role"]);
      EXPECT_EQ(roles, fix ? kFixRoles : kDirectRoles) << where;
      // The completion is the example's last message, the one verified: its code is the passing submission.
      EXPECT_EQ(answer["content"], examples[i].messages.back()["content"]) << where;
      ASSERT_TRUE(line["metadata"].is_object()) << where;
      const auto v = h.store.verdict(line["metadata"]["evaluation_id"].get<int64_t>());
      ASSERT_TRUE(v) << where;
      EXPECT_TRUE(agent::verified(*v)) << where;
      EXPECT_EQ(agent::extract_code(cuda_track(), answer["content"].get<std::string>()).code,
                *h.store.source(v->submission_hash))
          << where;
      if (fix) {  // the failed attempt is in the prompt: context, never a target
        const auto failed = h.store.source(line["metadata"]["failed_submission"].get<std::string>());
        ASSERT_TRUE(failed) << where;
        EXPECT_EQ(line["prompt"][2]["content"], agent::fenced(cuda_track(), *failed)) << where;
      }
    }
    EXPECT_EQ(json::parse(read_file(dir / "card.json"))["format"], "prompt-completion");
  }
}

// openai is OpenAI's chat fine-tuning format: a line is {"messages": [...]} and nothing else; "weight" (0 or
// 1) is allowed on assistant messages only, and the loss covers those of weight 1: the fix alone. What each
// line is, is in metadata/examples.jsonl, with its split and line.
TEST(FixitExport, OpenaiIsOpenAisChatFineTuningFormatWithTheLossOnTheFixAlone) {
  AgentHarness h("fixit-openai");
  const ExportSources sources = export_sources(h);
  for (const bool fix : {true, false}) {
    const auto examples = fix ? fix_examples(h, sources) : direct_examples(h, sources);
    const fs::path dir = h.dir / (fix ? "openai-fix" : "openai-direct");
    const auto result = export_examples(examples, dir, ExportFormat::openai, {"*n4096-k4096*"},
                                     TaskSelection({"*n4096-k4096*"}), {});
    EXPECT_EQ(result.train + result.test, static_cast<int>(examples.size()));
    EXPECT_GT(result.test, 0);
    const auto metadata = read_jsonl(dir / kOpenaiMetadataFile);
    ASSERT_EQ(metadata.size(), examples.size());
    size_t next = 0;  // metadata lines: the train split's, then the test split's
    for (const char* split : {kTrainSplit, kTestSplit}) {
      const auto lines = read_jsonl(dir / fmt::format("{}.jsonl", split));
      ASSERT_EQ(lines.size(),
                static_cast<size_t>(split == std::string(kTrainSplit) ? result.train : result.test));
      for (size_t i = 0; i < lines.size(); ++i) {
        const json& line = lines[i];
        const std::string where = fmt::format("{} {} line {}", dir.filename().string(), split, i + 1);
        EXPECT_EQ(keys_of(line), std::set<std::string>{"messages"}) << where;
        ASSERT_TRUE(line["messages"].is_array()) << where;
        EXPECT_EQ(roles_of(line["messages"]), fix ? kFixRoles : kDirectRoles) << where;
        std::vector<int> weights;
        for (const auto& m : line["messages"]) {
          expect_chat_message(m, where);
          if (m["role"] != "assistant") {
            EXPECT_EQ(keys_of(m), (std::set<std::string>{"role", "content"}))
                << where << ": weight on assistants only";
            continue;
          }
          EXPECT_EQ(keys_of(m), (std::set<std::string>{"role", "content", "weight"})) << where;
          ASSERT_TRUE(m["weight"].is_number_integer()) << where;
          weights.push_back(m["weight"].get<int>());
        }
        const std::vector<int> expected = fix ? std::vector<int>{0, 1} : std::vector<int>{1};
        EXPECT_EQ(weights, expected) << where;  // the loss: the last alone
        const json& meta = metadata.at(next++);
        EXPECT_EQ(meta["split"], split) << where;
        EXPECT_EQ(meta["line"], i + 1) << where;
        const auto v = h.store.verdict(meta["evaluation_id"].get<int64_t>());
        ASSERT_TRUE(v) << where;
        EXPECT_EQ(
            agent::extract_code(cuda_track(), line["messages"].back()["content"].get<std::string>()).code,
            *h.store.source(v->submission_hash))
            << where;
      }
    }
  }
}

// messages is the whole conversation, weights and metadata in each line: TRL's conversational
// language-modelling type, which SFTTrainer reads with the loss on every token, or with assistant_only_loss
// on every assistant message: for a fix example the failed attempt too, since TRL reads no "weight". Hence
// prompt-completion is the default; a direct example has one assistant message, the verified code.
TEST(FixitExport, MessagesIsTrlsConversationalLanguageModellingWithTheWeightsKept) {
  AgentHarness h("fixit-messages");
  const ExportSources sources = export_sources(h);
  for (const bool fix : {true, false}) {
    const fs::path dir = h.dir / (fix ? "messages-fix" : "messages-direct");
    export_examples(fix ? fix_examples(h, sources) : direct_examples(h, sources), dir, ExportFormat::messages,
                    {}, TaskSelection::none(), {});
    const auto lines = read_jsonl(dir / "train.jsonl");
    expect_one_shape(lines, dir.string());
    for (const auto& line : lines) {
      EXPECT_EQ(keys_of(line), (std::set<std::string>{"messages", "metadata"}));
      EXPECT_EQ(roles_of(line["messages"]), fix ? kFixRoles : kDirectRoles);
      int assistants = 0;
      for (const auto& m : line["messages"]) {
        expect_chat_message(m, dir.string());
        assistants += m["role"] == "assistant";
        EXPECT_EQ(m.contains("weight"), m["role"] == "assistant");
      }
      EXPECT_EQ(assistants, fix ? 2 : 1);
      EXPECT_EQ(line["messages"].back()["weight"], 1);
    }
  }
}

namespace {

// The split `datasets` infers for a file of a folder without `configs` (its data_files module): a split's
// keyword (train, training; validation, valid, dev, val; test, testing, eval, evaluation) as a folder's name,
// or in the file's name with a non-word character (one of "-._ " or a digit) after it and the name's start or
// one of them before it; folder names are looked at first. "" when none matches.
std::string inferred_split(const fs::path& relative) {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> keywords = {
      {"train", {"train", "training"}},
      {"validation", {"validation", "valid", "dev", "val"}},
      {"test", {"test", "testing", "eval", "evaluation"}}};
  auto delimiter = [](char c) { return c == '-' || c == '.' || c == '_' || c == ' ' || std::isdigit(c); };
  auto holds = [&](const std::string& name, const std::string& keyword, bool end_delimits) {
    for (size_t at = name.find(keyword); at != std::string::npos; at = name.find(keyword, at + 1)) {
      const size_t after = at + keyword.size();
      if ((at == 0 || delimiter(name[at - 1])) &&
          ((after == name.size() && end_delimits) || (after < name.size() && delimiter(name[after]))))
        return true;
    }
    return false;
  };
  std::vector<std::string> folders;
  for (const auto& part : relative.parent_path()) folders.push_back(part.string());
  for (const auto& [split, words] : keywords)
    for (const auto& folder : folders)
      for (const auto& word : words)
        if (holds(folder, word, true)) return split;
  for (const auto& [split, words] : keywords)
    for (const auto& word : words)
      if (holds(relative.filename().string(), word, false)) return split;
  return "";
}

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), dir));
  std::sort(out.begin(), out.end());
  return out;
}

// The README's YAML front matter: between its first line "---" and the next.
std::string front_matter_of(const std::string& readme) {
  if (readme.rfind("---\n", 0) != 0) return "";
  const size_t end = readme.find("\n---\n", 3);
  return end == std::string::npos ? "" : readme.substr(0, end + 5);
}

}  // namespace

// The export is a Hugging Face dataset folder: README.md opens with the YAML front matter the Hub and
// `datasets.load_dataset` read (the splits and their files under `configs`, the licence: the repository's,
// Apache-2.0; the task category), each split's file is named as `datasets` would infer that split without the
// card, and no other file (the card's JSON, the openai format's metadata) is named like a split.
TEST(FixitExport, TheFolderIsAHuggingFaceDatasetWhoseCardNamesItsSplits) {
  AgentHarness h("fixit-card");
  const ExportSources sources = export_sources(h, "templates");
  const auto examples = fix_examples(h, sources);
  const fs::path dir = h.dir / "hf";
  const auto result = export_examples(examples, dir, ExportFormat::openai, {"*n4096-k4096*"},
                                      TaskSelection({"*n4096-k4096*"}), {{"name", "t\"5"}, {"about", "a test"}});
  ASSERT_EQ(result.train, 2);
  ASSERT_EQ(result.test, 2);
  const std::string readme = read_file(dir / "README.md");
  EXPECT_EQ(front_matter_of(readme),
            "---\n"
            "pretty_name: \"ptxbench fixit: t\\\"5\"\n"
            "license: apache-2.0\n"
            "language:\n- en\n"
            "task_categories:\n- text-generation\n"
            "tags:\n- code\n- cuda\n- gpu-kernels\n- ptxbench\n"
            "size_categories:\n- \"n<1K\"\n"
            "configs:\n"
            "- config_name: default\n"
            "  data_files:\n"
            "  - split: train\n"
            "    path: train.jsonl\n"
            "  - split: test\n"
            "    path: test.jsonl\n"
            "---\n");
  const std::string licence = read_file(kRoot / "LICENSE");
  EXPECT_NE(licence.find("Apache License"), std::string::npos);
  EXPECT_NE(licence.find("Version 2.0"), std::string::npos);
  EXPECT_NE(readme.find("Per knowledge level of the source run"), std::string::npos);
  EXPECT_NE(readme.find("| templates | 2 | 2 |"), std::string::npos) << readme;

  // Every file: the split files infer their own split, nothing else infers one.
  std::map<std::string, std::string> splits;
  for (const auto& file : files_under(dir)) splits[file.generic_string()] = inferred_split(file);
  EXPECT_EQ(splits, (std::map<std::string, std::string>{{"README.md", ""},
                                                        {"card.json", ""},
                                                        {kOpenaiMetadataFile, ""},
                                                        {"test.jsonl", "test"},
                                                        {"train.jsonl", "train"}}));
  // The rule as the datasets documentation states it, on names it gives and on this export's old names.
  EXPECT_EQ(inferred_split("my_train_file.csv"), "train");
  EXPECT_EQ(inferred_split("test-file.csv"), "test");
  EXPECT_EQ(inferred_split("validation1.csv"), "validation");
  EXPECT_EQ(inferred_split("testfile.csv"), "");
  EXPECT_EQ(inferred_split("data/eval.csv"), "test");
  EXPECT_EQ(inferred_split("heldout.jsonl"), "");              // was never loaded
  EXPECT_EQ(inferred_split("train.metadata.jsonl"), "train");  // was mixed into the train split
  EXPECT_EQ(inferred_split("metadata/examples.jsonl"), "");
  const json card = json::parse(read_file(dir / "card.json"));
  EXPECT_EQ(card["license"], "Apache-2.0");
  EXPECT_EQ(card["files"],
            (json{{"train", "train.jsonl"}, {"test", "test.jsonl"}, {"metadata", kOpenaiMetadataFile}}));

  // Exported again into the folder, with nothing held out and in another format: no test split, no metadata
  // file left from before, and the card names the train split alone.
  const auto again = export_examples(examples, dir, ExportFormat::prompt_completion, {}, TaskSelection::none(), {{"name", "t5"}});
  EXPECT_EQ(again.train, 4);
  EXPECT_EQ(files_under(dir), (std::vector<fs::path>{"README.md", "card.json", "train.jsonl"}));
  const std::string matter = front_matter_of(read_file(dir / "README.md"));
  EXPECT_NE(matter.find("  - split: train\n    path: train.jsonl\n---\n"), std::string::npos) << matter;
  EXPECT_EQ(matter.find("test"), std::string::npos) << matter;
}

// Each example names the knowledge level of the run its failure (or solution) came from, also from a mined
// set stored before items carried it; with PromptSource::agent its system prompt and first user message are
// the source turn's own, as stored: the statement, the kit files at that level, what to answer.
TEST(FixitExport, ExamplesNameTheSourceKnowledgeLevelAndCanCarryTheAgentsOwnFirstPrompt) {
  AgentHarness h("fixit-prompt");
  ExportSources sources = export_sources(h, "templates");
  for (const auto& e : fix_examples(h, sources)) {
    EXPECT_EQ(e.meta["knowledge"], "templates");
    EXPECT_EQ(e.meta["prompt"], "statement");
    EXPECT_EQ(e.messages[0]["content"], agent::system_prompt(cuda_track()));
    EXPECT_EQ(e.messages[1]["content"], agent::task_statement(cuda_track(), *h.registry.find(e.task_id)));
  }
  for (const auto& e : direct_examples(h, sources)) EXPECT_EQ(e.meta["knowledge"], "templates");
  ExportSources old = sources;
  for (auto& r : old.fixes) r.failure.knowledge.clear();
  for (auto& m : old.correct) m.knowledge.clear();
  for (const auto& e : fix_examples(h, old)) EXPECT_EQ(e.meta["knowledge"], "templates");
  for (const auto& e : direct_examples(h, old)) EXPECT_EQ(e.meta["knowledge"], "templates");

  const auto fixes = fix_examples(h, sources, PromptSource::agent);
  const auto direct = direct_examples(h, sources, PromptSource::agent);
  ASSERT_EQ(fixes.size(), 4u);
  ASSERT_EQ(direct.size(), 2u);
  std::map<int64_t, int64_t> source_trajectory;  // the example's evaluation -> the trajectory it came from
  for (const auto& r : sources.fixes) source_trajectory[r.fix_evaluation_id] = r.failure.trajectory_id;
  for (const auto& m : sources.correct) source_trajectory[m.evaluation_id] = m.trajectory_id;
  for (const auto* set : {&fixes, &direct})
    for (const auto& e : *set) {
      EXPECT_EQ(e.meta["prompt"], "agent");
      const Task& task = *h.registry.find(e.task_id);
      const auto turns = h.store.turns(source_trajectory.at(e.meta["evaluation_id"].get<int64_t>()));
      ASSERT_EQ(turns.at(0).index, 1);
      const json& request = turns.at(0).request;
      EXPECT_EQ(e.messages[0]["content"], request["system"]);
      const std::string first = e.messages[1]["content"];
      EXPECT_EQ(first, request["messages"][0]["content"]);
      EXPECT_EQ(first.rfind(agent::task_statement(cuda_track(), task), 0),
                0u);  // the statement, then the kit
      EXPECT_NE(first.find("Architecture knowledge (templates level)"), std::string::npos);
      EXPECT_GT(first.size(), 4 * agent::task_statement(cuda_track(), task).size());
    }
  // The rest of a fix example is as with the statement.
  const auto short_fixes = fix_examples(h, sources);
  for (size_t i = 0; i < fixes.size(); ++i)
    for (size_t m = 2; m < kFixRoles.size(); ++m) EXPECT_EQ(fixes[i].messages[m], short_fixes[i].messages[m]);
}

// --- the command line, with the reference model on this host (no GPU stage: nothing can be verified) ---

namespace {

ProcessResult ptxbench_in(const fs::path& data, std::vector<std::string> args) {
  std::vector<std::string> argv = {PTXBENCH_BINARY, "--root", kRoot.string(), "--data", data.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process({.argv = argv, .time_limit = std::chrono::minutes(5)});
}

}  // namespace

TEST(FixitCli, EverySubcommandHasHelp) {
  const fs::path data = fs::temp_directory_path() / ("ptxbench-fixit-help-" + std::to_string(getpid()));
  for (const char* sub : {"mine", "repair", "reason", "export", "build", "show"}) {
    const auto h = ptxbench_in(data, {"fixit", sub, "--help"});
    EXPECT_EQ(h.exit_code, 0) << sub;
    EXPECT_NE(h.out.find("--json"), std::string::npos) << sub;
  }
  EXPECT_EQ(ptxbench_in(data, {"fixit"}).exit_code, 2);
  EXPECT_EQ(ptxbench_in(data, {"fixit", "repair"}).exit_code, 2);  // no --mined, no --teacher
  fs::remove_all(data);
}

TEST(FixitCli, TheReferenceFlowOnACpuHostExportsNothingUnverified) {
  const fs::path data = fs::temp_directory_path() / ("ptxbench-fixit-cli-" + std::to_string(getpid()));
  fs::remove_all(data);
  const auto run = ptxbench_in(data, {"run", "--cpu-only", "--tasks", kHopperTask, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const int64_t run_id = json::parse(run.out)["run_id"].get<int64_t>();

  const auto mined = ptxbench_in(data, {"fixit", "mine", "--runs", std::to_string(run_id), "--json"});
  ASSERT_EQ(mined.exit_code, 0) << mined.err;
  const json set = json::parse(mined.out);
  ASSERT_EQ(set["items"].size(), 1u);  // the broken copy; the solution's turn did not fail
  EXPECT_EQ(set["items"][0]["error_class"], "compile");

  // s3 with the reference model as teacher and reasoner: the teacher's solution compiles, but without a GPU it
  // cannot be verified, so it is not a fix and nothing is exported (exit 3: stages were skipped).
  const fs::path out = data / "s3";
  const auto built = ptxbench_in(data, {"fixit", "build", (kRoot / "fixit" / "s3.json").string(), "--out",
                                        out.string(), "--runs", std::to_string(run_id), "--tasks", kHopperTask,
                                        "--teacher", "reference", "--reasoner", "reference", "--cpu-only"});
  EXPECT_EQ(built.exit_code, 3) << built.out << built.err;
  EXPECT_NE(built.out.find("only verified code is exported"), std::string::npos) << built.out;
  EXPECT_NE(built.err.find("nothing exported: no fix was verified (1 unverified)"), std::string::npos)
      << built.err;
  EXPECT_EQ(read_file(out / "train.jsonl"), "");
  const json card = json::parse(read_file(out / "card.json"));
  EXPECT_EQ(card["pipeline"]["repairs"][kUnverifiedFix], 1) << card.dump(2);
  const json state = json::parse(read_file(out / "state.json"));
  const auto shown = ptxbench_in(data, {"fixit", "show", std::to_string(state["repair_run"].get<int64_t>()), "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(json::parse(shown.out)["repairs"][0]["status"], kUnverifiedFix);
  // A spec with a mistake is refused with the field named.
  write_file(data / "bad.json", R"({"name": "bad", "teacher": {"model": "reference", "turns": 0}})");
  const auto bad = ptxbench_in(data, {"fixit", "build", (data / "bad.json").string(), "--out", (data / "b").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("teacher.turns"), std::string::npos) << bad.err;
  fs::remove_all(data);
}

// `fixit repair` killed with SIGKILL while the teacher is answering, then resumed: the stored repair equals an
// uninterrupted one of the same mined set (times and evaluation ids aside), and no finished turn was asked again.
TEST(FixitCli, AKilledRepairResumedStoresWhatAnUninterruptedOneDoes) {
  const fs::path data = fs::temp_directory_path() / ("ptxbench-fixit-kill-" + std::to_string(getpid()));
  fs::remove_all(data);
  const auto student = ptxbench_in(data, {"run", "--cpu-only", "--tasks", "gemm-bf16-n4096-*", "--json"});
  ASSERT_EQ(student.exit_code, 0) << student.err;
  const auto mined = ptxbench_in(data, {"fixit", "mine", "--json"});
  ASSERT_EQ(mined.exit_code, 0) << mined.err;
  const std::string set = std::to_string(json::parse(mined.out)["run_id"].get<int64_t>());
  ASSERT_EQ(json::parse(mined.out)["items"].size(), 2u);

  // The teacher: two answers that do not compile, each turn its own.
  ScriptedServer server([](const json& messages) {
    int turn = 1;
    for (const auto& m : messages) turn += m["role"] == "assistant";
    return reply_with(fmt::format("int still_broken_{}(", turn));
  });
  const fs::path catalogue = data / "models.json";
  write_file(catalogue, json::array({{{"name", "fake-teacher"},
                                      {"provider", "openai"},
                                      {"base_url", server.base_url()},
                                      {"model_id", "fake-teacher"},
                                      {"max_attempts", 1}}})
                            .dump());
  auto repair_args = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args = {"fixit", "repair", "--models", catalogue.string(), "--cpu-only",
                                     "--parallel", "1", "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const auto whole = ptxbench_in(data, repair_args({"--mined", set, "--teacher", "fake-teacher", "--turns", "2"}));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const int64_t whole_run = json::parse(whole.out)["run_id"].get<int64_t>();
  ASSERT_EQ(server.calls, 4);

  // The same again, killed while the teacher takes its time over its second answer.
  server.stall_on_call = 6;
  std::vector<std::string> args = {PTXBENCH_BINARY, "--root", kRoot.string(), "--data", data.string()};
  for (const auto& a : repair_args({"--mined", set, "--teacher", "fake-teacher", "--turns", "2"})) args.push_back(a);
  const pid_t pid = spawn_in_background(args);
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (server.calls < 6 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the repair ended before it could be killed: the test proves nothing";

  Store store(data / "ptxbench.db");
  int64_t killed_run = 0;
  for (const auto& r : store.runs(10))
    if (r.kind == kRepairKind && r.id != whole_run) killed_run = r.id;
  ASSERT_NE(killed_run, 0);
  EXPECT_TRUE(store.run(killed_run)->finished_at.empty());
  const auto resumed = ptxbench_in(data, repair_args({"--resume", std::to_string(killed_run)}));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  // Four answers for the whole run; the killed one asked its first turn once and its stalled second again.
  EXPECT_EQ(server.calls, 4 + 4 + 1);

  const auto expected = agent::export_trajectories(store, whole_run, false);
  const auto actual = agent::export_trajectories(store, killed_run, false);
  ASSERT_EQ(expected.size(), 2u);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i]["turns"].size(), 2u);
    EXPECT_EQ(actual[i]["turns"], expected[i]["turns"]) << "trajectory " << i;
  }
  EXPECT_FALSE(store.run(killed_run)->finished_at.empty());
  std::vector<std::string> statuses;
  for (const auto& r : repairs(store, killed_run)) statuses.push_back(r.status);
  EXPECT_EQ(statuses, (std::vector<std::string>{kNotFixed, kNotFixed}));
  fs::remove_all(data);
}

// fixit export as a user runs it: prompt-completion and the task statement unless --format and --prompt say
// otherwise, a README.md card beside the splits; the store is the agent tests' (its fixes verified by the
// fake judge), read by the real binary.
TEST(FixitCli, ExportWritesPromptCompletionByDefaultAndTheAgentsPromptWhenAsked) {
  AgentHarness h("fixit-cli-export");
  const ExportSources sources = export_sources(h, "contracts");
  const std::string repair_run = std::to_string(sources.repair_run);
  const fs::path plain_dir = h.dir / "plain";
  const auto plain = ptxbench_in(h.dir, {"fixit", "export", "--repair-run", repair_run, "--out",
                                         plain_dir.string(), "--name", "cli", "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(json::parse(plain.out)["train"], 4);
  EXPECT_EQ(json::parse(plain.out)["test"], 0);
  EXPECT_EQ(json::parse(plain.out)["card"]["format"], "prompt-completion");
  const auto lines = read_jsonl(plain_dir / "train.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  for (const auto& line : lines) {
    EXPECT_EQ(keys_of(line), (std::set<std::string>{"prompt", "completion", "metadata"}));
    EXPECT_EQ(
        line["prompt"][1]["content"],
        agent::task_statement(cuda_track(), *h.registry.find(line["metadata"]["task"].get<std::string>())));
    EXPECT_EQ(line["metadata"]["knowledge"], "contracts");
    EXPECT_EQ(line["metadata"]["prompt"], "statement");
  }
  EXPECT_EQ(front_matter_of(read_file(plain_dir / "README.md"))
                .rfind("---\npretty_name: \"ptxbench fixit: cli\"\n", 0),
            0u);

  const fs::path agent_dir = h.dir / "agent";
  const auto asked =
      ptxbench_in(h.dir, {"fixit", "export", "--repair-run", repair_run, "--out", agent_dir.string(),
                          "--prompt", "agent", "--format", "messages", "--holdout", "*n4096-k4096*"});
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_NE(asked.out.find("2 train examples"), std::string::npos) << asked.out;
  EXPECT_NE(asked.out.find("2 test (held-out tasks) in test.jsonl"), std::string::npos) << asked.out;
  for (const char* split : {"train.jsonl", "test.jsonl"})
    for (const auto& line : read_jsonl(agent_dir / split)) {
      EXPECT_EQ(keys_of(line), (std::set<std::string>{"messages", "metadata"}));
      EXPECT_NE(
          line["messages"][1]["content"].get<std::string>().find("Architecture knowledge (contracts level)"),
          std::string::npos);
      EXPECT_EQ(line["metadata"]["prompt"], "agent");
    }

  const auto bad = ptxbench_in(h.dir, {"fixit", "export", "--repair-run", repair_run, "--out",
                                       (h.dir / "bad").string(), "--prompt", "everything"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  const auto help = ptxbench_in(h.dir, {"fixit", "export", "--help"});
  EXPECT_NE(help.out.find("--prompt"), std::string::npos);
  EXPECT_NE(help.out.find("prompt-completion"), std::string::npos);
}
