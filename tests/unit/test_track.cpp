// Tracks (track/track.h): the registry, the Triton track's compile stage (parsing, the entry points) and its
// static scan, run on small adversarial snippets through python3 as the judge runs it, and what an evaluation
// in the Triton track says about the GPU stages it cannot run yet.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "fake_nvcc.h"
#include "project_tasks.h"
#include "track/track.h"
#include "util/files.h"

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

const fs::path kData = PTXBENCH_TEST_DATA;

const Task& task(const std::string& id) {
  return test_support::project_task(id);
}

const Task& gemm() {
  return task("gemm-bf16-n4096-k4096-sm90a");
}

std::string fixture() {
  return read_file(kData / "triton" / "gemm_scan_fixture.py");
}

CompileOptions options() {
  // python3 from PATH, as the judge's default, in the compile's sandbox as the front ends run it; the source
  // the worker would run is kept in this cache.
  return {.cache_dir = fs::temp_directory_path() / ("ptxbench-track-cache-" + std::to_string(getpid())),
          .time_limit_s = 60,
          .sandbox = testing_compile::compile_sandbox()};
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("ptxbench-track-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The scan of a snippet that parsed (the scan needs only that).
std::vector<Violation> scan(const std::string& source) {
  CompileResult parsed;
  parsed.status = CompileResult::Status::ok;
  return triton_track().scan(source, parsed, gemm(), options());
}

std::string describe(const std::vector<Violation>& found) {
  std::string out;
  for (const auto& v : found) out += "\n  [" + v.rule + "] " + v.message;
  return out.empty() ? " none" : out;
}

}  // namespace

TEST(Tracks, AreFoundByNameAndByTheirFilesExtension) {
  EXPECT_EQ(find_track("cuda"), &cuda_track());
  EXPECT_EQ(find_track("triton"), &triton_track());
  EXPECT_EQ(find_track("python"), nullptr);
  EXPECT_EQ(track_names(), "cuda, triton");
  EXPECT_EQ(cuda_track().extension(), ".cu");
  EXPECT_EQ(triton_track().extension(), ".py");
  EXPECT_EQ(track_of_file("sample1-turn2.py"), &triton_track());
  EXPECT_EQ(track_of_file("/a/b/gemm.cu"), &cuda_track());
  EXPECT_EQ(track_of_file("gemm.txt"), nullptr);
  EXPECT_EQ(track_of_file("gemm"), nullptr);
}

TEST(Tracks, TasksSayWhichTheyAccept) {
  EXPECT_TRUE(accepts(gemm(), triton_track()));
  EXPECT_TRUE(accepts(gemm(), cuda_track()));
  const Task& blackwell = task("gemm-bf16-n4096-k4096-sm100a");
  EXPECT_FALSE(accepts(blackwell, triton_track()));
  EXPECT_EQ(not_accepted(blackwell, triton_track()),
            "task gemm-bf16-n4096-k4096-sm100a does not accept the triton track (it accepts: cuda)");
}

// Every family's Python entry points come from its descriptor: the prompt shows them, the parse checks them.
TEST(Tracks, EveryFamilyHasTritonEntryPoints) {
  for (const Family& family : all_families()) {
    const std::string text = triton_track().entry_point(family);
    EXPECT_TRUE(contains(text, "def " + family.entry_point + "(")) << family.name << ":\n" << text;
    EXPECT_TRUE(contains(text, "stream: torch.cuda.Stream) -> int")) << family.name;
  }
  const std::string backward = triton_track().entry_point(*find_family("attention-backward"));
  EXPECT_TRUE(contains(backward, "def ptxbench_attention_backward_workspace_bytes(B: int, Hq: int, Hkv: int, "))
      << backward;
  EXPECT_TRUE(contains(backward, "causal: int) -> int\ndef ptxbench_attention_backward_bf16(")) << backward;
  EXPECT_TRUE(contains(backward, "dV: torch.Tensor, workspace: torch.Tensor | None,")) << backward;
}

// A baseline the runner hosts in Python (a family's BaselineSpec with a module) defines the family's entry points
// with the descriptor's arguments, in order, as a Triton solution must: the runner calls it the same way.
TEST(Tracks, EveryBaselineModuleDefinesItsFamilysEntryPoints) {
  int modules = 0;
  for (const Family& family : all_families()) {
    for (const BaselineSpec& baseline : family.baselines) {
      if (baseline.module.empty()) continue;
      ++modules;
      const std::string text = read_file(fs::path(PTXBENCH_SOURCE_DIR) / baseline.module);
      const auto parameters = [&](const std::string& name) -> std::string {
        const size_t at = text.find("\ndef " + name + "(");
        if (at == std::string::npos) return "(none)";
        const size_t open = text.find('(', at), close = text.find(')', open);
        std::string names;
        for (char c : text.substr(open + 1, close - open - 1))
          if (c != ' ' && c != '\n') names += c;
        return names;
      };
      const auto joined = [](std::vector<std::string> names) {
        std::string out;
        for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
        return out;
      };
      std::vector<std::string> arguments = family.arguments;
      arguments.push_back("stream");
      EXPECT_EQ(parameters(family.entry_point), joined(arguments)) << family.name << ": " << baseline.module;
      if (family.workspace) {
        EXPECT_EQ(parameters(family.workspace->symbol), joined(family.workspace->arguments))
            << family.name << ": " << baseline.module;
      }
    }
  }
  EXPECT_GE(modules, 3);  // the forward's, the backward's and the ragged prefill's
}

// A family's symbols (the static stage's entry-point check) are the ones the ABI header declares, and the C
// declarations derived from the descriptor are the ones a model is shown. (That their types agree with the
// header's is a static_assert in the runner's build: family/codegen.cpp.)
TEST(Tracks, EveryFamilySymbolIsTheOneEveryLayerNames) {
  const std::string abi = read_file(fs::path(PTXBENCH_SOURCE_DIR) / "include" / "ptxbench" / "abi.h");
  for (const Family& family : all_families()) {
    const std::vector<std::string> symbols = family.symbols();
    EXPECT_EQ(symbols.front(), family.entry_point) << family.name;
    for (const std::string& symbol : symbols) {
      EXPECT_TRUE(contains(abi, " " + symbol + "(")) << family.name << ": " << symbol;
      EXPECT_TRUE(contains(c_declarations(family), " " + symbol + "(")) << family.name << ": " << symbol;
      EXPECT_TRUE(contains(cuda_track().entry_point(family), " " + symbol + "(")) << symbol;
      EXPECT_TRUE(contains(triton_track().entry_point(family), "def " + symbol + "(")) << symbol;
    }
  }
  EXPECT_EQ(c_declarations(*find_family("gemm")),
            "int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, "
            "int N, int K,\n                       cudaStream_t stream);");
}

// --- the compile stage: parsing and the entry points -----------------------------------------------------

TEST(TritonCompile, AWellFormedFileIsParsedAndKeptForTheWorker) {
  const CompileResult r = triton_track().compile(fixture(), gemm(), options());
  ASSERT_TRUE(r.ok()) << r.diagnostics;
  EXPECT_FALSE(r.compiles_kernels);
  EXPECT_EQ(r.runner_track, "triton");
  EXPECT_FALSE(r.python_version.empty());
  // Triton compiles on the GPU: what the worker runs is the source itself, kept by content.
  EXPECT_EQ(r.library.filename(), "solution.py");
  EXPECT_EQ(read_file(r.library), fixture());
  EXPECT_EQ(triton_track().compile(fixture(), gemm(), options()).library, r.library);
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_EQ(r.command.front(), "python3");
  EXPECT_TRUE(contains(r.command.back(), "ptxbench_gemm_bf16:7")) << "the entry point and its parameters";
  const nlohmann::json doc = to_json(r);
  EXPECT_TRUE(doc.contains("python_version"));
  EXPECT_FALSE(doc.contains("nvcc_version")) << "no nvcc ran";
  EXPECT_FALSE(doc.contains("ptx_inventory"));
}

// The scanner's answers are remembered for the process by everything that decides them: the same file for the
// same entry points is parsed once (a manifest run judges one file on many tasks), and says so; another file,
// or another family's entry points, is parsed anew, and so is any file with use_cache false.
TEST(TritonCompile, TheSameFileIsParsedOncePerProcessForTheSameEntryPoints) {
  const std::string source = fixture() + "# TheSameFileIsParsedOnce\n";
  const CompileResult first = triton_track().compile(source, gemm(), options());
  ASSERT_TRUE(first.ok()) << first.diagnostics;
  EXPECT_FALSE(first.cached);
  EXPECT_GT(first.wall_s, 0);
  const CompileResult again = triton_track().compile(source, gemm(), options());
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.compiled_s, first.wall_s);
  EXPECT_EQ(again.library, first.library);
  EXPECT_EQ(again.python_version, first.python_version);
  EXPECT_EQ(compile_solution(triton_track(), source, gemm(), options()).violations.size(), 0u);

  EXPECT_FALSE(triton_track().compile(source + "# another\n", gemm(), options()).cached);
  const Task& attention = task("attention-fwd-d64-sm90a");
  const CompileResult other_family = triton_track().compile(source, attention, options());
  EXPECT_FALSE(other_family.cached);
  EXPECT_EQ(other_family.status, CompileResult::Status::compile_error) << "a GEMM file has no attention entry";
  CompileOptions fresh = options();
  fresh.use_cache = false;
  EXPECT_FALSE(triton_track().compile(source, gemm(), fresh).cached);
}

