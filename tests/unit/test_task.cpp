#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "task/task.h"
#include "util/files.h"

using namespace ptxbench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kTasks = fs::path(PTXBENCH_SOURCE_DIR) / "tasks";
const char* kId = "gemm-bf16-n4096-k4096-sm90a";

json valid_task() {
  return json::parse(read_file(kTasks / "sm90a" / (std::string(kId) + ".json")));
}

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("ptxbench-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Writes `doc` as a task file and returns the error loading it gives (empty field when it loads).
std::pair<std::string, std::string> load_error(const std::string& text, const std::string& file_id = kId) {
  fs::path dir = temp_dir("task");
  fs::path file = dir / (file_id + ".json");
  write_file(file, text);
  try {
    load_task_file(file);
  } catch (const TaskFileError& e) {
    EXPECT_EQ(e.file, file);
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << "the message names the file";
    return {e.field, e.what()};
  }
  return {"", ""};
}

struct Mutation {
  const char* name;
  std::function<void(json&)> apply;
  const char* field;    // the field the error must name
  const char* problem;  // a part of the message
};

}  // namespace

TEST(TaskRegistry, ShippedTasksLoad) {
  const auto registry = TaskRegistry::load(kTasks);
  EXPECT_GE(registry.all().size(), 8u);
  for (const char* n : {"7168-k5120", "4096-k4096", "28672-k4096", "4096-k14336"})
    for (const char* arch : {"sm90a", "sm100a"})
      EXPECT_NE(registry.find(std::string("gemm-bf16-n") + n + "-" + arch), nullptr) << n << " " << arch;
  for (const auto& t : registry.all()) {
    EXPECT_EQ(t.main_shape["M"], 8192) << t.id;
    bool small = false, odd = false;
    for (const auto& s : t.check_shapes) small |= s["M"] <= 128, odd |= s["M"] % 2 == 1;
    EXPECT_TRUE(small && odd) << t.id << " needs a small and an odd M among its check shapes";
    EXPECT_EQ(t.mode, t.arch == "sm_100a" ? TaskMode::static_only : TaskMode::full) << t.id;
  }
  const Task* t = registry.find(kId);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->flops(t->main_shape), 2LL * 8192 * 4096 * 4096);
  EXPECT_EQ(registry.matching("gemm-*-sm100a").size(), 4u);
}

TEST(TaskFile, ValidFileLoads) {
  auto [field, message] = load_error(valid_task().dump());
  EXPECT_EQ(field, "") << message;
}

TEST(TaskFile, NotJson) {
  auto [field, message] = load_error("{ \"id\": ");
  EXPECT_EQ(field, "(document)");
  EXPECT_NE(message.find("not valid JSON"), std::string::npos);
}

TEST(TaskFile, IdMustMatchTheFileName) {
  auto [field, message] = load_error(valid_task().dump(), "some-other-name");
  EXPECT_EQ(field, "id");
}

class BrokenTaskFile : public testing::TestWithParam<Mutation> {};

