#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "arch/profile.h"
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
    if (t.family != "gemm") continue;  // the attention tasks: ShippedAttentionTasks
    // The four weights at M = 8192 keep their ids; every weight of a served model at three M.
    if (t.id.starts_with("gemm-bf16-")) {
      EXPECT_EQ(t.main_shape["M"], 8192) << t.id;
    }
    bool small = false, odd = false;
    for (const auto& s : t.check_shapes) small |= s["M"] <= 128, odd |= s["M"] % 2 == 1;
    EXPECT_TRUE(small && odd) << t.id << " needs a small and an odd M among its check shapes";
    EXPECT_EQ(t.mode, t.arch == "sm_100a" ? TaskMode::static_only : TaskMode::full) << t.id;
  }
  const Task* t = registry.find(kId);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->flops(t->main_shape), 2LL * 8192 * 4096 * 4096);
  EXPECT_EQ(registry.matching("gemm-bf16-*-sm100a").size(), 4u);
  // PTXBench's 17 weights of served models, each at a decode-like, a mid and a large M, on both
  // architectures.
  EXPECT_EQ(registry.matching("@gemm-models").size(), 17u * 3 * 2);
  EXPECT_EQ(registry.matching("gemm-m70-n4096-k4096-sm90a").size(), 1u);
}

// Issue 7: forward and backward, D = 64, 96, 128, causal and not, plus GQA 32/4 causal, on both
// architectures; Sq = Sk = 4096 main shapes with at least 0.3 ms of work even at 750 TFLOP/s; check shapes
// with a sequence that is not a multiple of 128 and with Sq != Sk.
// --tasks takes globs and groups, comma-separated; a group is what the task files say they belong to.
TEST(TaskRegistry, SelectionsNameGlobsAndGroups) {
  const TaskRegistry registry = TaskRegistry::load(kTasks);
  const auto ids = [&](const std::string& text) {
    std::vector<std::string> out;
    for (const Task* t : registry.matching(text)) out.push_back(t->id);
    return out;
  };
  EXPECT_EQ(registry.groups(),
            (std::vector<std::string>{"attention-dense", "gemm", "gemm-models", "gqa-serving", "held-out"}));
  EXPECT_EQ(ids("@gemm"), ids("gemm-*"));
  EXPECT_EQ(ids("@gemm").size(), 8u + 47 * 2);
  // The generalisation split: GQA and the d96 backward, on both architectures.
  const std::vector<std::string> held = ids("@held-out");
  EXPECT_EQ(held.size(), 8u);
  for (const std::string& id : held)
    EXPECT_TRUE(id.find("gqa") != std::string::npos || id.starts_with("attention-bwd-d96-")) << id;
  EXPECT_EQ(ids("@held-out,gemm-bf16-*-sm90a").size(), 12u);
  // GQA attention, the paged decodes, the GQA ragged prefills, the paged prefills.
  EXPECT_EQ(ids("@gqa-serving").size(), 4u + 8 + 2 + 4);
  EXPECT_TRUE(registry.select("@held-out").matches("attention-fwd-gqa32x4-d128-causal-sm90a"));
  EXPECT_FALSE(registry.select("@held-out").matches("attention-fwd-d96-sm90a"));
  EXPECT_FALSE(registry.select(std::vector<std::string>{}).matches("gemm-bf16-n4096-k4096-sm90a"));
  try {
    (void)registry.select("gemm-*,@helt-out");
    FAIL() << "an unknown group was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("no task group 'helt-out' (groups: attention-dense, gemm, gemm-models, "
                                   "gqa-serving, held-out)"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)registry.select("gemm-*,"), ConfigError);
}

