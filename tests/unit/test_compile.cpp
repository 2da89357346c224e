// The compile stage against the real nvcc (CUDA 13 at /usr/local/cuda, or $PTXBENCH_NVCC).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include <nlohmann/json.hpp>

#include "cli/project.h"
#include "compile/cache.h"
#include "compile/compile.h"
#include "compile/diagnostics.h"
#include "fake_nvcc.h"
#include "track/track.h"
#include "util/files.h"
#include "util/subprocess.h"
#include "util/text.h"

using namespace ptxbench;
using namespace ptxbench::testing_compile;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = PTXBENCH_SOURCE_DIR;
const fs::path kData = PTXBENCH_TEST_DATA;

class CompileStage : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = fs::temp_directory_path() / ("ptxbench-compile-" + std::to_string(getpid()));
    fs::remove_all(cache_);
    task_ = new Task(load_task_file(kRoot / "tasks" / "sm90a" / "gemm-bf16-n4096-k4096-sm90a.json"));
  }
  static void TearDownTestSuite() {
    fs::remove_all(cache_);
    delete task_;
  }

  static CompileOptions options() {
    CompileOptions o;
    if (const char* nvcc = std::getenv("PTXBENCH_NVCC")) o.nvcc = nvcc;
    o.cache_dir = cache_;
    o.include_dirs = ProjectPaths{.root = kRoot}.include_dirs("hopper");
    o.sandbox = testing_compile::compile_sandbox();  // nvcc in the sandbox, as the front ends run it
    return o;
  }
  static CompileResult compile(const fs::path& file, CompileOptions o = options()) {
    return compile_solution(cuda_track(), read_file(file), *task_, o);
  }

  // A fresh cache folder for the test, and the options that use it.
  static CompileOptions own_cache(const std::string& name) {
    CompileOptions o = options();
    o.cache_dir = cache_ / name;
    return o;
  }
  static int entries(const CompileOptions& o) { return compile_cache_usage(o.cache_dir).entries; }

  static fs::path cache_;
  static Task* task_;
};

const std::string kTinyKernel = "__global__ void tiny() {}\n";
// What a full disk looks like in nvcc's output: the host compiler cannot write its assembly.
const std::string kDiskFull =
    "cc1plus: fatal error: error writing to /tmp/ccA1b2C3.s: No space left on device";
fs::path CompileStage::cache_;
Task* CompileStage::task_ = nullptr;

}  // namespace

TEST_F(CompileStage, NvccIsThere) {
  // Every other test here needs it; fail loudly rather than skip.
  ASSERT_FALSE(nvcc_version(options().nvcc).empty()) << "nvcc not found at " << options().nvcc;
}

TEST_F(CompileStage, SimtExampleCompilesWithoutHopperInstructions) {
  const auto r = compile(kRoot / "solutions" / "examples" / "gemm_simt.cu");
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  EXPECT_TRUE(fs::exists(r.library));
  EXPECT_TRUE(fs::exists(r.ptx));
  EXPECT_TRUE(fs::exists(r.cubin));
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_NE(r.kernels[0].name.find("gemm_simt_kernel"), std::string::npos);
  EXPECT_GT(r.kernels[0].registers, 0);
  EXPECT_GT(r.kernels[0].shared_bytes, 0);  // its two staging tiles
  EXPECT_EQ(r.inventory.missing_families, (std::vector<std::string>{"wgmma", "tma", "mbarrier"}));
  EXPECT_GT(r.inventory.opcodes.at("fma.rn"), 0);
  EXPECT_TRUE(r.violations.empty()) << r.violations.front().message;
  EXPECT_EQ(r.command.front(), options().nvcc.string());
}

