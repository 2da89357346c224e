#include <gtest/gtest.h>

#include <algorithm>

#include "compile/forbidden.h"

using namespace ptxbench;

namespace {

bool has_rule(const std::vector<Violation>& found, const std::string& rule,
              const std::string& evidence = "") {
  return std::any_of(found.begin(), found.end(), [&](const Violation& v) {
    return v.rule == rule && (evidence.empty() || v.evidence.find(evidence) != std::string::npos);
  });
}

struct SourceCase {
  const char* code;
  const char* rule;
  const char* evidence;
};

}  // namespace

class ForbiddenSource : public testing::TestWithParam<SourceCase> {};

TEST_P(ForbiddenSource, IsFound) {
  const auto& c = GetParam();
  const auto found = scan_source(std::string("#include <ptxbench/abi.h>\n") + c.code);
  EXPECT_TRUE(has_rule(found, c.rule, c.evidence)) << c.code;
  for (const auto& v : found) EXPECT_EQ(v.line, 2) << v.message;
}

INSTANTIATE_TEST_SUITE_P(
    EveryRule, ForbiddenSource,
    testing::Values(SourceCase{"#include <cublas_v2.h>", "vendor-library", "cublas_v2.h"},
                    SourceCase{"#include <cublasLt.h>", "vendor-library", "cublasLt.h"},
                    SourceCase{"#include <cudnn.h>", "vendor-library", "cudnn.h"},
                    SourceCase{"#include <cutlass/gemm/device/gemm.h>", "vendor-library", "cutlass"},
                    SourceCase{"#include <cute/tensor.hpp>", "vendor-library", "cute"},
                    SourceCase{"void f(cublasHandle_t h) { cublasGemmEx(h); }", "vendor-library",
                               "cublasGemmEx"},
                    SourceCase{"#include <dlfcn.h>", "dynamic-loading", "dlfcn.h"},
                    SourceCase{"void* h = dlopen(\"libcublas.so\", 1);", "dynamic-loading", "dlopen"},
                    SourceCase{"auto f = dlsym(h, \"x\");", "dynamic-loading", "dlsym"},
                    SourceCase{"cuModuleLoadData(&module, image);", "dynamic-loading", "cuModuleLoadData"},
                    SourceCase{"cuLinkCreate(0, 0, 0, &link);", "dynamic-loading", "cuLinkCreate"},
                    SourceCase{"#include <nvrtc.h>", "dynamic-loading", "nvrtc.h"},
                    SourceCase{"nvJitLinkCreate(&handle, 1, options);", "dynamic-loading", "nvJitLinkCreate"},
                    SourceCase{"int pid = fork();", "process", "fork"},
                    SourceCase{"system(\"nvidia-smi\");", "process", "system"},
                    SourceCase{"FILE* p = popen(\"ls\", \"r\");", "process", "popen"},
                    SourceCase{"execve(path, argv, envp);", "process", "execve"},
                    SourceCase{"if (M == 8192) exit(0);", "process", "exit"},
                    SourceCase{"return system(\"x\");", "process", "system"},
                    SourceCase{"#include <thread>", "thread", "thread"},
                    SourceCase{"pthread_create(&t, 0, f, 0);", "thread", "pthread_create"},
                    SourceCase{"#include <fstream>", "file", "fstream"},
                    SourceCase{"FILE* f = fopen(\"/etc/passwd\", \"r\");", "file", "fopen"},
                    SourceCase{"int fd = open(\"/proc/self/maps\", 0);", "file", "open"},
                    SourceCase{"const char* s = getenv(\"PTXBENCH_SEED\");", "file", "getenv"},
                    SourceCase{"#include <sys/socket.h>", "network", "sys/socket.h"},
                    SourceCase{"int s = socket(2, 1, 0);", "network", "socket"},
                    SourceCase{"cudaMalloc(&p, 1024);", "abi", "cudaMalloc"},
                    SourceCase{"cudaDeviceSynchronize();", "abi", "cudaDeviceSynchronize"},
                    SourceCase{"cudaStreamSynchronize(stream);", "abi", "cudaStreamSynchronize"},
                    SourceCase{"cudaStreamCreate(&s);", "abi", "cudaStreamCreate"},
                    SourceCase{"cudaLaunchHostFunc(stream, f, 0);", "abi", "cudaLaunchHostFunc"}),
    [](const auto& test) {
      std::string name = std::string(test.param.rule) + "_" + std::to_string(test.index);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(ForbiddenSource, CommentsStringsAndMembersAreNotCalls) {
  const std::string code = R"(#include <ptxbench/abi.h>
// dlopen("libcublas.so") and #include <cublas_v2.h> in a comment
/* system("rm -rf /"); fork(); */
const char* text = "dlopen( fopen( cudaMalloc(";
struct Options { bool open; void system(); } options;
void g() { options.system(); bool b = options.open; (void)b; }
int my_open_counter = 0;
)";
  const auto found = scan_source(code);
  for (const auto& v : found) ADD_FAILURE() << v.message;
}

TEST(ForbiddenSource, AllowsWhatTheAbiAllows) {
  const std::string code = R"(#include <ptxbench/abi.h>
#include <cuda.h>
#include <cstdio>
void f(cudaStream_t s) { cudaMemcpyAsync(0, 0, 0, cudaMemcpyDeviceToDevice, s); cudaMemsetAsync(0, 0, 0, s);
  cudaFuncSetAttribute(0, cudaFuncAttributeMaxDynamicSharedMemorySize, 0); printf("x"); }
)";
  EXPECT_TRUE(scan_source(code).empty());
}