TEST(TaskRegistry, ShippedAttentionTasks) {
  const auto registry = TaskRegistry::load(kTasks);
  EXPECT_EQ(registry.matching("attention-fwd-*,attention-bwd-*").size(), 28u + 12 + 6);
  // Long-context prefill: the causal d128 forward and backward at 2048, 8192 and 16384.
  for (const char* kind : {"fwd", "bwd"})
    for (const char* arch : {"sm90a", "sm100a"})
      for (int length : {2048, 8192, 16384}) {
        const Task* t = registry.find(fmt::format("attention-{}-d128-causal-s{}-{}", kind, length, arch));
        ASSERT_NE(t, nullptr) << kind << length << arch;
        EXPECT_EQ(t->main_shape["Sq"], length);
      }
  // Head dim 256: the causal forward alone (abi.h admits D = 256 for the forward only) at the same lengths.
  for (const char* arch : {"sm90a", "sm100a"})
    for (int length : {2048, 8192, 16384}) {
      const Task* t = registry.find(fmt::format("attention-fwd-d256-causal-s{}-{}", length, arch));
      ASSERT_NE(t, nullptr) << length << arch;
      EXPECT_EQ(t->main_shape["D"], 256);
      EXPECT_EQ(registry.find(fmt::format("attention-bwd-d256-causal-s{}-{}", length, arch)), nullptr);
    }
  for (const char* kind : {"fwd", "bwd"})
    for (const char* arch : {"sm90a", "sm100a"}) {
      for (const char* d : {"d64", "d96", "d128"})
        for (const char* causal : {"", "-causal"}) {
          const std::string id = fmt::format("attention-{}-{}{}-{}", kind, d, causal, arch);
          EXPECT_NE(registry.find(id), nullptr) << id;
        }
      const std::string gqa = fmt::format("attention-{}-gqa32x4-d128-causal-{}", kind, arch);
      ASSERT_NE(registry.find(gqa), nullptr) << gqa;
      EXPECT_EQ(registry.find(gqa)->main_shape["Hq"], 32);
      EXPECT_EQ(registry.find(gqa)->main_shape["Hkv"], 4);
    }
  for (const Task* t : registry.matching("attention-fwd-*,attention-bwd-*")) {
    const bool causal = t->parameters.at("causal");
    const bool forward = t->family == "attention-forward";
    const int64_t length = t->id.find("-causal-s") == std::string::npos ? 4096 : t->main_shape["Sq"];
    EXPECT_EQ(t->main_shape["Sq"], length) << t->id;
    EXPECT_EQ(t->main_shape["Sk"], length) << t->id;
    const int64_t full = 4 * t->main_shape["B"] * t->main_shape["Hq"] * length * length * t->main_shape["D"];
    EXPECT_EQ(t->flops(t->main_shape), (forward ? full : full * 5 / 2) / (causal ? 2 : 1)) << t->id;
    EXPECT_GE(static_cast<double>(full / (causal ? 2 : 1)), 0.3e-3 * 750e12)
        << t->id << ": forward too short";
    bool odd = false, unequal = false;
    for (const auto& s : t->check_shapes) odd |= s["Sq"] % 128 != 0, unequal |= s["Sq"] != s["Sk"];
    EXPECT_TRUE(odd && unequal) << t->id;
    EXPECT_EQ(t->mode, t->arch == "sm_100a" ? TaskMode::static_only : TaskMode::full) << t->id;
    EXPECT_EQ(t->tolerance_for("LSE").atol, forward ? 0.001 : t->tolerance.atol) << t->id;
    EXPECT_EQ(t->baseline, "vendor-attention") << t->id;
  }
}