// The parser is the host's, the source a hostile one's: code nested past what the scanner walks is the
// source's compile error, never the host's failure; and with no sandbox to run it in, the scanner is not
// run at all.
TEST(TritonCompile, CodeNestedTooDeeplyIsACompileErrorAndTheParserRunsSandboxed) {
  for (const int depth : {500, 3000, 50000}) {
    const std::string deep =
        "def ptxbench_gemm_bf16(A, B, C, M, N, K, stream):\n    x = " + std::string(depth, '-') + "y\n";
    const CompileResult r = triton_track().compile(deep, gemm(), options());
    EXPECT_EQ(r.status, CompileResult::Status::compile_error) << depth << ": " << r.diagnostics;
    EXPECT_TRUE(contains(r.diagnostics, "more than 200 levels deep")) << depth << ": " << r.diagnostics;
  }
  CompileOptions unconfined = options();
  unconfined.sandbox = SandboxStatus{};  // requested, not available
  const CompileResult refused = triton_track().compile(fixture(), gemm(), unconfined);
  EXPECT_EQ(refused.status, CompileResult::Status::toolchain_error) << refused.diagnostics;
  EXPECT_TRUE(contains(refused.diagnostics, "the sandbox is not available, so the Triton scanner is not run"))
      << refused.diagnostics;
}

