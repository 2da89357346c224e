// Text on its way into JSON: cuts keep whole UTF-8 characters, and what is still invalid is replaced, never
// thrown on (a thrown dump would leave a trajectory or a verdict unstored).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/prompt.h"
#include "store/store.h"
#include "util/text.h"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {
const std::string kDash = "\xE2\x80\x94";  // an em dash: three bytes
}  // namespace

TEST(Utf8, CutsKeepWholeCharacters) {
  EXPECT_EQ(utf8_head("ab" + kDash + "cd", 3), "ab");
  EXPECT_EQ(utf8_head("ab" + kDash + "cd", 5), "ab" + kDash);
  EXPECT_EQ(utf8_head("abc", 10), "abc");
  EXPECT_EQ(utf8_tail("ab" + kDash + "cd", 3), "cd");
  EXPECT_EQ(utf8_tail("ab" + kDash + "cd", 5), kDash + "cd");
}

TEST(Utf8, InvalidTextIsReplacedWhenPrinted) {
  const nlohmann::json doc = {{"message", "Latin-1 \xE9t\xE9"}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);
  EXPECT_EQ(json_text(doc), "{\"message\":\"Latin-1 \xEF\xBF\xBDt\xEF\xBF\xBD\"}");
}

// A reply without code, longer than what the next turn shows of it, with a multi-byte character where it is
// cut: the next request is still valid JSON text.
TEST(Utf8, AReplyCutForTheNextTurnStaysValid) {
  const agent::PreviousTurn previous{
      .index = 1, .reply = std::string(1499, 'a') + kDash + std::string(3000, 'b'), .feedback = "no code"};
  const llm::Request request = agent::build_request("task", 2, previous, {});
  EXPECT_NO_THROW((void)agent::to_json(request).dump());
}

// A verdict whose message holds bytes that are not UTF-8 (nvcc echoing a Latin-1 source line) is stored and
// read back.
TEST(Utf8, AVerdictWithInvalidTextIsStored) {
  const fs::path db = fs::temp_directory_path() / ("ptxbench-text-" + std::to_string(getpid())) / "p.db";
  fs::remove_all(db.parent_path());
  Store store(db);
  Verdict verdict;
  verdict.task_id = "gemm-bf16-n4096-k4096-sm90a";
  verdict.arch = "sm_90a";
  verdict.stages = {{.name = "compile", .status = StageStatus::failed, .message = "error near \xE9\xE8"}};
  const int64_t id = store.add_evaluation(verdict, "// \xE9", 0);
  const auto back = store.verdict(id);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->stages.front().message, "error near \xEF\xBF\xBD\xEF\xBF\xBD");
  fs::remove_all(db.parent_path());
}
