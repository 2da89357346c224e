// Taking the code out of a model's reply.
#include <gtest/gtest.h>

#include "agent/extract.h"
#include "eval/evaluate.h"

using namespace ptxbench;
using namespace ptxbench::agent;

TEST(AgentExtract, TakesTheOnlyBlock) {
  const auto e = extract_code(cuda_track(), "Here it is:\n```cuda\nint x = 1;\n```\nDone.");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.code, "int x = 1;\n");
  EXPECT_EQ(e.language, "cuda");
  EXPECT_FALSE(e.unterminated);
}

TEST(AgentExtract, TakesTheLastOfSeveralBlocks) {
  const auto e = extract_code(
      cuda_track(),
      "First try:\n```cpp\nint a;\n```\nBetter:\n```c++\nint b;\n```\nFinal:\n```cuda\nint c;\n```\n");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.code, "int c;\n");
  EXPECT_EQ(e.blocks, 3);
}

// A trailing unlabelled block is as often a command or compiler output as code: a labelled block wins over
// it, and it counts only when no block is labelled.
TEST(AgentExtract, ALabelledBlockWinsOverATrailingUnlabelledOne) {
  const auto e = extract_code(
      cuda_track(), "```cuda\nint kernel;\n```\nBuild it with:\n```\nnvcc -arch=sm_90a k.cu\n```\n");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.code, "int kernel;\n");
  EXPECT_EQ(e.language, "cuda");
  const auto only = extract_code(cuda_track(), "```\nint a;\n```\n```\nint b;\n```\n");
  ASSERT_TRUE(only.found);
  EXPECT_EQ(only.code, "int b;\n");
}

TEST(AgentExtract, IgnoresBlocksInOtherLanguages) {
  const auto e =
      extract_code(cuda_track(), "```cuda\nint kernel;\n```\nRun it with:\n```bash\nnvcc x.cu\n```\n");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.code, "int kernel;\n");
  const auto only_shell = extract_code(cuda_track(), "```bash\nls\n```");
  EXPECT_FALSE(only_shell.found);
  EXPECT_NE(only_shell.problem.find("bash"), std::string::npos);
}

TEST(AgentExtract, NoBlockIsAFailureWithAMessage) {
  const auto e = extract_code(cuda_track(), "I think you should use wgmma. `inline code` is not a block.");
  EXPECT_FALSE(e.found);
  EXPECT_EQ(e.blocks, 0);
  EXPECT_NE(e.problem.find("no fenced code block"), std::string::npos);
  EXPECT_NE(e.problem.find("```cuda"), std::string::npos);
  EXPECT_FALSE(extract_code(cuda_track(), "").found);
}

TEST(AgentExtract, AnUnterminatedLastBlockRunsToTheEnd) {
  const auto e = extract_code(cuda_track(), "```cuda\nint a;\n```\n```cuda\nint b;\nint c = (");
  ASSERT_TRUE(e.found);
  EXPECT_TRUE(e.unterminated);
  EXPECT_EQ(e.code, "int b;\nint c = (\n");
}

TEST(AgentExtract, FencesOfOtherLengthsAndTildes) {
  // A longer fence may hold ``` lines; tildes work too; CRLF line ends are taken.
  const auto e = extract_code(cuda_track(), "````cuda\n// shows ```\nint a;\n````\n");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.code, "// shows ```\nint a;\n");
  const auto t = extract_code(cuda_track(), "~~~cpp\r\nint t;\r\n~~~\r\n");
  ASSERT_TRUE(t.found);
  EXPECT_EQ(t.code, "int t;\n");
  const auto indented = extract_code(cuda_track(), "  ```CUDA\n  int i;\n  ```\n");
  ASSERT_TRUE(indented.found);
  EXPECT_EQ(indented.language, "cuda");
}

TEST(AgentExtract, AnEmptyLastBlockFallsBackToTheOneBefore) {
  const auto e = extract_code(cuda_track(), "```cuda\nint a;\n```\n```cuda\n\n```\n");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.code, "int a;\n");
  const auto only_empty = extract_code(cuda_track(), "```cuda\n   \n```\n");
  EXPECT_FALSE(only_empty.found);
  EXPECT_NE(only_empty.problem.find("empty"), std::string::npos);
}

// The Triton track takes Python blocks and says so; a CUDA block is another language to it.
TEST(AgentExtract, TheTritonTrackTakesPythonBlocks) {
  const auto e =
      extract_code(triton_track(), "```python\nimport triton\n```\nBuild:\n```\npip install triton\n```\n");
  ASSERT_TRUE(e.found);
  EXPECT_EQ(e.code, "import triton\n");
  EXPECT_EQ(e.language, "python");
  for (const char* fence : {"py", "Python3", "triton"})
    EXPECT_TRUE(extract_code(triton_track(), std::string("```") + fence + "\nx = 1\n```\n").found) << fence;
  const auto cuda = extract_code(triton_track(), "```cuda\n__global__ void k() {}\n```\n");
  EXPECT_FALSE(cuda.found);
  EXPECT_NE(cuda.problem.find("no Python code block (only blocks marked cuda)"), std::string::npos)
      << cuda.problem;
  EXPECT_NE(cuda.problem.find("Answer with the whole Python file in one ```python block."), std::string::npos)
      << cuda.problem;
  EXPECT_FALSE(extract_code(cuda_track(), "```python\nimport triton\n```\n").found)
      << "and the other way round";
}

// One limit for a solution's size on every path (the service refuses a larger source): over it, the turn is
// the model's extraction error, with the limit named; at it, the code is taken.
TEST(AgentExtract, ABlockOverTheSolutionLimitIsNotTaken) {
  const std::string line = "// " + std::string(60, 'x') + "\n";
  std::string at_limit;
  while (at_limit.size() + line.size() < ptxbench::kMaxSolutionBytes) at_limit += line;
  at_limit += std::string(ptxbench::kMaxSolutionBytes - at_limit.size() - 1, 'y') + "\n";
  ASSERT_EQ(at_limit.size(), ptxbench::kMaxSolutionBytes);
  const auto taken = extract_code(cuda_track(), "```cuda\n" + at_limit + "```\n");
  EXPECT_TRUE(taken.found);
  EXPECT_EQ(taken.code.size(), ptxbench::kMaxSolutionBytes);
  const auto over = extract_code(cuda_track(), "```cuda\n" + at_limit + "z\n```\n");
  EXPECT_FALSE(over.found);
  EXPECT_TRUE(over.code.empty());
  EXPECT_NE(over.problem.find("1048578 bytes, over the limit of 1048576 bytes"), std::string::npos)
      << over.problem;
}