TEST(TritonCompile, ASyntaxErrorIsACompileErrorAtItsLine) {
  const CompileResult r = triton_track().compile(
      "import torch\n\ndef ptxbench_gemm_bf16(A, B, C, M, N, K, stream):\n    return (0\n", gemm(),
      options());
  EXPECT_EQ(r.status, CompileResult::Status::compile_error);
  EXPECT_EQ(r.error_count, 1);
  EXPECT_TRUE(contains(r.diagnostics, "solution.py:4:")) << r.diagnostics;
  EXPECT_TRUE(contains(r.diagnostics, "    return (0\n")) << "the line, shown" << r.diagnostics;
}

TEST(TritonCompile, TheEntryPointsMustBeThereWithTheirParameters) {
  const auto diagnostics = [](const std::string& source, const Task& t) {
    const CompileResult r = triton_track().compile(source, t, options());
    EXPECT_EQ(r.status, CompileResult::Status::compile_error) << source;
    return r.diagnostics;
  };
  EXPECT_TRUE(
      contains(diagnostics("x = 1\n", gemm()), "defines no function ptxbench_gemm_bf16 at module level"));
  EXPECT_TRUE(contains(diagnostics("def ptxbench_gemm_bf16(A, B, C):\n    return 0\n", gemm()),
                       "takes 3 parameters; the entry point is called with 7"));
  EXPECT_TRUE(
      contains(diagnostics("import triton\n\n@triton.jit\ndef ptxbench_gemm_bf16(A, B, C, M, N, K, s):\n"
                           "    pass\n",
                           gemm()),
               "not a @triton.jit kernel"));
  // The backward needs its workspace size function too.
  const std::string backward_only =
      "def ptxbench_attention_backward_bf16(Q, K, V, O, LSE, dO, dQ, dK, dV, workspace, B, Hq, Hkv, Sq, Sk, "
      "D,\n"
      "                                     scale, causal, stream):\n    return 0\n";
  EXPECT_TRUE(contains(diagnostics(backward_only, task("attention-bwd-d64-causal-sm90a")),
                       "defines no function ptxbench_attention_backward_workspace_bytes"));
  EXPECT_TRUE(contains(diagnostics("\xff\xfe = 1\n", gemm()), "not UTF-8"));
  const CompileResult star =
      triton_track().compile("def ptxbench_gemm_bf16(A, B, C, *rest):\n    return 0\n", gemm(), options());
  EXPECT_TRUE(star.ok()) << "*args takes the rest: " << star.diagnostics;
}