// The paged decodes: GQA 32/8 with pages of 1 and 64, 32/4 and 64/8 with pages of 64, on both architectures;
// a main shape whose cache is far past the L2; ragged check shapes with partial pages; bulk copies and
// mbarriers required, no family doing the math, no coverage; the roofline as the only speed reference.
TEST(TaskRegistry, ShippedDecodeTasks) {
  const auto registry = TaskRegistry::load(kTasks);
  const auto decodes = registry.matching("attention-decode-*");
  EXPECT_EQ(decodes.size(), 8u);
  for (const char* arch : {"sm90a", "sm100a"})
    for (const char* name : {"gqa32x8-d128-p1", "gqa32x8-d128-p64", "gqa32x4-d128-p64", "gqa64x8-d128-p64"})
      EXPECT_NE(registry.find(fmt::format("attention-decode-{}-{}", name, arch)), nullptr) << name << arch;
  for (const Task* t : decodes) {
    EXPECT_EQ(t->family, "attention-decode-paged");
    const auto& m = t->main_shape;
    EXPECT_EQ(t->flops(m), 4 * m["T"] * m["Hq"] * m["D"]) << t->id;
    EXPECT_GE(4 * m["T"] * m["Hkv"] * m["D"], int64_t{400} << 20)
        << t->id << ": the cache would sit in the L2";
    bool partial = false, short_rows = false;
    for (const auto& s : t->check_shapes) {
      partial |= s["L"] % s["page"] != 0 || s["page"] == 1;
      short_rows |= s["L"] < 100;
      EXPECT_LT(s["T"], s["B"] * s["L"]) << t->id << " " << s.label << ": lengths all equal";
    }
    EXPECT_TRUE(partial && short_rows) << t->id;
    EXPECT_EQ(t->coverage_threshold, 0) << t->id;
    for (const auto& f : t->required) EXPECT_FALSE(f.does_the_math) << t->id;
    EXPECT_EQ(t->baseline, "none") << t->id;
    EXPECT_EQ(t->tolerance_for("LSE").atol, 0.001) << t->id;
    const Values values = values_of(t->family_spec(), m.dims, t->parameters);
    EXPECT_EQ(values.at("max_pages"), (m["L"] + m["page"] - 1) / m["page"]) << t->id;
    EXPECT_GE(values.at("num_pages") * m["page"], m["T"] + m["B"] * m["page"]) << t->id << ": no spare pages";
  }
}

// The ragged prefills: GQA 32/8 and MHA 16/16 at D = 128, a batch of long and short prompts whose FLOPs are
// the shape's; check shapes with short sequences and sequences of one token.
TEST(TaskRegistry, ShippedPrefillTasks) {
  const auto registry = TaskRegistry::load(kTasks);
  const auto prefills = registry.matching("attention-prefill-ragged-*");
  EXPECT_EQ(prefills.size(), 4u);
  for (const Task* t : prefills) {
    const auto& m = t->main_shape;
    const int64_t long_rows = m["Bl"] * m["L"] * m["L"], short_rows = (m["B"] - m["Bl"]) * m["S"] * m["S"];
    EXPECT_EQ(t->flops(m), 2 * m["Hq"] * m["D"] * (long_rows + short_rows)) << t->id;
    EXPECT_GE(static_cast<double>(t->flops(m)), 0.3e-3 * 750e12) << t->id << ": too short to time";
    bool one_token = false;
    for (const auto& s : t->check_shapes) one_token |= s["S"] == 1;
    EXPECT_TRUE(one_token) << t->id;
    EXPECT_EQ(t->coverage_threshold, 0.9) << t->id;
    const Values values = values_of(t->family_spec(), m.dims, t->parameters);
    EXPECT_EQ(values.at("T"), m["Bl"] * m["L"] + (m["B"] - m["Bl"]) * m["S"]) << t->id;
  }
}

// The workspace function takes integer scalars of the entry point, by their names: the decode's page_size is
// the dimension page, which the runner passes by evaluating the scalar (a lookup of "page_size" among the
// dimensions found nothing: every decode evaluation on the H200 was a harness error, 2026-12-05).
TEST(Family, WorkspaceArgumentsAreTheEntryPointsIntegerScalars) {
  for (const Family& family : all_families()) {
    if (!family.workspace) continue;
    for (const std::string& argument : family.workspace->arguments) {
      const ScalarSpec* scalar = family.scalar(argument);
      ASSERT_NE(scalar, nullptr) << family.name << ": " << argument;
      EXPECT_EQ(scalar->kind, ScalarSpec::integer) << family.name << ": " << argument;
    }
  }
  const auto registry = TaskRegistry::load(kTasks);
  const Task* t = registry.find("attention-decode-gqa32x8-d128-p64-sm90a");
  ASSERT_NE(t, nullptr);
  const Values values = values_of(t->family_spec(), t->main_shape.dims, t->parameters);
  EXPECT_EQ(integer_scalar(t->family_spec(), "page_size", values), 64);
  EXPECT_EQ(integer_scalar(t->family_spec(), "max_pages", values), 8192 / 64);
  EXPECT_THROW(integer_scalar(t->family_spec(), "page", values),
               std::logic_error);  // a dimension, not a scalar
}