TEST_F(CompileStage, SecondCompileComesFromTheCache) {
  const fs::path file = kRoot / "solutions" / "examples" / "gemm_simt.cu";
  const auto first = compile(file);
  // The hit renews the entry's last use, which decides the order in which the cache is pruned.
  const fs::path record = cache_ / first.cache_key / "compile.json";
  fs::last_write_time(record, fs::file_time_type::clock::now() - std::chrono::hours(48));
  const auto second = compile(file);
  EXPECT_LT(fs::file_time_type::clock::now() - fs::last_write_time(record), std::chrono::minutes(5));
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second.cached);
  // A hit's time is its own (the lookup), and the compile's that made the entry is kept beside it.
  const CompileOptions timed = own_cache("timed");
  const auto made = compile(file, timed);
  const auto hit = compile(file, timed);
  ASSERT_FALSE(made.cached);
  ASSERT_TRUE(hit.cached);
  EXPECT_EQ(hit.compiled_s, made.wall_s);
  EXPECT_LT(hit.wall_s, made.wall_s);
  EXPECT_EQ(to_json(hit)["compiled_s"], made.wall_s);
  EXPECT_FALSE(to_json(made).contains("compiled_s"));
  EXPECT_EQ(first.cache_key, second.cache_key);
  EXPECT_EQ(second.kernels.size(), first.kernels.size());
  EXPECT_EQ(second.inventory.opcodes, first.inventory.opcodes);
  // Another source is another key.
  const auto other = compile_solution(cuda_track(), read_file(file) + "\n// changed\n", *task_, options());
  EXPECT_NE(other.cache_key, first.cache_key);
  EXPECT_FALSE(other.cached);
}

// Two evaluations that share a cache (two processes, or threads) and compile the same source at once: one
// compiles, the other waits for it and takes its entry (the compile takes the key's lock file). Without the
// lock both would miss and compile. The lock file goes with the compile; one a killed process left goes when
// pruning finds it a day old.
TEST_F(CompileStage, TwinsOfOneSourceCompileItOnce) {
  CompileOptions o = own_cache("twins");
  // A compile that takes a second longer, so that the two overlap whatever the scheduling.
  o.nvcc = write_fake_nvcc(cache_ / "nvcc-slow", "sleep 1; exec \"$REAL_NVCC\" \"$@\"");
  auto twin = [&] { return compile_solution(cuda_track(), kTinyKernel, *task_, o); };
  auto first = std::async(std::launch::async, twin), second = std::async(std::launch::async, twin);
  const CompileResult a = first.get(), b = second.get();
  ASSERT_TRUE(a.ok()) << a.diagnostics;
  ASSERT_TRUE(b.ok()) << b.diagnostics;
  EXPECT_EQ(a.cache_key, b.cache_key);
  EXPECT_NE(a.cached, b.cached) << "one compiled, the other took its entry";
  EXPECT_EQ(entries(o), 1);
  const fs::path lock = o.cache_dir / (std::string(kCompileLockPrefix) + a.cache_key);
  EXPECT_FALSE(fs::exists(lock));
  write_file(lock, "");  // as a compile killed while it held the lock leaves it
  prune_compile_cache(o.cache_dir, std::uintmax_t{1} << 40);
  EXPECT_TRUE(fs::exists(lock)) << "a recent lock may be held";
  fs::last_write_time(lock, fs::file_time_type::clock::now() - std::chrono::hours(25));
  prune_compile_cache(o.cache_dir, std::uintmax_t{1} << 40);
  EXPECT_FALSE(fs::exists(lock));
  EXPECT_EQ(entries(o), 1);
}

TEST_F(CompileStage, ADamagedCacheEntryIsReplacedNotTrusted) {
  const fs::path file = kRoot / "solutions" / "examples" / "gemm_simt.cu";
  const auto first = compile(file);
  ASSERT_TRUE(first.ok());
  fs::remove(first.library);  // as a deletion cut short would leave it
  const auto again = compile(file);
  ASSERT_TRUE(again.ok()) << again.diagnostics;
  EXPECT_FALSE(again.cached);
  EXPECT_TRUE(fs::exists(again.library));
  std::ofstream(cache_ / first.cache_key / "compile.json") << "{ not json";
  const auto third = compile(file);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third.cached);
  EXPECT_TRUE(compile(file).cached) << "the replacement serves";
}