TEST(TritonCompile, APythonThatCannotRunIsTheHostsFailure) {
  CompileOptions o = options();
  o.python = "/nonexistent/python3";
  const CompileResult r = triton_track().compile(fixture(), gemm(), o);
  EXPECT_EQ(r.status, CompileResult::Status::toolchain_error);
  EXPECT_TRUE(contains(r.diagnostics, "failed on this host, not on the source")) << r.diagnostics;
}

// The parse passed but the scan cannot run: the solution was not checked, so it does not pass, and the
// verdict blames the host.
TEST(TritonCompile, AScanThatCannotRunIsAToolchainErrorNotAPass) {
  const fs::path dir = temp_dir("scan-fails");
  const fs::path python = dir / "python3";
  write_file(python,
             "#!/bin/sh\n"
             "case \"$*\" in *sys.executable*) echo \"$0\"; dirname \"$0\"; exit 0 ;; esac\n"  // where it is
             "cat >/dev/null\n"  // the source first: a writer left with a closed pipe gets SIGPIPE
             "for a in \"$@\"; do [ \"$a\" = scan ] && { echo broken >&2; exit 1; }; done\n"
             "echo '{\"python\": \"0.0.0\", \"errors\": []}'\n");
  fs::permissions(python, fs::perms::owner_all);
  CompileOptions o = options();
  o.python = python.string();
  const CompileResult r = compile_solution(triton_track(), fixture(), gemm(), o);
  EXPECT_EQ(r.status, CompileResult::Status::toolchain_error);
  EXPECT_TRUE(contains(r.diagnostics, "forbidden-means scan failed on this host")) << r.diagnostics;
  EXPECT_TRUE(contains(r.diagnostics, "broken")) << r.diagnostics;
  fs::remove_all(dir);
}

// --- the static scan --------------------------------------------------------------------------------------

TEST(TritonScan, AWellFormedSolutionHasNoViolation) {
  const auto found = scan(fixture());
  EXPECT_TRUE(found.empty()) << describe(found);
}

// Inside a @triton.jit kernel the code is Triton's language, compiled by Triton: tensor methods and @ are its
// own. The rules that are not about host tensors still hold there.
TEST(TritonScan, KernelBodiesAreTritonsLanguage) {
  const std::string kernel =
      "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, y_ptr):\n"
      "    x = tl.load(x_ptr)\n    tl.store(y_ptr, (x @ x).to(tl.float32).sum(0))\n";
  const auto found = scan(kernel);
  EXPECT_TRUE(found.empty()) << describe(found);
  const auto with_torch = scan(kernel + "    torch.matmul(x, x)\n");
  ASSERT_EQ(with_torch.size(), 1u) << describe(with_torch);
  EXPECT_EQ(with_torch[0].rule, "torch");
  EXPECT_EQ(with_torch[0].line, 9);
}

// A view reinterprets a tensor's memory (the backward's byte workspace as floats) without computing: allowed.
// reshape may copy, so it is not.
TEST(TritonScan, AViewOfATensorIsMetadataAndReshapeIsNot) {
  const auto view = scan(
      "import torch\n\ndef f(workspace, B, Hq, Sq):\n    delta = workspace.view(torch.float32)\n"
      "    return delta.view(B, Hq, Sq).stride(0)\n");
  EXPECT_TRUE(view.empty()) << describe(view);
  const auto reshape = scan("def f(A):\n    return A.reshape(-1).data_ptr()\n");
  ASSERT_EQ(reshape.size(), 1u) << describe(reshape);
  EXPECT_EQ(reshape[0].rule, "torch");
}