// The paged prefills: GQA 32/8 at D = 128 in pages of 16 and 64, new tokens after a cached prefix, FLOPs the
// shape's; check shapes with partial last pages and one new token after a long prefix.
TEST(TaskRegistry, ShippedPagedPrefillTasks) {
  const auto registry = TaskRegistry::load(kTasks);
  const auto prefills = registry.matching("attention-prefill-paged-*");
  EXPECT_EQ(prefills.size(), 4u);
  for (const Task* t : prefills) {
    const auto& m = t->main_shape;
    const auto work = [&](int64_t n) { return 2 * n * m["P"] + n * n; };  // per head and D, halved
    EXPECT_EQ(t->flops(m),
              2 * m["Hq"] * m["D"] * (m["Bl"] * work(m["L"]) + (m["B"] - m["Bl"]) * work(m["S"])))
        << t->id;
    EXPECT_GE(static_cast<double>(t->flops(m)), 0.3e-3 * 750e12) << t->id << ": too short to time";
    bool partial_page = false, decode_row = false;
    for (const auto& s : t->check_shapes) {
      partial_page |= (s["L"] + s["P"]) % s["page"] != 0;
      decode_row |= s["S"] == 1 && s["P"] > s["L"];
    }
    EXPECT_TRUE(partial_page && decode_row) << t->id;
    const Values values = values_of(t->family_spec(), m.dims, t->parameters);
    const int64_t new_tokens = m["Bl"] * m["L"] + (m["B"] - m["Bl"]) * m["S"];
    EXPECT_EQ(values.at("T"), new_tokens) << t->id;
    EXPECT_EQ(values.at("max_pages") * m["page"], m["L"] + m["P"])
        << t->id << ": the main shape fills its pages";
    // Every sequence's pages and B spare ones: what draw_paged_prefill_layout needs.
    int64_t pages = m["Bl"] * ((m["L"] + m["P"] + m["page"] - 1) / m["page"]) +
                    (m["B"] - m["Bl"]) * ((m["S"] + m["P"] + m["page"] - 1) / m["page"]);
    EXPECT_GE(values.at("num_pages"), pages + m["B"]) << t->id;
  }
}

// A decode's shape is held to the lengths the runner can draw; its task file has no coverage.
TEST(TaskFile, DecodeShapesMustAdmitALayout) {
  const std::string id = "attention-decode-gqa32x8-d128-p64-sm90a";
  const json valid = json::parse(read_file(kTasks / "sm90a" / (id + ".json")));
  EXPECT_EQ(load_error(valid.dump(), id).first, "");
  for (const auto& [dim, value, problem] :
       {std::tuple{"T", 64 * 8192 + 1, "T, the tokens of the batch, is at most B*L"},
        std::tuple{"T", 8192 + 62, "T must hold one sequence of L tokens and B - 1 of at least one"},
        std::tuple{"D", 96, "D must be 64, 128 or 256"}}) {
    json doc = valid;
    doc["shapes"]["main"][dim] = value;
    const auto [field, message] = load_error(doc.dump(), id);
    EXPECT_EQ(field, "shapes.main") << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
  }
  // 2^31 - 1 tokens in pages of 64 is a pool of 33.6 million pages; with another 64 sequences' worth it would
  // not be, and in pages of one token the pool's page count is past the entry point's int.
  json huge = valid;
  huge["shapes"]["main"]["L"] = 40000000;
  huge["shapes"]["main"]["T"] = 2147483647;
  EXPECT_EQ(load_error(huge.dump(), id).first, "");
  huge["shapes"]["main"]["page"] = 1;
  const auto [field, message] = load_error(huge.dump(), id);
  EXPECT_EQ(field, "shapes.main") << message;
  EXPECT_NE(message.find("the entry point's int num_pages = 2147483711 does not fit in 32 bits"),
            std::string::npos)
      << message;
  json with_coverage = valid;
  with_coverage["coverage_threshold"] = 0.9;
  EXPECT_EQ(load_error(with_coverage.dump(), id).first, "coverage_threshold");
}