TEST_F(CompileStage, CompileErrorsAreTrimmedAndPointAtTheSource) {
  const auto r = compile(kRoot / "solutions" / "examples" / "gemm_does_not_compile.cu");
  ASSERT_EQ(r.status, CompileResult::Status::compile_error);
  EXPECT_EQ(r.error_count, 2);
  EXPECT_NE(r.diagnostics.find("solution.cu(11): error"), std::string::npos) << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("load_accumulator"), std::string::npos) << r.diagnostics;
  EXPECT_EQ(r.diagnostics.find(cache_.string()), std::string::npos) << "no harness paths: " << r.diagnostics;
  EXPECT_EQ(r.diagnostics.find("detected in the compilation"), std::string::npos);
  EXPECT_TRUE(r.library.empty());
  EXPECT_TRUE(compile(kRoot / "solutions" / "examples" / "gemm_does_not_compile.cu").cached)
      << "a compile error is a property of the source and is cached";
}

TEST_F(CompileStage, InstructionNamesInCommentsAndStringsDoNotCount) {
  const auto r = compile(kData / "solutions" / "families_in_comments_and_strings.cu");
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  EXPECT_EQ(r.inventory.missing_families, (std::vector<std::string>{"wgmma", "tma", "mbarrier"}));
}

TEST_F(CompileStage, InstructionsInDeadCodeAreStaticallyPresent) {
  const auto r = compile(kData / "solutions" / "families_in_dead_code.cu");
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  EXPECT_TRUE(r.inventory.missing_families.empty());
  EXPECT_GE(r.inventory.required_counts.at("wgmma"), 1);
  EXPECT_GE(r.inventory.required_counts.at("tma"), 1);
  EXPECT_GE(r.inventory.required_counts.at("mbarrier"), 1);
}

TEST_F(CompileStage, ImportScanSeesWhatMacrosHide) {
  const auto r = compile(kData / "solutions" / "dlopen_by_token_pasting.cu");
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].rule, "dynamic-loading");
  EXPECT_EQ(r.violations[0].evidence, "dlopen");
  EXPECT_EQ(r.violations[0].line, 0);
}

// Host code that calls the driver directly, as that of many Hopper kernels does: the library links libcuda,
// so the call resolves in every stage, and the scan lets the harmless functions through.
TEST_F(CompileStage, DirectDriverCallsLinkAndOnlyHarmlessOnesPass) {
  const std::string encodes = R"(#include <ptxbench/abi.h>
#include <cuda.h>
extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16*, __nv_bfloat16*, int M, int,
                                  int K, cudaStream_t) {
  CUtensorMap map;
  cuuint64_t dims[2] = {cuuint64_t(K), cuuint64_t(M)}, strides[1] = {cuuint64_t(K) * 2};
  cuuint32_t box[2] = {64, 64}, elements[2] = {1, 1};
  return cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<__nv_bfloat16*>(A),
                                dims, strides, box, elements, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS;
}
)";
  const auto r = compile_solution(cuda_track(), encodes, *task_, options());
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  EXPECT_NE(std::find(r.command.begin(), r.command.end(), "-lcuda"), r.command.end());
  const ProcessResult dynamic = run_process({.argv = {"readelf", "-d", r.library.string()}});
  ASSERT_TRUE(dynamic.ok()) << dynamic.describe();
  EXPECT_NE(dynamic.out.find("Shared library: [libcuda.so.1]"), std::string::npos) << dynamic.out;
  const ProcessResult imports = run_process({.argv = {"nm", "-D", "--undefined-only", r.library.string()}});
  EXPECT_NE(imports.out.find("cuTensorMapEncodeTiled"), std::string::npos) << imports.out;
  for (const auto& v : r.violations) ADD_FAILURE() << v.message;

  const std::string sets_limit = R"(#include <ptxbench/abi.h>
#include <cuda.h>
extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
                                  cudaStream_t) {
  return cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1 << 16) != CUDA_SUCCESS;
}
)";
  const auto limit = compile_solution(cuda_track(), sets_limit, *task_, options());
  ASSERT_TRUE(limit.ok()) << limit.diagnostics;
  ASSERT_EQ(limit.violations.size(), 1u);
  EXPECT_EQ(limit.violations[0].rule, "driver-api");
  EXPECT_EQ(limit.violations[0].evidence, "cuCtxSetLimit");
  EXPECT_EQ(limit.violations[0].line, 0);
}

