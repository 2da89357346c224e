// Reading a file a user names: a regular file of bounded size, or an error that names it and says why. A
// folder is not an empty file, and a device or a pipe is never read without end.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "eval/evaluate.h"
#include "util/files.h"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

class ReadRegularFile : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ptxbench-files-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The message read_regular_file throws for `path`.
  static std::string refusal(const fs::path& path, size_t max_bytes = 1 << 20) {
    try {
      read_regular_file(path, max_bytes);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(read without complaint)";
  }

  fs::path dir_;
};

}  // namespace

TEST_F(ReadRegularFile, ReadsEveryByteUpToTheLimit) {
  std::string content("a\0\xFF\xFE", 4);
  content.append(96, 'x');
  write_file(dir_ / "s.cu", content);
  EXPECT_EQ(read_regular_file(dir_ / "s.cu", 100), content);
  EXPECT_EQ(refusal(dir_ / "s.cu", 99), (dir_ / "s.cu").string() + ": over the size limit of 99 bytes");
}

TEST_F(ReadRegularFile, RefusesWhatIsNotARegularFileNamingIt) {
  EXPECT_EQ(refusal(dir_), dir_.string() + ": a folder, not a file");
  EXPECT_EQ(refusal("/dev/zero"), "/dev/zero: a device, not a file");
  const fs::path pipe = dir_ / "pipe";
  ASSERT_EQ(mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_EQ(refusal(pipe), pipe.string() + ": a pipe, not a file") << "and no wait for a writer";
  EXPECT_EQ(refusal(dir_ / "absent.cu"),
            (dir_ / "absent.cu").string() + ": cannot read: No such file or directory");
}

TEST_F(ReadRegularFile, ASolutionMayHoldOneMebibyte) {
  write_file(dir_ / "big.cu", std::string(kMaxSolutionBytes, ' '));
  EXPECT_EQ(read_solution_file(dir_ / "big.cu").size(), kMaxSolutionBytes);
  write_file(dir_ / "bigger.cu", std::string(kMaxSolutionBytes + 1, ' '));
  EXPECT_THROW(read_solution_file(dir_ / "bigger.cu"), std::runtime_error);
}

namespace {

// Writing a file a user names (--export, --port-file): a regular file is replaced whole; a device is written
// in place and stays a device, through a link too (/dev/stdout); a link to a file is never followed.
class WriteOutputFile : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ptxbench-output-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(WriteOutputFile, ANewOrRegularFileIsWrittenWhole) {
  write_output_file(dir_ / "new.json", "one\n");
  EXPECT_EQ(read_file(dir_ / "new.json"), "one\n");
  write_output_file(dir_ / "new.json", "two\n");
  EXPECT_EQ(read_file(dir_ / "new.json"), "two\n");
}

TEST_F(WriteOutputFile, ADeviceIsWrittenInPlaceAndStaysADevice) {
  write_output_file("/dev/null", "into the device\n");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  fs::create_symlink("/dev/null", dir_ / "to-null");  // as /dev/stdout links to the terminal or a pipe
  write_output_file(dir_ / "to-null", "through the link\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "to-null"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(WriteOutputFile, ALinkToAFileOrAFolderIsRefused) {
  write_file(dir_ / "precious.txt", "keep me\n");
  fs::create_symlink(dir_ / "precious.txt", dir_ / "link");
  EXPECT_THROW(write_output_file(dir_ / "link", "overwritten\n"), std::runtime_error);
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(read_file(dir_ / "precious.txt"), "keep me\n");
  fs::create_symlink(dir_ / "nowhere", dir_ / "dangling");
  EXPECT_THROW(write_output_file(dir_ / "dangling", "x"), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
  EXPECT_THROW(write_output_file(dir_, "x"), std::runtime_error);
}

}  // namespace