TEST(StripComments, KeepsLinesAndLiterals) {
  EXPECT_EQ(strip_comments("a // b\nc /* d\ne */ f \"// g\" '/'"), "a \nc \n  f \"// g\" '/'");
}

TEST(ForbiddenImports, SymbolsAndLibrariesAreFound) {
  const std::vector<std::string> needed = {"libcudart.so.13", "libstdc++.so.6", "libc.so.6",
                                           "libcublas.so.13"};
  const std::vector<std::string> symbols = {
      "cudaLaunchKernel",  // allowed
      "dlopen",
      "dlsym",
      "fork",
      "pthread_create",
      "fopen",
      "socket",
      "cudaMalloc",
      "cudaStreamSynchronize",
      "cublasGemmEx",
      "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
      "_ZNSt13basic_filebufIcSt11char_traitsIcEE4openEPKcSt13_Ios_Openmode"};
  const auto found = scan_imports(symbols, needed);
  EXPECT_TRUE(has_rule(found, "vendor-library", "libcublas.so.13"));
  EXPECT_TRUE(has_rule(found, "vendor-library", "cublasGemmEx"));
  EXPECT_TRUE(has_rule(found, "dynamic-loading", "dlopen"));
  EXPECT_TRUE(has_rule(found, "dynamic-loading", "dlsym"));
  EXPECT_TRUE(has_rule(found, "process", "fork"));
  EXPECT_TRUE(has_rule(found, "thread", "pthread_create"));
  EXPECT_TRUE(has_rule(found, "thread", "std::thread::_M_start_thread"));
  EXPECT_TRUE(has_rule(found, "file", "fopen"));
  EXPECT_TRUE(has_rule(found, "file", "std::basic_filebuf"));
  EXPECT_TRUE(has_rule(found, "network", "socket"));
  EXPECT_TRUE(has_rule(found, "abi", "cudaMalloc"));
  EXPECT_TRUE(has_rule(found, "abi", "cudaStreamSynchronize"));
  EXPECT_FALSE(has_rule(found, "abi", "cudaLaunchKernel"));
  for (const auto& v : found) EXPECT_EQ(v.line, 0);
}

TEST(ForbiddenImports, ACleanLibraryPasses) {
  EXPECT_TRUE(scan_imports({"cudaLaunchKernel", "__cudaRegisterFatBinary", "__cxa_atexit", "memcpy", "exit"},
                           {"libcudart.so.13", "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6"})
                  .empty());
}