// nvcc compiles a library without the task's entry point; the static scan finds it missing, and names the
// exported function that was meant (a kernel engineer's own name for it, or C++ linkage).
TEST_F(CompileStage, AMisspeltEntryPointFailsTheStaticScan) {
  const std::string misspelt = R"(#include <ptxbench/abi.h>
extern "C" int ptxbench_gemm(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
                             cudaStream_t) {
  return 0;
}
)";
  const auto r = compile_solution(cuda_track(), misspelt, *task_, options());
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].rule, "entry-point");
  EXPECT_NE(r.violations[0].message.find("It exports ptxbench_gemm: a misspelling?"), std::string::npos)
      << r.violations[0].message;

  // Without the ABI header, whose declaration would give the definition C linkage.
  const std::string cxx = R"(#include <cuda_bf16.h>
#include <cuda_runtime.h>
int ptxbench_gemm_bf16(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
                       cudaStream_t) {
  return 0;
}
)";
  const auto linkage = compile_solution(cuda_track(), cxx, *task_, options());
  ASSERT_TRUE(linkage.ok()) << linkage.diagnostics;
  ASSERT_EQ(linkage.violations.size(), 1u);
  EXPECT_NE(linkage.violations[0].message.find("C++ linkage"), std::string::npos)
      << linkage.violations[0].message;
}

// The command the README documents is the one the compile stage runs (but for nvcc's path and the include
// folders).
TEST_F(CompileStage, TheDocumentedCommandIsTheOneRun) {
  const auto r = compile(kRoot / "solutions" / "examples" / "gemm_simt.cu");
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  std::string run = "nvcc";
  for (size_t i = 1; i < r.command.size(); ++i)
    if (!r.command[i].starts_with("-I")) run += " " + r.command[i];
  EXPECT_NE(read_file(kRoot / "README.md").find("`" + run + "`"), std::string::npos) << run;
}

TEST_F(CompileStage, TimeLimitIsEnforcedAndNotCached) {
  CompileOptions o = options();
  o.time_limit_s = 0.05;
  o.use_cache = false;
  const auto r = compile(kRoot / "solutions" / "examples" / "gemm_simt.cu", o);
  EXPECT_EQ(r.status, CompileResult::Status::timeout);
  EXPECT_NE(r.diagnostics.find("did not finish"), std::string::npos);
  o.time_limit_s = 120;
  EXPECT_FALSE(compile(kRoot / "solutions" / "examples" / "gemm_simt.cu", o).cached);
}

TEST_F(CompileStage, MissingNvccIsAToolchainError) {
  CompileOptions o = options();
  o.nvcc = "/nonexistent/nvcc";
  const auto r = compile(kRoot / "solutions" / "examples" / "gemm_simt.cu", o);
  EXPECT_EQ(r.status, CompileResult::Status::toolchain_error);
  EXPECT_NE(r.diagnostics.find("nvcc not found"), std::string::npos);
}

TEST_F(CompileStage, KitHeadersCompileAndErrorsInThemNameTheProjectPath) {
  CompileOptions o = options();
  o.display_root = kRoot;
  const std::string uses_kit =
      "#include <ptxbench/abi.h>\n#include <hopper.cuh>\n"
      "__global__ void k() { float d[4] = {}; ptxkit::hopper::wgmma_bf16_ss<8>(d, 0, 0, 0); }\n";
  const auto r = compile_solution(cuda_track(), uses_kit, *task_, o);
  ASSERT_EQ(r.status, CompileResult::Status::compile_error);  // the kit offers N = 16, 32, ..., 256
  EXPECT_NE(r.diagnostics.find("kits/hopper/ptx/wgmma.cuh("), std::string::npos) << r.diagnostics;
  EXPECT_EQ(r.diagnostics.find(kRoot.string()), std::string::npos) << r.diagnostics;
  const auto ok = compile(kData / "solutions" / "token_wgmma.cu");
  ASSERT_TRUE(ok.ok()) << ok.diagnostics;
  EXPECT_TRUE(ok.inventory.missing_families.empty());
}

