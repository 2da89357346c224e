// What the model is told: the knowledge levels, the task statement, later turns.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/prompt.h"
#include "project_tasks.h"
#include "util/files.h"

using namespace ptxbench;
using namespace ptxbench::agent;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;

const Task& task(const std::string& id) {
  return test_support::project_task(id);
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST(AgentPrompt, KnowledgeLevelsAreParsedAndNamed) {
  EXPECT_EQ(knowledge_level_from_string("templates"), KnowledgeLevel::templates);
  EXPECT_EQ(knowledge_level_from_string("patterns"), KnowledgeLevel::patterns);
  EXPECT_FALSE(knowledge_level_from_string("everything"));
  EXPECT_EQ(to_string(KnowledgeLevel::contracts), "contracts");
  for (const char* name : kKnowledgeLevels) EXPECT_EQ(to_string(*knowledge_level_from_string(name)), name);
  // A run's list: each level once, in the order given.
  EXPECT_EQ(knowledge_levels_from_string("patterns,params"),
            (std::vector{KnowledgeLevel::patterns, KnowledgeLevel::params}));
  EXPECT_EQ(knowledge_levels_from_string("contracts"), std::vector{KnowledgeLevel::contracts});
  for (const char* bad : {"", ",", "params,", "params,params", "params,everything", " params"})
    EXPECT_FALSE(knowledge_levels_from_string(bad)) << bad;
}

TEST(AgentPrompt, EachLevelAddsToTheOneBefore) {
  const Task& hopper = task("gemm-bf16-n4096-k4096-sm90a");
  const fs::path kits = kRoot / "kits";
  const std::string params_md = read_file(kits / "hopper" / "params.md");
  const std::string contracts_md = read_file(kits / "hopper" / "contracts.md");
  const std::string wgmma_cuh = read_file(kits / "hopper" / "ptx" / "wgmma.cuh");

  const std::string params = knowledge_text(cuda_track(), kits, hopper, KnowledgeLevel::params);
  EXPECT_TRUE(contains(params, params_md));
  EXPECT_FALSE(contains(params, "----- kits/hopper/ptx/wgmma.cuh -----"));
  EXPECT_FALSE(contains(params, wgmma_cuh));
  EXPECT_FALSE(contains(params, contracts_md.substr(0, 200)));

  const std::string templates = knowledge_text(cuda_track(), kits, hopper, KnowledgeLevel::templates);
  EXPECT_TRUE(contains(templates, params_md));
  EXPECT_TRUE(contains(templates, wgmma_cuh));  // verbatim
  // The architecture's own files and those every architecture shares (kits/common/ptx), which its own
  // include.
  for (const std::string folder : {"hopper", "common"})
    for (const auto& entry : fs::directory_iterator(kits / folder / "ptx"))
      EXPECT_TRUE(contains(templates, "kits/" + folder + "/ptx/" + entry.path().filename().string()))
          << entry.path();
  EXPECT_TRUE(contains(templates, "#include <hopper.cuh>"));
  EXPECT_FALSE(contains(templates, contracts_md.substr(0, 200)));

  const std::string contracts = knowledge_text(cuda_track(), kits, hopper, KnowledgeLevel::contracts);
  EXPECT_TRUE(contains(contracts, wgmma_cuh));
  EXPECT_TRUE(contains(contracts, contracts_md));
  EXPECT_TRUE(contains(contracts, read_file(kits / "common" / "contracts.md")));
  EXPECT_LT(params.size(), templates.size());
  EXPECT_LT(templates.size(), contracts.size());

  // patterns: the contracts level and every pattern document of the kit, verbatim.
  const std::string patterns = knowledge_text(cuda_track(), kits, hopper, KnowledgeLevel::patterns);
  EXPECT_TRUE(contains(patterns, contracts.substr(contracts.find('\n'))));
  int documents = 0;
  for (const auto& entry : fs::directory_iterator(kits / "hopper" / "patterns")) {
    ++documents;
    EXPECT_TRUE(
        contains(patterns, "----- kits/hopper/patterns/" + entry.path().filename().string() + " -----"));
    EXPECT_TRUE(contains(patterns, read_file(entry.path()))) << entry.path();
    EXPECT_FALSE(contains(contracts, read_file(entry.path()).substr(0, 200))) << entry.path();
  }
  EXPECT_GE(documents, 4);
  // A kit without pattern documents says so (the Triton kit has none).
  const std::string triton = knowledge_text(triton_track(), kits, hopper, KnowledgeLevel::patterns);
  EXPECT_TRUE(contains(triton, "has no pattern documents yet")) << triton;
}

// The three context policies: the exact messages of turn 4 after three turns.
TEST(AgentPrompt, EachContextPolicySendsItsMessages) {
  const std::string first = "Task: t\nfirst message";
  const std::vector<PreviousTurn> turns = {
      {.index = 1, .reply = "no code here", .feedback = "no code block", .outcome = "no code"},
      {.index = 2,
       .code = "int two;\n",
       .feedback = "Verdict: failed at compile",
       .outcome = "failed at compile"},
      {.index = 3,
       .code = "int three;\n",
       .feedback = "Verdict: failed at correct",
       .outcome = "failed at correct"}};
  const auto roles = [](const llm::Request& r) {
    std::string out;
    for (const auto& m : r.messages) out += m.role[0];
    return out;
  };

  const llm::Request compact = build_request(cuda_track(), first, 4, turns);  // the default
  EXPECT_EQ(roles(compact), "uau");
  EXPECT_EQ(compact.messages[1].content, "```cuda\nint three;\n```\n");
  EXPECT_EQ(compact.messages[2].content,
            "Verdict on your turn 3 reply:\nVerdict: failed at correct\n\nEarlier turns:\n- turn 1: no code\n"
            "- turn 2: failed at compile\n\nThis is turn 4. Fix the problems above. Answer with the whole "
            "corrected .cu file in one ```cuda block.");

  const llm::Request last_pair =
      build_request(cuda_track(), first, 4, turns, {.policy = ContextPolicy::last_pair});
  EXPECT_EQ(roles(last_pair), "uau");
  EXPECT_FALSE(contains(last_pair.messages[2].content, "Earlier turns")) << last_pair.messages[2].content;
  EXPECT_TRUE(contains(last_pair.messages[2].content, "This is turn 4."));

  const llm::Request full = build_request(cuda_track(), first, 4, turns, {.policy = ContextPolicy::full});
  EXPECT_EQ(roles(full), "uauauau");
  EXPECT_EQ(full.messages[1].content, "no code here");  // turn 1's reply, which had no code
  EXPECT_EQ(full.messages[2].content, "Verdict on your turn 1 reply:\nno code block\n");
  EXPECT_EQ(full.messages[3].content, "```cuda\nint two;\n```\n");
  EXPECT_FALSE(contains(full.messages[4].content, "This is turn"));  // the instruction comes last, once
  EXPECT_TRUE(contains(full.messages[6].content, "This is turn 4."));
  EXPECT_FALSE(contains(full.messages[6].content, "Earlier turns"));
}

// The window: `full` makes its oldest turns lines until the request fits; what cannot fit is an error that
// names the limit, never a request cut anywhere.
TEST(AgentPrompt, TheContextIsKeptWithinTheModelsWindow) {
  EXPECT_EQ(context_budget_chars(0, 4096), 0u) << "an unknown window: no limit";
  EXPECT_EQ(context_budget_chars(32768, 8192), (32768u - 8192u) * 3);
  const std::string first = "Task: t\n" + std::string(2000, 'f');
  std::vector<PreviousTurn> turns;
  for (int i = 1; i <= 4; ++i)
    turns.push_back({.index = i,
                     .code = std::string(3000, static_cast<char>('a' + i)),
                     .feedback = "Verdict: failed",
                     .outcome = "failed at correct " + std::to_string(i)});
  const auto chars = [](const llm::Request& r) {
    size_t n = r.system.size();
    for (const auto& m : r.messages) n += m.content.size();
    return n;
  };
  const llm::Request whole = build_request(cuda_track(), first, 5, turns, {.policy = ContextPolicy::full});
  ASSERT_EQ(whole.messages.size(), 9u);
  // Room for the first message and two turns: turns 1 and 2 become lines, 3 and 4 stay whole.
  const size_t budget = chars(whole) - 2 * 3000 + 200;  // their lines take a little back
  const llm::Request fitted =
      build_request(cuda_track(), first, 5, turns, {.policy = ContextPolicy::full, .budget_chars = budget});
  EXPECT_LE(chars(fitted), budget);
  ASSERT_EQ(fitted.messages.size(), 5u);
  EXPECT_TRUE(contains(fitted.messages[1].content, std::string(3000, 'd')));  // turn 3's code
  EXPECT_TRUE(
      contains(fitted.messages[4].content, "- turn 1: failed at correct 1\n- turn 2: failed at correct 2"));
  // Not even the first message and the previous turn fit: an error naming the limit.
  try {
    build_request(cuda_track(), first, 5, turns, {.policy = ContextPolicy::compact, .budget_chars = 4000});
    ADD_FAILURE() << "a request larger than the window was built";
  } catch (const ContextTooLarge& e) {
    EXPECT_TRUE(contains(e.what(), "more than the 4000 the model's window allows")) << e.what();
  }
  EXPECT_EQ(context_policy_from_string("last-pair"), ContextPolicy::last_pair);
  EXPECT_FALSE(context_policy_from_string("everything"));
}

TEST(AgentPrompt, AMissingKitIsSaidNotAnError) {
  const Task& blackwell = task("gemm-bf16-n4096-k4096-sm100a");
  const fs::path empty_kits = fs::temp_directory_path() / ("ptxbench-no-kits-" + std::to_string(getpid()));
  fs::create_directories(empty_kits);
  const std::string text = knowledge_text(cuda_track(), empty_kits, blackwell, KnowledgeLevel::contracts);
  EXPECT_TRUE(contains(text, "Blackwell kit does not exist yet")) << text;
  fs::remove_all(empty_kits);
}

// A Blackwell task's knowledge is the Blackwell kit's (tcgen05, TMEM) and the shared one's, never Hopper's.
TEST(AgentPrompt, ABlackwellTaskDrawsFromTheBlackwellKit) {
  const Task& blackwell = task("gemm-bf16-n4096-k4096-sm100a");
  const fs::path kits = kRoot / "kits";
  const std::string text = knowledge_text(cuda_track(), kits, blackwell, KnowledgeLevel::contracts);
  EXPECT_TRUE(contains(text, "from the Blackwell kit, kits/blackwell:")) << text.substr(0, 300);
  EXPECT_TRUE(contains(text, read_file(kits / "blackwell" / "ptx" / "tcgen05.cuh")));
  EXPECT_TRUE(contains(text, read_file(kits / "blackwell" / "params.md")));
  EXPECT_TRUE(contains(text, read_file(kits / "blackwell" / "contracts.md")));
  EXPECT_TRUE(contains(text, "----- kits/common/ptx/mbarrier.cuh -----"));
  EXPECT_TRUE(contains(text, "#include <blackwell.cuh>"));
  EXPECT_FALSE(contains(text, "----- kits/hopper/")) << "a Hopper file in a Blackwell prompt";
}

TEST(AgentPrompt, TaskStatementHasWhatASolutionMustKnow) {
  const Task& hopper = task("gemm-bf16-n4096-k4096-sm90a");
  const std::string text = task_statement(cuda_track(), hopper);
  EXPECT_TRUE(text.starts_with("Task: gemm-bf16-n4096-k4096-sm90a\n"));
  for (const char* expected :
       {"int ptxbench_gemm_bf16(", "extern \"C\"", "M=8192 N=4096 K=4096", "odd-m", "M=1999", "0.01",
        "wgmma.mma_async", "cp.async.bulk.tensor", "mbarrier", "95%", "sm_90a",
        "arch=compute_90a,code=sm_90a", "#include <ptxbench/abi.h>", "cublaslt"})
    EXPECT_TRUE(contains(text, expected)) << expected << "\n" << text;
  EXPECT_TRUE(
      contains(task_statement(cuda_track(), task("gemm-bf16-n4096-k4096-sm100a")), "statically only"));
  const std::string system = system_prompt(cuda_track());
  EXPECT_TRUE(contains(system, "```cuda"));
  EXPECT_TRUE(contains(system, "one complete .cu file"));
}

TEST(AgentPrompt, LaterTurnsShowThePreviousCodeAndVerdict) {
  const std::string first = "Task: t\nfirst message";
  const llm::Request one = build_request(cuda_track(), first, 1, {});
  ASSERT_EQ(one.messages.size(), 1u);
  EXPECT_EQ(one.messages[0].content, first);
  EXPECT_EQ(one.system, system_prompt(cuda_track()));

  PreviousTurn earlier{.index = 1, .outcome = "failed at compile: 2 errors"};
  PreviousTurn previous{.index = 2,
                        .code = "__global__ void k() {}\n",
                        .reply = "prose\n```cuda\n...```",
                        .feedback = "Verdict: failed at correct: 3 of 3 shapes wrong"};
  const llm::Request three = build_request(cuda_track(), first, 3, {earlier, previous});
  ASSERT_EQ(three.messages.size(), 3u);
  EXPECT_EQ(three.messages[0].content, first);
  EXPECT_EQ(three.messages[1].role, "assistant");
  EXPECT_EQ(three.messages[1].content, "```cuda\n__global__ void k() {}\n```\n");  // the code alone
  EXPECT_EQ(three.messages[2].role, "user");
  EXPECT_TRUE(contains(three.messages[2].content, "failed at correct: 3 of 3 shapes wrong"));
  EXPECT_TRUE(contains(three.messages[2].content, "turn 1: failed at compile: 2 errors"));
  EXPECT_TRUE(contains(three.messages[2].content, "This is turn 3"));
  EXPECT_TRUE(contains(three.messages[2].content, "Fix the problems"));

  // No code last turn: the reply itself, trimmed.
  PreviousTurn no_code{.index = 1, .reply = std::string(10000, 'x'), .feedback = "no code block"};
  const llm::Request two = build_request(cuda_track(), first, 2, {no_code});
  EXPECT_LT(two.messages[1].content.size(), 3200u);
  EXPECT_TRUE(contains(two.messages[1].content, "bytes omitted"));

  PreviousTurn passed{.index = 1, .code = "x", .feedback = "Verdict: passed", .passed = true};
  EXPECT_TRUE(
      contains(build_request(cuda_track(), first, 2, {passed}).messages[2].content, "make it faster"));

  const llm::Request back = request_from_json(to_json(three));
  ASSERT_EQ(back.messages.size(), 3u);
  EXPECT_EQ(back.messages[2].content, three.messages[2].content);
  EXPECT_EQ(back.system, three.system);
}

// The Triton track asks for one Python file in a ```python block, shows the Python entry point and no nvcc,
// and reads its own kit (kits/<kit>/triton/).
TEST(AgentPrompt, TheTritonTrackAsksForPython) {
  const Task& hopper = task("gemm-bf16-n4096-k4096-sm90a");
  const std::string system = system_prompt(triton_track());
  EXPECT_TRUE(contains(system, "one complete Python file"));
  EXPECT_TRUE(contains(system, "```python"));
  EXPECT_FALSE(contains(system, "```cuda"));
  EXPECT_TRUE(contains(system, "imports only triton, triton.language, math and torch"));

  const std::string text = task_statement(triton_track(), hopper);
  EXPECT_TRUE(text.starts_with("Task: gemm-bf16-n4096-k4096-sm90a\n")) << "the reference model reads the id";
  for (const char* expected :
       {"def ptxbench_gemm_bf16(A: torch.Tensor", "stream: torch.cuda.Stream", "docs/triton-abi.md",
        "Triton compiles the kernels", "wgmma.mma_async", "import triton.language as tl", "M=1999"})
    EXPECT_TRUE(contains(text, expected)) << expected << "\n" << text;
  for (const char* absent : {"nvcc", "extern \"C\"", "#include"})
    EXPECT_FALSE(contains(text, absent)) << absent << "\n" << text;

  const std::string first = first_message(triton_track(), hopper, "knowledge");
  EXPECT_TRUE(first.ends_with("Write the solution: the whole Python file in one ```python block.")) << first;

  PreviousTurn previous{.index = 1, .code = "import triton\n", .feedback = "Verdict: failed at static"};
  const llm::Request two = build_request(triton_track(), first, 2, {previous});
  EXPECT_EQ(two.system, system);
  EXPECT_EQ(two.messages[1].content, "```python\nimport triton\n```\n");
  EXPECT_TRUE(contains(two.messages[2].content, "the whole corrected Python file in one ```python block"));
  EXPECT_EQ(fenced(triton_track(), "x = 1"), "```python\nx = 1\n```\n");
}

TEST(AgentPrompt, TheTritonKitIsItsOwn) {
  const Task& hopper = task("gemm-bf16-n4096-k4096-sm90a");
  const fs::path root = fs::temp_directory_path() / ("ptxbench-triton-kits-" + std::to_string(getpid()));
  const fs::path kits = root / "kits";
  fs::remove_all(root);
  fs::create_directories(kits / "hopper" / "ptx");
  write_file(kits / "hopper" / "ptx" / "wgmma.cuh", "// a CUDA template\n");
  const std::string missing = knowledge_text(triton_track(), kits, hopper, KnowledgeLevel::contracts);
  EXPECT_TRUE(contains(missing, "The Hopper Triton kit does not exist yet")) << missing;
  EXPECT_FALSE(contains(missing, "a CUDA template")) << "the CUDA kit is not the Triton track's";

  write_file(kits / "hopper" / "triton" / "params.md", "Triton on Hopper: numbers\n");
  write_file(kits / "hopper" / "triton" / "templates" / "persistent_gemm.py", "@triton.jit\ndef k(): pass\n");
  write_file(kits / "hopper" / "triton" / "templates" / "notes.txt", "not a template\n");
  write_file(kits / "hopper" / "triton" / "contracts.md", "tl.dot lowers to wgmma when ...\n");
  const std::string params = knowledge_text(triton_track(), kits, hopper, KnowledgeLevel::params);
  EXPECT_TRUE(contains(params, "from the Hopper Triton kit, kits/hopper/triton:")) << params;
  EXPECT_TRUE(contains(params, "Triton on Hopper: numbers"));
  EXPECT_FALSE(contains(params, "persistent_gemm.py"));
  const std::string contracts = knowledge_text(triton_track(), kits, hopper, KnowledgeLevel::contracts);
  EXPECT_TRUE(contains(contracts, "----- kits/hopper/triton/templates/persistent_gemm.py -----\n```python\n"))
      << contracts;
  EXPECT_FALSE(contains(contracts, "not a template"));
  EXPECT_TRUE(contains(contracts, "tl.dot lowers to wgmma"));
  fs::remove_all(root);
}