static json valid_attention_task() {
  return json::parse(read_file(kTasks / "sm90a" / "attention-fwd-d128-causal-sm90a.json"));
}

TEST(TaskFile, AttentionFileLoadsWithParametersAndPerOutputTolerances) {
  const fs::path dir = temp_dir("attention");
  const fs::path file = dir / "attention-fwd-d128-causal-sm90a.json";
  write_file(file, valid_attention_task().dump());
  const Task t = load_task_file(file);
  EXPECT_TRUE(t.parameters.at("causal"));
  EXPECT_EQ(t.tolerance_for("O").atol, t.tolerance.atol);
  EXPECT_EQ(t.tolerance_for("LSE").atol, 0.001);
  EXPECT_EQ(t.tolerance_for("LSE").rtol, 0.0);
  const json shown = to_json(t);
  EXPECT_EQ(shown["parameters"]["causal"], true);
  EXPECT_EQ(shown["tolerances"]["LSE"]["atol"], 0.001);
}

// D = 256 is the forward's alone: the backward's and the prefills' head dims stop at 128 (abi.h).
TEST(TaskFile, HeadDim256IsTheForwardsAlone) {
  const std::string forward_id = "attention-fwd-d256-causal-s2048-sm90a";
  EXPECT_EQ(load_error(read_file(kTasks / "sm90a" / (forward_id + ".json")), forward_id).first, "");
  const std::string backward_id = "attention-bwd-d128-causal-s2048-sm90a";
  json backward = json::parse(read_file(kTasks / "sm90a" / (backward_id + ".json")));
  backward["shapes"]["main"]["D"] = 256;
  const auto [field, message] = load_error(backward.dump(), backward_id);
  EXPECT_EQ(field, "shapes.main");
  EXPECT_NE(message.find("D must be 64, 96 or 128"), std::string::npos) << message;
}

class BrokenAttentionTaskFile : public testing::TestWithParam<Mutation> {};