// nvcc echoes a source's bytes: a string literal that is not UTF-8 in an error's excerpt, an #error's text.
TEST_F(CompileStage, OutputThatIsNotUtf8BecomesValidText) {
  const std::vector<std::pair<std::string, std::string>> sources = {
      {"const char* s = \"\xFF\xFE\";\n", "\"\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"#error caf\xE9\n", "#error caf\xEF\xBF\xBD"}};
  for (const auto& [source, shown] : sources) {
    const auto r = compile_solution(cuda_track(), source, *task_, own_cache("not-utf8"));
    ASSERT_EQ(r.status, CompileResult::Status::compile_error) << r.diagnostics;
    EXPECT_NE(r.diagnostics.find(shown), std::string::npos) << r.diagnostics;
    EXPECT_EQ(valid_utf8(r.diagnostics), r.diagnostics);
    EXPECT_NO_THROW((void)to_json(r).dump());
    EXPECT_TRUE(compile_solution(cuda_track(), source, *task_, own_cache("not-utf8")).cached)
        << "its record was written";
  }
}

// The host decides what is the host's failure: a file system short of space after the compile, or nvcc
// killed. Neither is the source's fault, so nothing is cached and the next compile runs nvcc again.
TEST_F(CompileStage, HostFailuresAreToldFromTheHostsStateAndNeverCached) {
  for (const std::string& name : {std::string("disk-full"), std::string("nvcc-killed")}) {
    CompileOptions o = own_cache(name);
    if (name == "disk-full") {
      o.nvcc = write_fake_nvcc(cache_ / ("nvcc-" + name), "echo '" + kDiskFull + "' >&2; exit 1");
      o.min_free_bytes = ~uint64_t{0};  // no file system has that much free: as full as a disk gets
    } else {
      o.nvcc = write_fake_nvcc(cache_ / ("nvcc-" + name), "kill -KILL $$");
    }
    const auto r = compile_solution(cuda_track(), kTinyKernel, *task_, o);
    EXPECT_EQ(r.status, CompileResult::Status::toolchain_error) << name << ": " << r.diagnostics;
    EXPECT_NE(r.diagnostics.find("failed on this host"), std::string::npos) << name << ": " << r.diagnostics;
    if (name == "disk-full") {
      EXPECT_NE(r.diagnostics.find("the host: the compile folder's file system has"), std::string::npos)
          << r.diagnostics;
    }
    EXPECT_EQ(entries(o), 0) << name;
    EXPECT_TRUE(fs::is_empty(o.cache_dir)) << name << ": its work folder was left";
  }
}

// What nvcc printed decides nothing: words of a full disk, a quota, a read-only folder or a killed tool,
// with the host in good health, are the source's compile error (a source can print any of them).
TEST_F(CompileStage, HostWordsInTheOutputDecideNothing) {
  for (const std::string& words : {kDiskFull, std::string("ptxbench/tmp/solution.ptx: Disk quota exceeded"),
                                   std::string("nvcc fatal   : Could not open output file solution.so"),
                                   std::string("nvcc error   : 'cicc' died due to signal 9 (Kill signal)")}) {
    CompileOptions o = own_cache("words");
    o.nvcc = write_fake_nvcc(cache_ / "nvcc-words", "echo \"" + words + "\" >&2; exit 1");
    const auto r = compile_solution(cuda_track(), kTinyKernel, *task_, o);
    EXPECT_EQ(r.status, CompileResult::Status::compile_error) << words << "\n" << r.diagnostics;
  }
}

TEST(HostFailure, IsTheDisksOrTheOutOfMemoryKillersNeverTheOutputs) {
  const HostReading healthy{.free_bytes = uint64_t{50} << 30, .oom_kills = 3};
  EXPECT_EQ(host_failure(healthy, healthy, uint64_t{256} << 20), "");
  HostReading full = healthy;
  full.free_bytes = 1'200'000;
  EXPECT_EQ(host_failure(healthy, full, uint64_t{256} << 20),
            "the host: the compile folder's file system has 1.2 MB free (at least 268 MB wanted)");
  HostReading killed = healthy;
  killed.oom_kills = 4;
  EXPECT_EQ(host_failure(healthy, killed, uint64_t{256} << 20),
            "the host: the kernel's out-of-memory killer ended 1 process(es) during the compile");
  EXPECT_GT(read_host(fs::temp_directory_path()).free_bytes, 0u);
}

TEST_F(CompileStage, AfterADiskFullTheSameSourceCompiles) {
  CompileOptions o = own_cache("disk-freed");
  const fs::path full = cache_ / "disk-is-full";
  write_file(full, "");
  o.nvcc = write_fake_nvcc(cache_ / "nvcc-until-freed", "if [ -e '" + full.string() + "' ]; then echo '" +
                                                            kDiskFull +
                                                            "' >&2; exit 1; fi\nexec \"$REAL_NVCC\" \"$@\"");
  CompileOptions while_full = o;
  while_full.min_free_bytes = ~uint64_t{0};  // the disk full, as the host sees it
  EXPECT_EQ(compile_solution(cuda_track(), kTinyKernel, *task_, while_full).status,
            CompileResult::Status::toolchain_error);
  fs::remove(full);
  const auto freed = compile_solution(cuda_track(), kTinyKernel, *task_, o);
  EXPECT_TRUE(freed.ok()) << freed.diagnostics;
  EXPECT_FALSE(freed.cached);
  EXPECT_TRUE(compile_solution(cuda_track(), kTinyKernel, *task_, o).cached);
}

TEST_F(CompileStage, ASourceCannotPassItsErrorOffAsTheHosts) {
  for (const std::string source :
       {"#error No space left on device\n", "#line 1 \"other.cu\"\n#error No space left on device\n",
        "static_assert(false, \"Permission denied\");\n",
        "__device__ void f() asm(\"No space left on device\");\n"
        "__global__ void k() { f(); }\n"}) {
    const auto r = compile_solution(cuda_track(), source, *task_, own_cache("blames-host"));
    EXPECT_EQ(r.status, CompileResult::Status::compile_error) << source << r.diagnostics;
  }
}

TEST_F(CompileStage, ACacheThatCannotBeWrittenIsAToolchainError) {
  CompileOptions o = options();
  write_file(cache_ / "a-file", "");
  o.cache_dir = cache_ / "a-file" / "cache";  // a folder that cannot be made, even by root
  CompileResult r;
  EXPECT_NO_THROW(r = compile_solution(cuda_track(), kTinyKernel, *task_, o));
  EXPECT_EQ(r.status, CompileResult::Status::toolchain_error);
  EXPECT_NE(r.diagnostics.find("failed on this host"), std::string::npos) << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("a-file"), std::string::npos) << r.diagnostics;
}

TEST(Diagnostics, HostFailuresAreToldFromTheSourcesErrors) {
  EXPECT_EQ(host_failure_line("nvcc warning : something\n" + kDiskFull + "\n", "solution.cu"), kDiskFull);
  EXPECT_NE(host_failure_line("nvcc error   : 'cicc' died due to signal 9 (Kill signal)", "solution.cu"), "");
  EXPECT_NE(host_failure_line("/usr/bin/ld: final link failed: Input/output error", "solution.cu"), "");
  EXPECT_EQ(host_failure_line("ptxas fatal   : Unresolved extern function 'f'", "solution.cu"), "");
  // The source has an error of its own: its fault, whatever else the output says.
  EXPECT_EQ(
      host_failure_line("solution.cu(3): error: identifier \"x\" is undefined\n" + kDiskFull, "solution.cu"),
      "");
  EXPECT_EQ(host_failure_line("solution.cu:1:2: error: #error No space left on device", "solution.cu"), "");
  EXPECT_EQ(host_failure_line("ptxas /tmp/tmpxft_0001_00000000-6_solution.ptx, line 9; error   : "
                              "No space left on device",
                              "solution.cu"),
            "");
  EXPECT_EQ(host_failure_line("kits/hopper/ptx/x.cuh(4): error: Permission denied\n"
                              "1 error detected in the compilation of \"solution.cu\".",
                              "solution.cu"),
            "");
  // What a compiler quotes is a name or the source's text, never the host speaking.
  EXPECT_EQ(host_failure_line("ptxas fatal   : Unresolved extern function 'No space left on device'",
                              "solution.cu"),
            "");
}

TEST(Diagnostics, KeepsTheFirstErrorsAndCountsTheRest) {
  std::string output;
  for (int i = 1; i <= 12; ++i)
    output += "solution.cu(" + std::to_string(i) + "): error: bad thing\n  code\n  ^\n\n";
  output += "12 errors detected in the compilation of \"solution.cu\".\n";
  const auto trimmed = trim_diagnostics(output, "", 3);
  EXPECT_EQ(trimmed.errors, 12);
  EXPECT_NE(trimmed.text.find("solution.cu(3): error"), std::string::npos);
  EXPECT_EQ(trimmed.text.find("solution.cu(4): error"), std::string::npos);
  EXPECT_NE(trimmed.text.find("9 more errors"), std::string::npos);
}

// A submission's includes reach only the toolkit, the system's headers, the ABI header and the kit: a file
// elsewhere on the host (a key, /etc, a device that never ends) is not there, a plain compile error that
// quotes none of it. Unsandboxed, the first of these compiled the key into the verdict's diagnostics.
TEST_F(CompileStage, IncludesOutsideTheAllowedFoldersAreNotThere) {
  ASSERT_TRUE(testing_compile::compile_sandbox().available) << testing_compile::compile_sandbox().reason;
  const fs::path secret_dir = fs::temp_directory_path() / ("ptxbench-secret-" + std::to_string(getpid()));
  fs::create_directories(secret_dir);
  write_file(secret_dir / "key.txt", "sk-host-secret-1234\n");
  for (const std::string& target : {(secret_dir / "key.txt").string(), std::string("/etc/hostname"),
                                    std::string("/dev/zero"), (kRoot / "README.md").string()}) {
    const CompileResult r = compile_solution(
        cuda_track(), "#include <ptxbench/abi.h>\n#include \"" + target + "\"\n" + kTinyKernel, *task_,
        own_cache("outside"));
    EXPECT_EQ(r.status, CompileResult::Status::compile_error) << target << "\n" << r.diagnostics;
    EXPECT_NE(r.diagnostics.find("No such file or directory"), std::string::npos) << target << "\n"
                                                                                  << r.diagnostics;
    EXPECT_EQ(r.diagnostics.find("sk-host-secret"), std::string::npos) << r.diagnostics;
    EXPECT_LT(r.wall_s, 60) << target;
  }
  fs::remove_all(secret_dir);
}

// A toolkit reached through a link the sandbox does not show (here one under the host's /tmp, which the
// sandbox hides behind its own) still compiles: nvcc runs by its real path, its real folder bound.
TEST_F(CompileStage, AToolkitBehindALinkCompilesInTheSandbox) {
  const fs::path link = cache_ / "toolkit-link";
  fs::create_directories(cache_);
  fs::create_directory_symlink(fs::canonical(real_nvcc()).parent_path().parent_path(), link);
  CompileOptions o = own_cache("linked");
  o.nvcc = link / "bin" / "nvcc";
  const CompileResult r =
      compile_solution(cuda_track(), "#include <ptxbench/abi.h>\n" + kTinyKernel, *task_, o);
  EXPECT_TRUE(r.ok()) << r.diagnostics;
  fs::remove(link);
}

// Without a sandbox that works, nvcc is not run on a submission: the host's failure, never cached.
TEST_F(CompileStage, WithoutTheSandboxNothingIsCompiled) {
  CompileOptions o = own_cache("unsandboxed");
  o.sandbox = SandboxStatus{};  // requested, not available
  const CompileResult r =
      compile_solution(cuda_track(), "#include <ptxbench/abi.h>\n" + kTinyKernel, *task_, o);
  EXPECT_EQ(r.status, CompileResult::Status::toolchain_error);
  EXPECT_NE(r.diagnostics.find("the sandbox is not available, so nvcc is not run"), std::string::npos)
      << r.diagnostics;
  EXPECT_EQ(entries(o), 0);
}

// The sandbox's limits reach every compiler nvcc starts: an address-space limit too small for cicc stops it.
TEST_F(CompileStage, TheMemoryLimitBindsTheCompilers) {
  CompileOptions o = own_cache("memory");
  o.memory_bytes = uint64_t{64} << 20;
  const CompileResult r =
      compile_solution(cuda_track(), "#include <ptxbench/abi.h>\n" + kTinyKernel, *task_, o);
  EXPECT_NE(r.status, CompileResult::Status::ok) << r.diagnostics;
}
