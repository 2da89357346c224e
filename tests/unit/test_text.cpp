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
  const llm::Request request = agent::build_request(cuda_track(), "task", 2, {previous});
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

namespace {
const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD
}  // namespace

// Each maximal invalid subpart becomes one U+FFFD; the text around it, valid characters of every length
// included, is kept.
TEST(Utf8, InvalidSequencesAreReplacedAndTheRestKept) {
  const std::string emoji = "\xF0\x9F\x98\x80";  // four bytes
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain ascii", "plain ascii"},
      {"a" + kDash + "b" + emoji, "a" + kDash + "b" + emoji},
      {"\"\xFF\xFE\"", "\"" + kReplacement + kReplacement + "\""},            // a source's raw bytes
      {"Latin-1 \xE9t\xE9", "Latin-1 " + kReplacement + "t" + kReplacement},  // not UTF-8 at all
      {"cut \xE2\x80", "cut " + kReplacement},                                // a character cut short
      {"\xE2\x80x", kReplacement + "x"},                                      // one cut short mid-text
      {"\xC0\xAF", kReplacement + kReplacement},                              // an overlong '/'
      {"\xED\xA0\x80", kReplacement + kReplacement + kReplacement},           // a surrogate
      {"\xF4\x90\x80\x80", kReplacement + kReplacement + kReplacement + kReplacement},  // past U+10FFFF
      {"\x80", kReplacement},  // a lone continuation byte
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(valid_utf8(text), expected) << nlohmann::json(valid_utf8(text)).dump();
    // The same replacement json_text makes, so text cleaned early and text cleaned when printed agree.
    EXPECT_EQ(nlohmann::json(valid_utf8(text)).dump(), json_text(nlohmann::json(text)));
  }
}

TEST(Utf8, EveryStringOfAJsonValueIsMadeValid) {
  const nlohmann::json doc = {{"message", "nvcc said \xFF"},
                              {"lines", {"ok", "bad \xE9"}},
                              {"count", 3},
                              {"key \xFE", {{"nested", "\xC0"}}}};
  const nlohmann::json clean = with_valid_utf8(doc);
  EXPECT_NO_THROW((void)clean.dump());
  EXPECT_EQ(clean["message"], "nvcc said " + kReplacement);
  EXPECT_EQ(clean["lines"][1], "bad " + kReplacement);
  EXPECT_EQ(clean["count"], 3);
  EXPECT_EQ(clean["key " + kReplacement]["nested"], kReplacement);
  EXPECT_EQ(with_valid_utf8(clean), clean) << "valid text is left as it is";
}

TEST(Text, TrimDropsBlanksAtBothEndsOnly) {
  EXPECT_EQ(trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(trim(" \n\t "), "");
  EXPECT_EQ(trim(""), "");
  const std::string text = "  kernel  ";
  const std::string_view view = trim_view(text);
  EXPECT_EQ(view, "kernel");
  EXPECT_EQ(view.data(), text.data() + 2);  // a view into the text, not a copy
}