TEST(TritonScan, TorchTypesAreForAnnotationsOnly) {
  const auto annotations = scan("from torch import Tensor\n\ndef f(A: Tensor) -> Tensor:\n    return A\n");
  EXPECT_TRUE(annotations.empty()) << describe(annotations);
  const auto made = scan("from torch import Tensor\n\ndef f():\n    return Tensor(3)\n");
  ASSERT_EQ(made.size(), 1u) << describe(made);
  EXPECT_EQ(made[0].evidence, "Tensor (torch.Tensor)");
  EXPECT_EQ(made[0].line, 4);
}

namespace {

struct ScanCase {
  const char* name;
  const char* source;
  const char* rule;      // the rule that must be found ...
  int line;              // ... at this line
  const char* evidence;  // ... with this evidence ("": any)
  const char* message;   // ... and a message with this ("": any)
};

class TritonScanRule : public testing::TestWithParam<ScanCase> {};

}  // namespace

TEST_P(TritonScanRule, FindsTheTrickAtItsLine) {
  const ScanCase& c = GetParam();
  const auto found = scan(c.source);
  const bool hit = std::any_of(found.begin(), found.end(), [&](const Violation& v) {
    return v.rule == c.rule && v.line == c.line && contains(v.evidence, c.evidence) &&
           contains(v.message, c.message) && v.message.starts_with("line " + std::to_string(c.line) + ": ");
  });
  EXPECT_TRUE(hit) << "expected [" << c.rule << "] at line " << c.line << " (" << c.evidence
                   << "), found:" << describe(found);
}