TEST_P(BrokenAttentionTaskFile, NamesTheFieldAndTheProblem) {
  json doc = valid_attention_task();
  GetParam().apply(doc);
  auto [field, message] = load_error(doc.dump(), "attention-fwd-d128-causal-sm90a");
  EXPECT_EQ(field, GetParam().field) << message;
  EXPECT_NE(message.find(GetParam().problem), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, BrokenAttentionTaskFile,
    testing::Values(
        Mutation{"missing_parameters", [](json& d) { d.erase("parameters"); }, "parameters", "needs: causal"},
        Mutation{"parameters_not_object", [](json& d) { d["parameters"] = true; }, "parameters",
                 "must be an object"},
        Mutation{"missing_causal", [](json& d) { d["parameters"] = json::object(); }, "parameters.causal",
                 "is missing"},
        Mutation{"causal_not_boolean", [](json& d) { d["parameters"]["causal"] = 1; }, "parameters.causal",
                 "true or false"},
        Mutation{"unknown_parameter", [](json& d) { d["parameters"]["window"] = true; }, "parameters.window",
                 "not a parameter"},
        Mutation{"tolerances_unknown_output", [](json& d) { d["tolerances"]["P"] = d["tolerances"]["LSE"]; },
                 "tolerances.P", "not an output"},
        Mutation{"tolerances_empty", [](json& d) { d["tolerances"] = json::object(); }, "tolerances",
                 "at least one output"},
        Mutation{"tolerances_negative", [](json& d) { d["tolerances"]["LSE"]["atol"] = -1; },
                 "tolerances.LSE", "non-negative"},
        Mutation{"tolerances_misspelt", [](json& d) { d["tolerances"]["LSE"]["abstol"] = 1; },
                 "tolerances.LSE.abstol", "unknown field"},
        Mutation{"tolerances_not_object", [](json& d) { d["tolerances"]["LSE"] = 0.001; }, "tolerances.LSE",
                 "must be an object"},
        Mutation{"head_dim", [](json& d) { d["shapes"]["main"]["D"] = 80; }, "shapes.main",
                 "64, 96, 128 or 256"},
        Mutation{"gqa_group", [](json& d) { d["shapes"]["check"][0]["Hkv"] = 3; }, "shapes.check[0]",
                 "multiple of Hkv"},
        Mutation{"causal_sq_above_sk",
                 [](json& d) {
                   d["shapes"]["check"][1]["Sq"] = 1536;
                   d["shapes"]["check"][1]["Sk"] = 512;
                 },
                 "shapes.check[1]", "Sq <= Sk"},
        Mutation{"gemm_dim", [](json& d) { d["shapes"]["main"]["M"] = 8; }, "shapes.main.M",
                 "not a dimension"},
        Mutation{"gemm_baseline", [](json& d) { d["baseline"] = "cublaslt"; }, "baseline",
                 "not a baseline of family 'attention-forward' (known: vendor-attention, none)"}),
    [](const auto& test) { return std::string(test.param.name); });

TEST(TaskFile, GemmTakesNoParameters) {
  json doc = valid_task();
  doc["parameters"] = {{"causal", true}};
  auto [field, message] = load_error(doc.dump());
  EXPECT_EQ(field, "parameters.causal");
  EXPECT_NE(message.find("has no parameters"), std::string::npos) << message;
  doc["parameters"] = json::object();  // empty: allowed
  EXPECT_EQ(load_error(doc.dump()).first, "");
  doc.erase("parameters");
  doc["tolerances"] = {{"LSE", {{"rtol", 0}, {"atol", 0.001}}}};
  EXPECT_EQ(load_error(doc.dump()).first, "tolerances.LSE");
  doc["tolerances"] = {{"C", {{"rtol", 0.02}, {"atol", 0.02}}}};  // GEMM's one output: allowed
  EXPECT_EQ(load_error(doc.dump()).first, "");
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

// A key given twice is refused, wherever it is, rather than its last value silently taken.
TEST(TaskFile, DuplicateKeysAreNamedWithTheirPath) {
  const std::string text = valid_task().dump();
  const auto with_duplicate = [&](const std::string& at, const std::string& inserted) {
    std::string changed = text;
    const size_t position = changed.find(at);
    EXPECT_NE(position, std::string::npos) << at;
    return changed.insert(position + at.size(), inserted);
  };
  const struct {
    std::string at, inserted, field;
  } cases[] = {
      {"{", R"("mode":"static",)", "mode"},
      {R"("main":{)", R"("K":1,)", "shapes.main.K"},
      {R"("does_the_math":true)", R"(,"does_the_math":false)", "required[0].does_the_math"},
      {R"("sass":["UTMALDG"])", R"(,"sass":["UBLKCP"])", "required[1].sass"},
  };
  for (const auto& c : cases) {
    auto [field, message] = load_error(with_duplicate(c.at, c.inserted));
    EXPECT_EQ(field, c.field) << message;
    EXPECT_NE(message.find("given twice"), std::string::npos) << message;
  }
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
        Mutation{"dim_beyond_int",
                 [](json& d) {
                   d["shapes"]["main"]["M"] = int64_t{1} << 40;
                   d["shapes"]["main"]["N"] = d["shapes"]["main"]["K"] = 1;
                 },
                 "shapes.main.M", "at most 2147483647"},
        Mutation{"dim_beyond_int64", [](json& d) { d["shapes"]["main"]["M"] = uint64_t{1} << 63; },
                 "shapes.main.M", "at most 2147483647"},
        Mutation{"tensor_bytes_overflow",
                 [](json& d) { d["shapes"]["check"][0]["M"] = d["shapes"]["check"][0]["K"] = 2147483647; },
                 "shapes.check[0]", "tensor A is too large"},
        Mutation{"group_not_a_name",
                 [](json& d) {
                   d["groups"] = {"gemm", "Held Out"};
                 },
                 "groups", "\"Held Out\" is not a group name"},
        Mutation{"group_twice",
                 [](json& d) {
                   d["groups"] = {"gemm", "gemm"};
                 },
                 "groups", "appears twice"},
        Mutation{"check_without_label", [](json& d) { d["shapes"]["check"][0].erase("label"); },
                 "shapes.check[0].label", "is missing"},
        Mutation{"check_not_array", [](json& d) { d["shapes"]["check"] = json::object(); }, "shapes.check",
                 "must be an array"},
        // FLOPs are the family's (src/family): a task file that gives its own would be a second definition.
        Mutation{"own_flops", [](json& d) { d["flops"] = "2*M*N*K"; }, "flops",
                 "FLOPs are the family's (2*M*N*K), not a task file's"},
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
                 "at most one"},
        // A task with no family doing the math (a memory-bound one) has no coverage to hold it to.
        Mutation{"coverage_without_math", [](json& d) { d["required"][0]["does_the_math"] = false; },
                 "coverage_threshold",
                 "applies to a \"does_the_math\" family, and no required family has it"},
        Mutation{"math_without_coverage", [](json& d) { d.erase("coverage_threshold"); },
                 "coverage_threshold", "is missing"},
        Mutation{"unknown_instruction_family", [](json& d) { d["required"][1]["name"] = "tensor-memory"; },
                 "required[1].name",
                 "unknown instruction family 'tensor-memory' (known: mbarrier, tcgen05.mma, tma, wgmma)"},
        Mutation{"duplicate_family", [](json& d) { d["required"][2]["name"] = "wgmma"; }, "required[2].name",
                 "appears twice"},
        Mutation{"misspelt_ptx", [](json& d) { d["required"][0]["ptx"] = {"wgmma.mma_asink"}; },
                 "required[0].ptx",
                 "'wgmma.mma_asink' is no ptx instruction of sm_90a (known: wgmma.mma_async,"},
        Mutation{"misspelt_sass", [](json& d) { d["required"][0]["sass"] = {"HGMMAX"}; }, "required[0].sass",
                 "'HGMMAX' is no sass instruction of sm_90a"},
        Mutation{"other_architectures_opcode", [](json& d) { d["required"][0]["sass"] = {"UTCHMMA"}; },
                 "required[0].sass", "'UTCHMMA' is no sass instruction of sm_90a"},
        Mutation{"coverage_above_one", [](json& d) { d["coverage_threshold"] = 1.5; }, "coverage_threshold",
                 "(0, 1]"},
        Mutation{"full_where_no_gpu_runs", [](json& d) { d["arch"] = "sm_100a"; }, "mode",
                 "\"full\", but no Blackwell GPU runs the GPU stages here (arch/sm_100a.json)"},
        Mutation{"unknown_baseline", [](json& d) { d["baseline"] = "cudnn"; }, "baseline",
                 "'cudnn' is not a baseline of family 'gemm' (known: cublaslt)"},
        Mutation{"attention_baseline", [](json& d) { d["baseline"] = "vendor-attention"; }, "baseline",
                 "not a baseline of family 'gemm'"},
        Mutation{"unknown_track",
                 [](json& d) {
                   d["tracks"] = {"cuda", "cutile"};
                 },
                 "tracks", "\"cutile\" is not a track (known: cuda, triton)"},
        Mutation{"track_not_a_string", [](json& d) { d["tracks"] = {1}; }, "tracks", "1 is not a track"},
        Mutation{"tracks_not_a_list", [](json& d) { d["tracks"] = "triton"; }, "tracks", "must be an array"},
        Mutation{"no_track", [](json& d) { d["tracks"] = json::array(); }, "tracks", "at least one track"},
        Mutation{"track_twice",
                 [](json& d) {
                   d["tracks"] = {"triton", "triton"};
                 },
                 "tracks", "'triton' appears twice"}),
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
  EXPECT_THROW(evaluate_expression("99999999999999999999*M", v), std::invalid_argument);
  EXPECT_THROW(evaluate_expression("M*N*K*M*N*K", v), std::invalid_argument);
  EXPECT_THROW(evaluate_expression("2*M*N*L", v), std::invalid_argument);
  // The shape rules' and parameters' operators, and the reals of a float argument.
  EXPECT_EQ(evaluate_expression("M % 1000 == 192 && !(K < N) || 0", v), 1);
  EXPECT_EQ(evaluate_expression("M != 8192 || K <= 4095 || K >= 4097", v), 0);
  EXPECT_EQ(evaluate_expression("-M + 2*M", v), 8192);
  EXPECT_THROW(evaluate_expression("sqrt(M)", v), std::invalid_argument);
  EXPECT_DOUBLE_EQ(evaluate_real("1/sqrt(K)", v), 1.0 / 64);
  EXPECT_DOUBLE_EQ(evaluate_real("1/log(2)", v), 1.0 / std::log(2.0));
  EXPECT_THROW(evaluate_real("sqrt(0-M)", v), std::invalid_argument);
}

