// The architecture profiles (arch/*.json through src/arch/profile.h): what the inlined files say, how a wrong
// profile is refused, and that the task files agree with them.
#include <gtest/gtest.h>

#include <string>

#include "arch/profile.h"
#include "task/task.h"

using namespace ptxbench;

namespace {

const std::string kCommon = R"({"ptx_mnemonics": ["mbarrier.try_wait"], "sass_opcodes": ["SYNCS", "HMMA"],
  "families": {"mbarrier": {"name": "mbarrier", "ptx": ["mbarrier.try_wait"], "sass": ["SYNCS.PHASECHK"]}},
  "mma_opcodes": [{"opcodes": ["HMMA"], "warps": 1, "shapes": {"16816": [16, 8, 16]}}],
  "profile": {"sections": ["Occupancy"], "figures": {"achieved_occupancy_pct": ["a.pct", "b.pct"]},
              "stalls": {"prefix": "stall_", "suffix": ".ratio"}}})";

std::string profile(const std::string& runtime = "full", const std::string& math_sass = "XGMMA") {
  return R"({"name": "sm_77a", "marketing": "Test", "gencode": "arch=compute_77a,code=sm_77a",
    "compute_capability": 77, "runtime": ")" +
         runtime + R"(", "runs": "Run here.", "tracks": ["cuda"], "kit": "test",
    "dense_bf16_flops_per_sm_per_clock": 1024,
    "math": {"name": "xmma", "ptx": ["xmma.mma"], "sass": [")" +
         math_sass + R"("]},
    "ptx_mnemonics": ["xmma.mma"], "sass_opcodes": ["XGMMA"],
    "mma_opcodes": [{"opcodes": ["XGMMA"], "warps": 4, "shape_in_name": true}],
    "counters": {"mma": {"metric": "x.sum", "opcodes": ["XGMMA"]}, "tensor": {"metric": "y.sum"}},
    "profile_tensor_pipe": ["t.pct"], "baselines": ["cublaslt"]})";
}

}  // namespace