INSTANTIATE_TEST_SUITE_P(
    EveryRule, TritonScanRule,
    testing::Values(
        // import: anything but triton, triton.language, math and torch.
        ScanCase{"numpy", "import numpy as np\n", "import", 1, "import numpy", "only triton"},
        ScanCase{"relative_import", "from . import helper\n", "import", 1, "", "a relative module"},
        // torch: computation, allocation, streams, whatever name it goes by.
        ScanCase{"torch_alias", "import torch as t\n\ndef f(A, B):\n    return t.matmul(A, B)\n", "torch", 4,
                 "t.matmul (torch.matmul)", "own Triton kernels"},
        ScanCase{"torch_function_imported_under_a_name", "from torch import matmul as mm\n", "torch", 1,
                 "from torch import matmul", ""},
        ScanCase{"module_alias_by_assignment", "import torch\nops = torch.nn.functional\n", "torch", 2,
                 "torch.nn.functional", ""},
        ScanCase{"sdpa",
                 "import torch\n\ndef f(Q, K, V, O):\n"
                 "    O.copy_(torch.nn.functional.scaled_dot_product_attention(Q, K, V))\n",
                 "torch", 4, "scaled_dot_product_attention", ""},
        ScanCase{"sdpa_module_import", "import torch.nn.functional as F\n", "torch", 1, "", ""},
        ScanCase{"tensor_method", "def f(A, B, C):\n    C.copy_(A.float().sum(0))\n", "torch", 2, "C.copy_",
                 "metadata"},
        ScanCase{"method_taken_as_a_value", "def f(A, B):\n    mm = A.matmul\n    return mm(B)\n", "torch", 2,
                 "A.matmul", ""},
        ScanCase{"matmul_operator", "def f(A, B):\n    return A @ B.T\n", "torch", 2, "A @ B.T",
                 "@ operator"},
        ScanCase{"output_written_by_host", "def f(A, C):\n    C[:] = A\n", "torch", 2, "C[:]",
                 "writing into a tensor"},
        ScanCase{"allocation", "import torch\nw = torch.empty(1 << 20, device='cuda')\n", "torch", 2,
                 "torch.empty", "allocating"},
        ScanCase{"allocation_like", "import torch\n\ndef f(A):\n    return torch.zeros_like(A)\n", "torch", 4,
                 "torch.zeros_like", "allocating"},
        ScanCase{"new_stream", "import torch\ns = torch.cuda.Stream()\n", "torch", 2, "torch.cuda.Stream",
                 "streams"},
        ScanCase{"synchronise", "import torch\n\ndef f():\n    torch.cuda.synchronize()\n", "torch", 4, "",
                 "synchronising"},
        ScanCase{"stream_type_renamed", "import torch\nS = torch.cuda.Stream\n\ndef f():\n    return S()\n",
                 "torch", 5, "S (torch.cuda.Stream)", ""},
        ScanCase{"torch_module_passed_on",
                 "import torch\n\ndef use(m, A, B):\n    return m.matmul(A, B)\n\nuse(torch, 1, 2)\n",
                 "torch", 6, "torch", "only through the names"},
        ScanCase{"torch_internals", "import torch\nlib = torch._C\n", "torch", 2, "torch._C", "private"},
        ScanCase{"torch_settings", "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", "torch", 2,
                 "", "not a solution's to change"},
        ScanCase{"torch_compile", "import torch\n\n@torch.compile\ndef f(A, B):\n    return A\n", "torch", 3,
                 "torch.compile", ""},
        ScanCase{"star_import", "from torch import *\n", "torch", 1, "from torch import *", "star import"},
        // files, processes, network, threads.
        ScanCase{"open", "data = open('/proc/self/environ').read()\n", "file", 1, "open", ""},
        ScanCase{"pathlib", "import pathlib\n", "file", 1, "import pathlib", ""},
        ScanCase{"os", "import os\n", "process", 1, "import os", ""},
        ScanCase{"subprocess", "from subprocess import run\n", "process", 1, "", ""},
        ScanCase{"exit", "exit(0)\n", "process", 1, "exit", ""},
        ScanCase{"socket", "import socket\n", "network", 1, "import socket", ""},
        ScanCase{"thread", "from threading import Thread\n", "thread", 1, "", ""},
        // loading and running code.
        ScanCase{"ctypes", "import ctypes\n", "dynamic-loading", 1, "import ctypes", ""},
        ScanCase{"importlib", "import importlib\nm = importlib.import_module('os')\n", "dynamic-loading", 1,
                 "import importlib", ""},
        ScanCase{"import_smuggled_through_dunder_import", "m = __import__('o' + 's')\nm.system('id')\n",
                 "dynamic-loading", 1, "__import__", ""},
        ScanCase{"exec", "exec('import os')\n", "dynamic-code", 1, "exec", ""},
        ScanCase{"eval", "x = eval('1 + 1')\n", "dynamic-code", 1, "eval", ""},
        ScanCase{"compile", "code = compile('1', 'f', 'eval')\n", "dynamic-code", 1, "compile", ""},
        // introspection: getattr tricks, the builtins, dunder attributes.
        ScanCase{"getattr_on_builtins", "f = getattr(__builtins__, '__imp' + 'ort__')\n", "introspection", 1,
                 "getattr", ""},
        ScanCase{"builtins_module_by_name", "b = __builtins__\n", "introspection", 1, "__builtins__", ""},
        ScanCase{"subclasses_walk", "classes = ().__class__.__base__.__subclasses__()\n", "introspection", 1,
                 "", ""},
        ScanCase{"globals", "g = globals()['torch']\n", "introspection", 1, "globals", ""},
        ScanCase{"function_globals", "def f():\n    pass\n\nenv = f.__globals__\n", "introspection", 4,
                 "f.__globals__", ""},
        ScanCase{"sys", "import sys\n", "introspection", 1, "import sys", ""},
        ScanCase{"builtins_through_a_module", "import triton.language as tl\ntl.core.builtins.open('x')\n",
                 "introspection", 2, "tl.core.builtins.open", ""},
        ScanCase{"os_through_a_module", "import triton.language as tl\ntl.core.os.system('id')\n", "process",
                 2, "tl.core.os.system", ""},
        // Triton's own compiler, runtime and settings.
        ScanCase{"triton_runtime", "import triton\ndriver = triton.runtime.driver.active\n",
                 "triton-internals", 2, "triton.runtime.driver.active", ""},
        ScanCase{"triton_runtime_imported", "from triton import runtime\n", "triton-internals", 1, "", ""},
        ScanCase{"triton_compiler_module", "import triton.compiler\n", "triton-internals", 1, "", ""},
        ScanCase{"triton_settings", "import triton\ntriton.knobs.nvidia.ptxas.path = '/tmp/ptxas'\n",
                 "triton-internals", 2, "", ""}),
    [](const auto& test) { return std::string(test.param.name); });