TEST_P(BrokenTaskFile, NamesTheFieldAndTheProblem) {
  json doc = valid_task();
  GetParam().apply(doc);
  auto [field, message] = load_error(doc.dump());
  EXPECT_EQ(field, GetParam().field) << message;
  EXPECT_NE(message.find(GetParam().problem), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, BrokenTaskFile,
    testing::Values(
        Mutation{"missing_title", [](json& d) { d.erase("title"); }, "title", "is missing"},
        Mutation{"title_not_string", [](json& d) { d["title"] = 3; }, "title", "non-empty string"},
        Mutation{"unknown_field", [](json& d) { d["tolerence"] = 1; }, "tolerence", "unknown field"},
        Mutation{"unknown_family", [](json& d) { d["family"] = "conv"; }, "family", "unknown family"},
        Mutation{"unknown_arch", [](json& d) { d["arch"] = "sm_89"; }, "arch", "unknown architecture"},
        Mutation{"bad_mode", [](json& d) { d["mode"] = "fast"; }, "mode", "\"full\" or \"static\""},
        Mutation{"bad_dtype", [](json& d) { d["dtype"] = "fp64"; }, "dtype", "not supported"},
        Mutation{"missing_main", [](json& d) { d["shapes"].erase("main"); }, "shapes.main", "is missing"},
        Mutation{"missing_dim", [](json& d) { d["shapes"]["main"].erase("K"); }, "shapes.main.K",
                 "is missing"},
        Mutation{"negative_dim", [](json& d) { d["shapes"]["check"][1]["M"] = -5; }, "shapes.check[1].M",
                 "positive integer"},
        Mutation{"foreign_dim", [](json& d) { d["shapes"]["main"]["D"] = 64; }, "shapes.main.D",
                 "not a dimension"},
        Mutation{"check_without_label", [](json& d) { d["shapes"]["check"][0].erase("label"); },
                 "shapes.check[0].label", "is missing"},
        Mutation{"check_not_array", [](json& d) { d["shapes"]["check"] = json::object(); }, "shapes.check",
                 "must be an array"},
        Mutation{"flops_unknown_name", [](json& d) { d["flops"] = "2*M*N*L"; }, "flops", "unknown name 'L'"},
        Mutation{"flops_syntax", [](json& d) { d["flops"] = "2*(M*N"; }, "flops", "missing ')'"},
        Mutation{"negative_tolerance", [](json& d) { d["tolerance"]["rtol"] = -1; }, "tolerance",
                 "non-negative"},
        Mutation{"tolerance_string", [](json& d) { d["tolerance"]["atol"] = "0.01"; }, "tolerance.atol",
                 "must be a number"},
        Mutation{"no_required", [](json& d) { d["required"] = json::array(); }, "required", "at least one"},
        Mutation{"required_without_sass", [](json& d) { d["required"][1].erase("sass"); }, "required[1].sass",
                 "is missing"},
        Mutation{"required_empty_ptx", [](json& d) { d["required"][0]["ptx"] = json::array(); },
                 "required[0].ptx", "must not be empty"},
        Mutation{"two_math_families", [](json& d) { d["required"][1]["does_the_math"] = true; }, "required",
                 "exactly one"},
        Mutation{"duplicate_family", [](json& d) { d["required"][2]["name"] = "wgmma"; }, "required[2].name",
                 "appears twice"},
        Mutation{"coverage_above_one", [](json& d) { d["coverage_threshold"] = 1.5; }, "coverage_threshold",
                 "(0, 1]"}),
    [](const auto& test) { return std::string(test.param.name); });

TEST(TaskRegistry, DuplicateIdsAreAnError) {
  fs::path dir = temp_dir("dup");
  write_file(dir / "a" / (std::string(kId) + ".json"), valid_task().dump());
  write_file(dir / "b" / (std::string(kId) + ".json"), valid_task().dump());
  try {
    TaskRegistry::load(dir);
    FAIL() << "two tasks with one id loaded";
  } catch (const TaskFileError& e) {
    EXPECT_EQ(e.field, "id");
    EXPECT_NE(std::string(e.what()).find("also the id of"), std::string::npos);
  }
}

TEST(TaskRegistry, MissingFolderIsAConfigError) {
  EXPECT_THROW(TaskRegistry::load("/nonexistent/ptxbench/tasks"), ConfigError);
}

TEST(Expression, Evaluates) {
  const std::map<std::string, int64_t> v = {{"M", 8192}, {"N", 4096}, {"K", 4096}, {"B", 2}};
  EXPECT_EQ(evaluate_expression("2*M*N*K", v), 2LL * 8192 * 4096 * 4096);
  EXPECT_EQ(evaluate_expression(" (M + N) * 2 - K / B ", v), (8192 + 4096) * 2 - 4096 / 2);
  EXPECT_THROW(evaluate_expression("M/0", v), std::invalid_argument);
  EXPECT_THROW(evaluate_expression("M*", v), std::invalid_argument);
  EXPECT_THROW(evaluate_expression("M N", v), std::invalid_argument);
}