TEST(ArchProfile, TheShippedProfiles) {
  const ArchProfile* hopper = find_arch("sm_90a");
  const ArchProfile* blackwell = find_arch("sm_100a");
  ASSERT_TRUE(hopper && blackwell);
  EXPECT_TRUE(hopper->runs);
  EXPECT_FALSE(blackwell->runs) << "no Blackwell GPU runs the GPU stages here";
  EXPECT_EQ(hopper->gencode, "arch=compute_90a,code=sm_90a");
  EXPECT_EQ(blackwell->compute_capability, 100);
  EXPECT_EQ(hopper->math.name, "wgmma");
  EXPECT_EQ(blackwell->math.name, "tcgen05.mma");
  EXPECT_EQ(hopper->kit, "hopper");
  EXPECT_EQ(blackwell->kit, "blackwell");
  ASSERT_TRUE(hopper->counters);
  EXPECT_EQ(hopper->counters->mma.metric, "sm__inst_executed_pipe_tensor_op_gmma.sum");
  EXPECT_FALSE(blackwell->counters);
  EXPECT_NE(blackwell->counters_missing.find("B200"), std::string::npos);
  EXPECT_EQ(arch_of_compute_capability(90), hopper);
  EXPECT_EQ(arch_of_compute_capability(80), nullptr);
  // The shared part is in both: its families, its mnemonics, the warp-level MMA.
  for (const ArchProfile* a : {hopper, blackwell}) {
    EXPECT_TRUE(a->families.contains("tma") && a->families.contains("mbarrier")) << a->name;
    EXPECT_TRUE(known_instruction(a->ptx_mnemonics, "mbarrier.try_wait.parity.shared::cta.b64")) << a->name;
    EXPECT_TRUE(known_instruction(a->sass_opcodes, "HMMA")) << a->name;
  }
  EXPECT_FALSE(known_instruction(blackwell->ptx_mnemonics, "wgmma.mma_async")) << "Hopper's MMA on Blackwell";
  EXPECT_FALSE(known_instruction(hopper->ptx_mnemonics, "tcgen05.mma"));
  const std::vector<std::string> names = instruction_family_names();
  for (const char* name : {"wgmma", "tcgen05.mma", "tma", "mbarrier"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_TRUE(hopper->profile.figures.contains("tensor_pipe_pct"));
  EXPECT_FALSE(blackwell->profile.figures.contains("tensor_pipe_pct")) << "none known without a B200";
  EXPECT_TRUE(blackwell->profile.figures.contains("dram_throughput_pct"));
  EXPECT_TRUE(is_mma_opcode("UTCHMMA.2CTA"));
  EXPECT_TRUE(is_mma_opcode("HGMMA.64x8x16.F32.BF16"));
  EXPECT_FALSE(is_mma_opcode("FFMA"));
}

TEST(ArchProfile, AProfileIsReadWhole) {
  const ArchProfile p = parse_profile(profile(), kCommon);
  EXPECT_EQ(p.name, "sm_77a");
  EXPECT_TRUE(p.runs);
  EXPECT_EQ(p.families.at("mbarrier").sass, std::vector<std::string>{"SYNCS.PHASECHK"});
  EXPECT_TRUE(known_instruction(p.sass_opcodes, "SYNCS"));  // the shared part appended
  ASSERT_EQ(p.mma_opcodes.size(), 2u);
  EXPECT_EQ(p.mma_opcodes[0].warps, 4);
  EXPECT_EQ(p.mma_opcodes[1].shapes.at("16816")[1], 8);
  EXPECT_FALSE(parse_profile(profile("static"), kCommon).runs);
  // The profiler feedback's metrics: the shared ones and the architecture's tensor pipe.
  EXPECT_EQ(p.profile.sections, std::vector<std::string>{"Occupancy"});
  EXPECT_EQ(p.profile.figures.at("achieved_occupancy_pct"), (std::vector<std::string>{"a.pct", "b.pct"}));
  EXPECT_EQ(p.profile.figures.at("tensor_pipe_pct"), std::vector<std::string>{"t.pct"});
  EXPECT_EQ(p.profile.stall_prefix, "stall_");
  std::string no_tensor = profile();
  no_tensor.replace(no_tensor.find("[\"t.pct\"]"), 9, "[]");
  EXPECT_FALSE(parse_profile(no_tensor, kCommon).profile.figures.contains("tensor_pipe_pct"));
}

TEST(ArchProfile, AWrongProfileIsRefusedByField) {
  const auto refusal = [](const std::string& text, const std::string& common = kCommon) {
    try {
      parse_profile(text, common);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal(profile("sometimes")).find("'runtime'"), std::string::npos);
  // The MMA family names an opcode the profile does not list: a task could never be held to it.
  EXPECT_NE(refusal(profile("full", "YGMMA")).find("lacks xmma's YGMMA"), std::string::npos);
  std::string no_gencode = profile();
  no_gencode.replace(no_gencode.find("\"gencode\""), 9, "\"gencodes\"");
  EXPECT_NE(refusal(no_gencode).find("'gencode' is missing"), std::string::npos);
  EXPECT_NE(refusal("{", kCommon).find("not JSON"), std::string::npos);
  std::string no_counters = profile();
  no_counters.replace(no_counters.find("\"counters\": {"), 13, "\"counters\": null, \"was\": {");
  EXPECT_NE(refusal(no_counters).find("'counters_missing' is missing"), std::string::npos)
      << "a profile without counters says why";
  std::string no_stalls = kCommon;
  no_stalls.replace(no_stalls.find("\"prefix\""), 8, "\"prefixes\"");
  EXPECT_NE(refusal(profile(), no_stalls).find("'prefix' is missing"), std::string::npos);
}

// The task files were written from the profiles (tasks/generate.py): each task's MMA family is its
// architecture's, and its mode the profile's runtime.
TEST(ArchProfile, TheTaskFilesAgreeWithTheirProfiles) {
  const auto registry = TaskRegistry::load(std::filesystem::path(PTXBENCH_SOURCE_DIR) / "tasks");
  size_t checked = 0;
  for (const Task* t : registry.matching("*")) {
    const ArchProfile& arch = *find_arch(t->arch);
    EXPECT_EQ(t->mode == TaskMode::full, arch.runs) << t->id;
    for (const RequiredFamily& f : t->required)
      if (f.does_the_math) {
        EXPECT_EQ(f.name, arch.math.name) << t->id;
        EXPECT_EQ(f.ptx, arch.math.ptx) << t->id;
        EXPECT_EQ(f.sass, arch.math.sass) << t->id;
        ++checked;
      }
  }
  EXPECT_GT(checked, 100u);
}