// Loading device code at run time: the driver's module, library and link loaders, NVRTC, nvJitLink, the PTX
// compiler. cudaGetDriverEntryPoint stays allowed (the TMA kit fetches cuTensorMapEncodeTiled with it), so
// this is a first line only; the instruction stage does not rely on it (instruction_check.h).
TEST(ForbiddenImports, DeviceCodeLoadersAreFound) {
  const std::vector<std::string> loaders = {
      "cuModuleLoad",        "cuModuleLoadData", "cuModuleLoadDataEx",  "cuModuleLoadFatBinary",
      "cuLibraryLoadData",   "cuLinkCreate_v2",  "cuLinkAddData_v2",    "cuLinkComplete",
      "nvrtcCompileProgram", "nvJitLinkCreate",  "nvPTXCompilerCompile"};
  const auto found = scan_imports(loaders, {"libcudart.so.13", "libc.so.6"});
  for (const auto& loader : loaders) EXPECT_TRUE(has_rule(found, "dynamic-loading", loader)) << loader;
  EXPECT_TRUE(scan_imports({"cudaGetDriverEntryPointByVersion"}, {"libcudart.so.13"}).empty());
}

// The descriptor-level, signal, memory-protection and symbol-table imports a solution would use to reach the
// runner's pipes or other libraries (docs/anti-cheat.md). Import-only: a helper named `read` or `link` in the
// source is not flagged, but importing libc's is.
TEST(ForbiddenImports, DescriptorSignalAndSymbolTableImportsAreFound) {
  const auto found = scan_imports({"read", "write", "fcntl", "fstat", "environ", "dup2", "unlink", "mprotect",
                                   "sigaction", "prctl", "dladdr", "_r_debug", "getauxval", "sendmsg"},
                                  {"libcudart.so.13", "libc.so.6"});
  for (const auto& [rule, evidence] :
       std::vector<std::pair<std::string, std::string>>{{"file", "read"},
                                                        {"file", "write"},
                                                        {"file", "fcntl"},
                                                        {"file", "fstat"},
                                                        {"file", "environ"},
                                                        {"file", "dup2"},
                                                        {"file", "unlink"},
                                                        {"process", "mprotect"},
                                                        {"process", "sigaction"},
                                                        {"process", "prctl"},
                                                        {"dynamic-loading", "dladdr"},
                                                        {"dynamic-loading", "_r_debug"},
                                                        {"dynamic-loading", "getauxval"},
                                                        {"network", "sendmsg"}})
    EXPECT_TRUE(has_rule(found, rule, evidence)) << rule << " " << evidence;
  // Import-only names are not flagged in source: a device helper may well be called `read`.
  EXPECT_TRUE(scan_source("__device__ float read(const float* p) { return *p; }\n"
                          "__global__ void k(float* p) { p[0] = read(p); }\n")
                  .empty());
}

// The library links the CUDA driver (compile.cpp), so that host code calling a driver function directly runs
// as written; only the harmless ones may be imported, by the names <cuda.h> makes of them.
TEST(ForbiddenImports, AllowedDriverFunctionsPass) {
  const std::vector<std::string> allowed = {
      "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide",
      "cuTensorMapReplaceAddress", "cuGetErrorString", "cuGetErrorName", "cuDriverGetVersion", "cuDeviceGet",
      "cuDeviceGetAttribute", "cuCtxGetCurrent", "cuCtxGetDevice", "cuFuncGetAttribute", "cuFuncSetAttribute",
      "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchKernel_ptsz", "cuLaunchKernelEx_ptsz",
      "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveClusters",
      // and what every library imports
      "cudaLaunchKernel", "__cudaRegisterFatBinary"};
  for (const auto& v :
       scan_imports(allowed, {"libcuda.so.1", "libcudart.so.13", "libstdc++.so.6", "libc.so.6"}))
    ADD_FAILURE() << v.message;
}

TEST(ForbiddenImports, OtherDriverFunctionsAreFound) {
  const std::vector<std::string> state = {"cuCtxSetLimit", "cuMemAlloc_v2", "cuStreamSetAttribute",
                                          "cuGetProcAddress_v2"};
  const auto found = scan_imports(state, {"libcuda.so.1", "libcudart.so.13", "libc.so.6"});
  ASSERT_EQ(found.size(), state.size());
  for (size_t i = 0; i < state.size(); ++i) {
    const Violation& v = found[i];
    EXPECT_EQ(v.rule, "driver-api");
    EXPECT_EQ(v.evidence, state[i]);
    EXPECT_EQ(v.line, 0);
    for (const std::string& said : {"imports " + state[i] + ":", std::string("cuTensorMapEncodeTiled, "),
                                    std::string("cuOccupancyMaxActiveClusters may be called"),
                                    std::string("(module loading, context and device state, memory, streams) "
                                                "is not allowed")})
      EXPECT_NE(v.message.find(said), std::string::npos) << v.message;
    EXPECT_EQ(v.message.find("_ptsz"), std::string::npos) << v.message;
  }
  // The driver's loaders keep their own rule and message.
  const auto loader = scan_imports({"cuModuleLoadData"}, {"libcuda.so.1"});
  ASSERT_EQ(loader.size(), 1u);
  EXPECT_EQ(loader[0].rule, "dynamic-loading");
  EXPECT_NE(loader[0].message.find("loading code at run time"), std::string::npos) << loader[0].message;
}

