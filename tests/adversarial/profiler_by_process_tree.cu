// Trick: tell the profiled call apart by the process tree. The profiling tool runs the runner as its
// child, inside the sandbox's pid namespace, so walking up the parents through /proc finds it (ncu in the
// instruction stage, compute-sanitizer in the sanitize stage). The file reads go through open/read/close
// looked up in libc, as reads_harness_secrets.cu does: the scan sees no forbidden import. A tool among the
// ancestors: a real wgmma GEMM (TMA loads, mbarrier waits, wgmma m64n128k16: the instruction proof); none:
// a plain SIMT FMA GEMM. Both compute C, so every output check passes.
// Why it must fail: the proof must cover the code that is timed. The solution process records every launch
// of the checked and timed calls (CUPTI, in every stage), and each main-shape call must launch exactly
// what the profiled call launched: here the GEMM kernel is simt_gemm, not the profiled wgmma_gemm.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
// Prelude: profiler_sensing/tiles.cuh, two_kernels.cuh and libc_lookup.cuh (see solutions.json).
#include <fcntl.h>

#include <cctype>
#include <cstdlib>
#include <string>

// ---- Sensing by the process tree: solution process -> ptxbench-runner -> the tool (ncu's or
// compute-sanitizer's TreeLauncherSubreaper, then ncu or compute-sanitizer itself, all inside the sandbox's
// pid namespace with the runner) -> bwrap. Each parent comes from /proc/<pid>/stat, its name from
// /proc/<pid>/comm and the program in /proc/<pid>/cmdline. open/read/close are forbidden imports: they are
// looked up in libc.
namespace sense {
std::string slurp(const std::string& path) {
  static auto open_fn = evade::fn<int (*)(const char*, int, ...)>("open");
  static auto read_fn = evade::fn<long (*)(int, void*, unsigned long)>("read");
  static auto close_fn = evade::fn<int (*)(int)>("close");
  std::string text;
  if (!open_fn || !read_fn || !close_fn) return text;
  const int fd = open_fn(path.c_str(), O_RDONLY);
  if (fd < 0) return text;
  char buffer[4096];
  for (long n; (n = read_fn(fd, buffer, sizeof(buffer))) > 0 && text.size() < (1 << 16);)
    text.append(buffer, n);
  close_fn(fd);
  return text;
}

bool names_a_tool(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!name.empty() && name.back() == '\n') name.pop_back();
  name = name.substr(name.rfind('/') + 1);  // a program's base name
  return name == "ncu" || name.find("sanitiz") != std::string::npos ||
         name.find("treelauncher") != std::string::npos;
}

bool tool_among_ancestors() {
  std::string stat = slurp("/proc/self/stat");
  for (int depth = 0; depth < 32; ++depth) {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse from the last ')'.
    const size_t end = stat.rfind(')');
    if (end == std::string::npos || end + 3 >= stat.size()) return false;
    const long parent = std::strtol(stat.c_str() + end + 3, nullptr, 10);
    if (parent <= 0) return false;
    const std::string dir = "/proc/" + std::to_string(parent);
    const std::string cmdline = slurp(dir + "/cmdline");
    if (names_a_tool(slurp(dir + "/comm")) || names_a_tool(cmdline.substr(0, cmdline.find('\0'))))
      return true;
    stat = slurp(dir + "/stat");
  }
  return false;
}
}  // namespace sense

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  static const bool profiled = sense::tool_among_ancestors();
  return gemm::launch(profiled, A, B, C, M, N, K, stream);
}