TEST(TaskText, ToleranceAndParametersAreSpelledOut) {
  const auto registry = TaskRegistry::load(kTasks);
  const Task* gemm = registry.find(kId);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(describe_tolerances(*gemm), "|out - ref| <= 0.01 + 0.01 * |ref|");
  EXPECT_EQ(describe_parameters(*gemm), "");
  const Task* attention = registry.find("attention-fwd-d64-causal-sm90a");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(describe_parameters(*attention), "causal = true");
  EXPECT_NE(describe_tolerances(*attention).find("LSE: |out - ref| <= 0.001 + 0 * |ref|"), std::string::npos)
      << describe_tolerances(*attention);
}

// "tracks" says which languages a solution may be written in; left out, CUDA alone.
TEST(TaskFile, TracksDefaultToCudaAlone) {
  const fs::path dir = temp_dir("tracks");
  json doc = valid_task();
  doc.erase("tracks");
  write_file(dir / (std::string(kId) + ".json"), doc.dump());
  EXPECT_EQ(load_task_file(dir / (std::string(kId) + ".json")).tracks, std::vector<std::string>{"cuda"});
  doc["tracks"] = {"triton"};
  write_file(dir / (std::string(kId) + ".json"), doc.dump());
  const Task triton_only = load_task_file(dir / (std::string(kId) + ".json"));
  EXPECT_EQ(triton_only.tracks, std::vector<std::string>{"triton"});
  EXPECT_EQ(to_json(triton_only)["tracks"], json({"triton"}));
  fs::remove_all(dir);
  // The Hopper tasks accept both; the Blackwell ones (static-only: Triton compiles on the GPU) CUDA alone.
  const std::vector<std::string> both = {"cuda", "triton"}, cuda = {"cuda"};
  const TaskRegistry registry = TaskRegistry::load(kTasks);
  for (const Task& t : registry.all()) EXPECT_EQ(t.tracks, t.arch == "sm_90a" ? both : cuda) << t.id;
}

// An instruction named with its modifiers is one the architecture knows (its profile, arch/*.json).
TEST(TaskFile, RequiredInstructionsMayCarryModifiers) {
  const ArchProfile& hopper = *find_arch("sm_90a");
  EXPECT_TRUE(known_instruction(hopper.ptx_mnemonics, "mbarrier.try_wait.parity"));
  EXPECT_TRUE(known_instruction(hopper.sass_opcodes, "SYNCS.PHASECHK"));
  EXPECT_TRUE(known_instruction(hopper.sass_opcodes, "HGMMA"));
  EXPECT_FALSE(known_instruction(hopper.sass_opcodes, "HGMMA."));
  EXPECT_FALSE(known_instruction(hopper.sass_opcodes, "HGMM"));
  EXPECT_FALSE(known_instruction(hopper.ptx_mnemonics, "tcgen05.mma"));
  EXPECT_TRUE(known_instruction(find_arch("sm_100a")->ptx_mnemonics, "tcgen05.mma"));
}