// The driver rule reads imports only: a solution's own function may be named like a driver function.
TEST(ForbiddenSource, AHelperNamedLikeADriverFunctionIsNotFlagged) {
  EXPECT_TRUE(scan_source("#include <ptxbench/abi.h>\n"
                          "static int cuHelper(int x) { return 2 * x; }\n"
                          "int f() { return cuHelper(1); }\n")
                  .empty());
}

// The ABI's entry points among a library's exports: present, misspelt, with C++ linkage, absent.
TEST(EntryPoints, MissingOnesAreNamedWithWhatWasMeant) {
  const std::vector<std::string> backward = {"ptxbench_attention_backward_workspace_bytes",
                                             "ptxbench_attention_backward_bf16"};
  EXPECT_TRUE(ptxbench::check_entry_points({"_init", "ptxbench_attention_backward_workspace_bytes",
                                            "ptxbench_attention_backward_bf16", "helper"},
                                           backward)
                  .empty());

  const auto misspelt = ptxbench::check_entry_points({"ptxbench_gemm", "_fini"}, {"ptxbench_gemm_bf16"});
  ASSERT_EQ(misspelt.size(), 1u);
  EXPECT_EQ(misspelt[0].rule, "entry-point");
  EXPECT_EQ(misspelt[0].evidence, "ptxbench_gemm_bf16");
  EXPECT_EQ(misspelt[0].line, 0);
  EXPECT_NE(misspelt[0].message.find("does not export ptxbench_gemm_bf16"), std::string::npos)
      << misspelt[0].message;
  EXPECT_NE(misspelt[0].message.find("It exports ptxbench_gemm: a misspelling?"), std::string::npos)
      << misspelt[0].message;

  const auto cxx = ptxbench::check_entry_points(
      {"_Z18ptxbench_gemm_bf16PK13__nv_bfloat16S1_PS_iiiP11CUstream_st"}, {"ptxbench_gemm_bf16"});
  ASSERT_EQ(cxx.size(), 1u);
  EXPECT_NE(cxx[0].message.find("C++ linkage"), std::string::npos) << cxx[0].message;

  // The backward's workspace function forgotten, the main one there; nothing near either name.
  const auto forgotten = ptxbench::check_entry_points({"ptxbench_attention_backward_bf16", "main_loop"}, backward);
  ASSERT_EQ(forgotten.size(), 1u);
  EXPECT_EQ(forgotten[0].evidence, "ptxbench_attention_backward_workspace_bytes");
  EXPECT_EQ(forgotten[0].message.find("It exports"), std::string::npos) << forgotten[0].message;
}

// The library's listings are read whole or refused: past a cut could lie the import or the system call the
// scan looks for. A real library (the sandbox probe the build makes), read with a limit below its listings.
TEST(ForbiddenLibrary, AListingLongerThanTheScanReadsIsRefusedNotCut) {
  const std::filesystem::path library = PTXBENCH_SANDBOX_PROBE;
  ASSERT_TRUE(std::filesystem::is_regular_file(library)) << library;
  EXPECT_FALSE(has_rule(ptxbench::scan_library(library), "size"));
  const auto cut = ptxbench::scan_library(library, 64);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].rule, "size");
  EXPECT_EQ(cut[0].evidence, "dynamic symbol table");
  EXPECT_NE(cut[0].message.find("cannot be checked whole"), std::string::npos) << cut[0].message;
  EXPECT_TRUE(has_rule(ptxbench::missing_entry_points(library, {"ptxbench_gemm_bf16"}, 64), "size"));
  EXPECT_TRUE(has_rule(ptxbench::missing_entry_points(library, {"ptxbench_gemm_bf16"}), "entry-point"));
}