// --- evaluation -------------------------------------------------------------------------------------------

namespace {

EvalOptions no_gpu_options(const fs::path& cache) {
  EvalOptions o{.compile = options()};
  o.compile.cache_dir = cache;
  o.gpu.absent_reason = "no NVIDIA driver here (nvidia-smi not found)";
  return o;
}

}  // namespace

TEST(TritonEvaluation, OnTheCpuTheVerdictIsIncompleteAndTheGpuStagesAreSkipped) {
  const fs::path dir = temp_dir("eval-cpu");
  EvalOptions o = no_gpu_options(dir);
  o.tools.visible_device = "1";
  const Verdict v = evaluate({fixture(), "gemm.py", &triton_track()}, gemm(), o);
  EXPECT_EQ(v.device, "") << "no GPU stage ran";
  EXPECT_EQ(v.track, "triton");
  EXPECT_EQ(to_json(v)["track"], "triton");
  EXPECT_EQ(v.overall(), OverallStatus::incomplete) << v.summary();
  EXPECT_EQ(v.stage("compile")->status, StageStatus::passed);
  EXPECT_TRUE(v.stage("compile")->details.contains("python_version"));
  EXPECT_EQ(v.stage("static")->status, StageStatus::passed);
  EXPECT_FALSE(v.stage("static")->details.contains("ptx_inventory")) << "no PTX before the GPU compiles it";
  for (const char* name : {"sanitize", "correct", "instructions", "time"}) {
    EXPECT_EQ(v.stage(name)->status, StageStatus::skipped) << name;
    EXPECT_TRUE(contains(v.stage(name)->message, "no NVIDIA driver here")) << v.stage(name)->message;
  }
  EXPECT_TRUE(contains(v.stage("instructions")->message, "no PTX is checked here"));
  fs::remove_all(dir);
}

TEST(TritonEvaluation, AForbiddenMeansFailsTheStaticStage) {
  const fs::path dir = temp_dir("eval-static");
  const std::string source =
      "import torch as t\n\ndef ptxbench_gemm_bf16(A, B, C, M, N, K, stream):\n"
      "    C.copy_(t.matmul(A, B.T))\n    return 0\n";
  const Verdict v = evaluate({source, "gemm.py", &triton_track()}, gemm(), no_gpu_options(dir));
  EXPECT_EQ(v.overall(), OverallStatus::failed);
  EXPECT_EQ(v.stage("static")->status, StageStatus::failed);
  EXPECT_TRUE(contains(v.stage("static")->message, "t.matmul (torch.matmul)")) << v.stage("static")->message;
  EXPECT_EQ(v.stage("static")->details["violations"][1]["line"], 4);
  EXPECT_EQ(v.stage("sanitize")->message, "forbidden means found: the solution is not run");
  fs::remove_all(dir);
}

// Where a GPU would judge it, nothing can run a Triton solution yet: ptxbench cannot judge, which is a
// harness error (the verdict says so; it says nothing about the submission), and no GPU is taken for it.
TEST(TritonEvaluation, WhereAGpuWouldJudgeItTheGpuStagesRunIt) {
  const fs::path dir = temp_dir("eval-gpu");
  EvalOptions o = no_gpu_options(dir);
  o.gpu = {.present = true, .name = "NVIDIA H200", .compute_capability = 90};
  o.tools.runner = "/nonexistent/ptxbench-runner";
  o.tools.scratch = dir / "scratch";
  o.tools.visible_device = "1";  // as run --gpus 2 gives the second GPU
  EXPECT_TRUE(uses_gpu(gemm(), cuda_track(), o));
  EXPECT_TRUE(uses_gpu(gemm(), triton_track(), o));
  const Verdict v = evaluate({fixture(), "gemm.py", &triton_track()}, gemm(), o);
  EXPECT_EQ(v.device, "1") << "the verdict names the GPU its stages ran on";
  // The stages were started: here they stop at the sandbox, which these options never resolved.
  for (const char* name : {"sanitize", "correct", "instructions", "time"}) {
    EXPECT_EQ(v.stage(name)->status, StageStatus::harness_error) << name;
    EXPECT_TRUE(contains(v.stage(name)->message, "the sandbox is not available")) << v.stage(name)->message;
  }
  fs::remove_all(dir);
}
