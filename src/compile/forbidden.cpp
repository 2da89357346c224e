#include "compile/forbidden.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>

#include "util/names.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxbench {
namespace {

struct Rule {
  const char* rule;
  const char* what;                             // the reason, in words a model can act on
  std::vector<std::string> includes;            // header prefixes
  std::vector<std::string> symbols;             // exact C symbols (source identifiers and imported symbols)
  std::vector<std::string> demangled_prefixes;  // C++ library entry points, as demangled imports start
  // Imported symbols only: names too common to flag in source (a helper called `read` or `link`), or data
  // (environ), that no kernel's host code needs to import.
  std::vector<std::string> imported = {};
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {"vendor-library",
       "vendor libraries do the work the solution must do itself",
       {"cublas", "cublasLt", "cudnn", "cutlass/", "cute/", "cusparse", "cufft", "nvjet"},
       {},
       {}},
      {"dynamic-loading",
       "loading code at run time is not allowed",
       {"dlfcn.h", "link.h", "nvrtc.h", "nvJitLink.h", "nvPTXCompilerAPI.h"},
       // Device code too: a solution's kernels are those of its compiled cubin (instruction_check.h).
       {"dlopen",
        "dlmopen",
        "dlsym",
        "dlvsym",
        "dlinfo",
        "dl_iterate_phdr",
        "cudaLibraryLoadFromFile",
        "cudaLibraryLoadData",
        "dladdr",
        "dladdr1",
        "cuModuleLoad",
        "cuModuleLoadData",
        "cuModuleLoadDataEx",
        "cuModuleLoadFatBinary",
        "cuLibraryLoadData",
        "cuLibraryLoadFromFile",
        "cuLinkCreate",
        "cuLinkCreate_v2",
        "cuLinkAddData",
        "cuLinkAddData_v2",
        "cuLinkAddFile",
        "cuLinkAddFile_v2",
        "cuLinkComplete",
        "nvrtcCreateProgram",
        "nvrtcCompileProgram",
        "nvJitLinkCreate",
        "nvJitLinkComplete",
        "nvPTXCompilerCreate",
        "nvPTXCompilerCompile"},
       {},
       // Ways to find other libraries' code and symbol tables in memory (tests/adversarial/*: see
       // docs/anti-cheat.md for what remains possible without any import).
       {"_r_debug", "_dl_find_object", "getauxval"}},
      {"process",
       "creating or replacing processes is not allowed",
       {"spawn.h", "sys/wait.h"},
       {"fork",   "vfork",  "clone",  "clone3",  "execve", "execv",      "execvp",      "execvpe",
        "execl",  "execlp", "execle", "fexecve", "system", "popen",      "posix_spawn", "posix_spawnp",
        "ptrace", "kill",   "exit",   "_exit",   "_Exit",  "quick_exit", "abort"},
       {},
       // Signals, limits, memory protection, namespaces, other processes' memory.
       {"signal",     "sigaction",   "sigaltstack",   "prctl",  "setrlimit",        "prlimit",
        "prlimit64",  "mprotect",    "pkey_mprotect", "mremap", "process_vm_readv", "process_vm_writev",
        "unshare",    "setns",       "mount",         "umount", "umount2",          "chroot",
        "pidfd_open", "pidfd_getfd", "memfd_create"}},
      {"thread",
       "host threads are not allowed: all work goes on the given stream",
       {"thread", "future", "pthread.h", "threads.h"},
       {"pthread_create", "thrd_create"},
       {"std::thread::_M_start_thread", "std::jthread"}},
      {"file",
       "file access is not allowed",
       {"fstream", "filesystem", "dirent.h"},
       {"fopen", "fopen64", "freopen", "open", "open64", "openat", "openat64", "creat", "opendir", "readlink",
        "getenv", "secure_getenv", "mmap"},
       {"std::basic_filebuf", "std::filesystem", "std::basic_ifstream", "std::basic_ofstream",
        "std::basic_fstream"},
       // Descriptor-level I/O: how a solution would read the harness's pipes or write its result channel.
       {"read",     "write",   "pread",      "pread64",   "pwrite",     "pwrite64",   "readv",   "writev",
        "preadv",   "pwritev", "__read_chk", "__open_2",  "__open64_2", "__openat_2", "close",   "dup",
        "dup2",     "dup3",    "fcntl",      "fcntl64",   "ioctl",      "fstat",      "fstat64", "stat",
        "stat64",   "lstat",   "fstatat",    "statx",     "unlink",     "unlinkat",   "rename",  "renameat",
        "link",     "symlink", "chmod",      "truncate",  "ftruncate",  "opendir",    "readdir", "fdopendir",
        "sendfile", "splice",  "environ",    "__environ", "mkfifo",     "mknod"}},
      {"network",
       "network access is not allowed",
       {"sys/socket.h", "netinet/", "arpa/inet.h", "netdb.h", "curl/"},
       {"socket", "connect", "bind", "listen", "accept", "getaddrinfo", "gethostbyname", "sendto",
        "recvfrom"},
       {},
       {"socketpair", "accept4", "send", "recv", "sendmsg", "recvmsg", "getnameinfo", "gethostbyname2",
        "gethostbyname_r", "res_query", "res_search"}},
      {"abi",
       "the ABI forbids allocating, synchronising, creating streams or events, and host callbacks in the "
       "call",
       {},
       {"cudaMalloc",
        "cudaMallocAsync",
        "cudaMallocManaged",
        "cudaMallocHost",
        "cudaMallocPitch",
        "cudaHostAlloc",
        "cudaFree",
        "cudaFreeAsync",
        "cudaFreeHost",
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaStreamCreate",
        "cudaStreamCreateWithFlags",
        "cudaStreamCreateWithPriority",
        "cudaEventCreate",
        "cudaEventCreateWithFlags",
        "cudaMemcpy",
        "cudaMemset",
        "cudaMemcpyToSymbol",
        "cudaDeviceReset",
        "cudaSetDevice",
        "cudaLaunchHostFunc",
        "cudaStreamAddCallback",
        "cudaProfilerStart",
        "cudaProfilerStop",
        "cudaDeviceSetLimit",
        "syscall"},
       {}},
  };
  return table;
}

// Libraries a solution's shared library may need: the CUDA runtime and driver and the C/C++ runtime.
bool allowed_needed_library(const std::string& name) {
  static const std::vector<std::string> allowed = {"libcudart.so", "libcuda.so", "libstdc++.so", "libm.so",
                                                   "libgcc_s.so",  "libc.so",    "ld-linux"};
  return std::any_of(allowed.begin(), allowed.end(), [&](const auto& a) { return name.starts_with(a); });
}

// The CUDA driver functions a solution may import, so that kernels run with their host code as written:
// describing tensors for TMA, reading errors, versions and attributes, launching its own kernels. <cuda.h>
// maps none of them to a versioned export (cuMemAlloc to cuMemAlloc_v2, say); cuLaunchKernel and
// cuLaunchKernelEx become cuLaunchKernel_ptsz and cuLaunchKernelEx_ptsz under
// CUDA_API_PER_THREAD_DEFAULT_STREAM, spellings allowed too but not named in the rule's message.
// cudaGetDriverEntryPoint(ByVersion) is allowed (the TMA kit fetches cuTensorMapEncodeTiled with it) and
// hands out any driver function by name, which no import shows: what such a function does to the device's
// state is judged by the GPU stages, which check that state after each call.
const std::vector<std::string>& allowed_driver_functions() {
  static const std::vector<std::string> names = {"cuTensorMapEncodeTiled",
                                                 "cuTensorMapEncodeIm2col",
                                                 "cuTensorMapEncodeIm2colWide",
                                                 "cuTensorMapReplaceAddress",
                                                 "cuGetErrorString",
                                                 "cuGetErrorName",
                                                 "cuDriverGetVersion",
                                                 "cuDeviceGet",
                                                 "cuDeviceGetAttribute",
                                                 "cuCtxGetCurrent",
                                                 "cuCtxGetDevice",
                                                 "cuFuncGetAttribute",
                                                 "cuFuncSetAttribute",
                                                 "cuLaunchKernel",
                                                 "cuLaunchKernelEx",
                                                 "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                                                 "cuOccupancyMaxActiveClusters"};
  return names;
}

// A CUDA driver API function: "cu" and an upper-case letter (cuCtxSetLimit; not cudaMalloc or cublasGemmEx).
bool is_driver_function(const std::string& symbol) {
  return symbol.size() > 2 && symbol.starts_with("cu") && std::isupper(static_cast<unsigned char>(symbol[2]));
}

bool allowed_driver_function(const std::string& symbol) {
  static const std::set<std::string> per_thread_stream = {"cuLaunchKernel_ptsz", "cuLaunchKernelEx_ptsz"};
  const auto& names = allowed_driver_functions();
  return std::find(names.begin(), names.end(), symbol) != names.end() || per_thread_stream.contains(symbol);
}

const std::string& driver_rule_what() {
  static const std::string what = fmt::format(
      "of the CUDA driver only {} may be called; the rest of it (module loading, context and device state, "
      "memory, streams) is not allowed",
      fmt::join(allowed_driver_functions(), ", "));
  return what;
}

// True when the name at `pos` is a member (`options.open(`) or is being declared (`void system();`,
// `void* dlopen(...)`): the token before it is a type name or a pointer/reference declarator, not an
// operator.
bool is_member_or_declaration(const std::string& code, size_t pos) {
  size_t end = pos;
  while (end > 0 && code[end - 1] == ' ') --end;
  if (end == 0) return false;
  char before = code[end - 1];
  if (before == '.' || (before == '>' && end > 1 && code[end - 2] == '-')) return true;
  if (before == '*' || before == '&')
    return end > 1 && (std::isalnum(static_cast<unsigned char>(code[end - 2])) || code[end - 2] == '_' ||
                       code[end - 2] == ' ');
  if (!std::isalnum(static_cast<unsigned char>(before)) && before != '_') return false;
  size_t start = end;
  while (start > 0 && (std::isalnum(static_cast<unsigned char>(code[start - 1])) || code[start - 1] == '_'))
    --start;
  const std::string previous = code.substr(start, end - start);
  return previous != "return" && previous != "co_return" && previous != "throw";
}

// Replaces the contents of string and character literals with spaces (quotes kept), so that names inside
// strings are not taken for calls. Expects comments already removed.
std::string blank_literals(const std::string& code) {
  std::string out = code;
  for (size_t i = 0; i < out.size(); ++i) {
    char quote = out[i];
    if (quote != '"' && quote != '\'') continue;
    size_t j = i + 1;
    for (; j < out.size() && out[j] != quote && out[j] != '\n'; ++j) {
      if (out[j] == '\\' && j + 1 < out.size()) out[j++] = ' ';
      out[j] = ' ';
    }
    i = j;
  }
  return out;
}

}  // namespace

std::string strip_comments(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '"' || c == '\'') {  // copy a literal whole, so "//" inside it is not a comment
      size_t j = i + 1;
      while (j < source.size() && source[j] != c && source[j] != '\n') j += source[j] == '\\' ? 2 : 1;
      j = std::min(j, source.size() - 1);
      out.append(source, i, j - i + 1);
      i = j;
    } else if (source.compare(i, 2, "//") == 0) {
      while (i + 1 < source.size() && source[i + 1] != '\n') ++i;
    } else if (source.compare(i, 2, "/*") == 0) {
      size_t end = source.find("*/", i + 2);
      if (end == std::string::npos) end = source.size() - 2;
      for (size_t k = i; k < end + 2; ++k)
        if (source[k] == '\n') out += '\n';
      out += ' ';
      i = end + 1;
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<Violation> scan_source(const std::string& source) {
  std::vector<Violation> found;
  const auto lines = split_lines(strip_comments(source));
  static const std::regex include(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  static const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]*)");
  for (size_t n = 0; n < lines.size(); ++n) {
    const int line_no = static_cast<int>(n + 1);
    std::smatch m;
    if (std::regex_search(lines[n], m, include)) {
      const std::string header = m[1];
      for (const auto& rule : rules())
        for (const auto& prefix : rule.includes)
          if (header.starts_with(prefix))
            found.push_back({rule.rule, "#include <" + header + ">", line_no,
                             fmt::format("line {}: #include <{}>: {}", line_no, header, rule.what)});
      continue;
    }
    const std::string code = blank_literals(lines[n]);
    for (auto it = std::sregex_iterator(code.begin(), code.end(), identifier); it != std::sregex_iterator();
         ++it) {
      const std::string name = it->str();
      for (const auto& rule : rules()) {
        bool vendor_call =
            std::string(rule.rule) == "vendor-library" &&
            (name.starts_with("cublas") || name.starts_with("cudnn") || name == "cutlass" || name == "cute");
        bool listed = std::find(rule.symbols.begin(), rule.symbols.end(), name) != rule.symbols.end();
        // A listed C function counts when it is called: the name followed by '('. (A member such as
        // options.open or a variable named `open` would otherwise be flagged; the import scan still sees
        // calls hidden behind macros.)
        size_t after = static_cast<size_t>(it->position() + it->length());
        while (after < code.size() && code[after] == ' ') ++after;
        bool called = after < code.size() && code[after] == '(';
        if (vendor_call || (listed && called && !is_member_or_declaration(code, it->position())))
          found.push_back(
              {rule.rule, name, line_no, fmt::format("line {}: {}: {}", line_no, name, rule.what)});
      }
    }
  }
  return found;
}

std::vector<Violation> scan_imports(const std::vector<std::string>& undefined_symbols,
                                    const std::vector<std::string>& needed) {
  std::vector<Violation> found;
  std::set<std::string> reported;
  auto add = [&](const std::string& rule, const std::string& evidence, const std::string& what) {
    if (reported.insert(evidence).second)
      found.push_back(
          {rule, evidence, 0, fmt::format("the compiled library imports {}: {}", evidence, what)});
  };
  for (const auto& library : needed)
    if (!allowed_needed_library(library))
      found.push_back(
          {"vendor-library", library, 0,
           fmt::format("the compiled library needs {}: only the CUDA runtime and driver and the C/C++ "
                       "runtime may be linked",
                       library)});
  // nvcc's host stubs for __device__ functions call exit(), so every real solution imports it: the source
  // scan judges calls to exit and abort instead.
  static const std::set<std::string> emitted_by_nvcc = {"exit", "abort"};
  for (const auto& symbol : undefined_symbols) {
    if (emitted_by_nvcc.contains(symbol)) continue;
    const std::string readable = demangle(symbol);
    for (const auto& rule : rules()) {
      bool hit = std::find(rule.symbols.begin(), rule.symbols.end(), symbol) != rule.symbols.end() ||
                 std::find(rule.imported.begin(), rule.imported.end(), symbol) != rule.imported.end();
      if (std::string(rule.rule) == "vendor-library")
        hit = symbol.starts_with("cublas") || symbol.starts_with("cudnn");
      for (const auto& prefix : rule.demangled_prefixes) hit = hit || readable.starts_with(prefix);
      if (hit) add(rule.rule, readable, rule.what);
    }
    // Import-only: a helper of the solution's own may be called cuSomething. After the table, so that the
    // driver's loaders (cuModuleLoadData) keep their dynamic-loading rule: add reports each symbol once.
    if (is_driver_function(symbol) && !allowed_driver_function(symbol))
      add("driver-api", symbol, driver_rule_what());
  }
  return found;
}

namespace {

// A binary tool's listing of the library, whole, or nothing when it is longer than `limit`
// (kListingLimit). A tool that fails is the host's failure (std::runtime_error).
std::optional<std::string> tool_output(const std::vector<std::string>& argv, size_t limit) {
  ProcessResult r =
      run_process({.argv = argv, .time_limit = std::chrono::seconds(60), .output_limit = limit});
  if (!r.ok()) throw std::runtime_error(fmt::format("{}: {}: {}", argv[0], r.describe(), r.err));
  if (r.out_dropped > 0) return std::nullopt;
  return std::move(r.out);
}

Violation oversized(const std::string& listing, size_t limit) {
  return {"size", listing, 0,
          fmt::format("the compiled library's {} is over {:.1f} MiB, more than the static scan reads, so it "
                      "cannot be checked whole: make the library smaller",
                      listing, static_cast<double>(limit) / 1048576.0)};
}

// The library's dynamic symbols, without their versions: those it imports, or those it defines. readelf, not
// nm: nm loads every linker plugin the host has installed (LLVM's gold plugin is 100 MB of relocations), which
// made it 20 times slower and the static stage's largest cost.
std::optional<std::vector<std::string>> dynamic_symbols(const std::filesystem::path& library, bool defined,
                                                        size_t limit) {
  // "  5: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND dlopen@GLIBC_2.34 (3)": number, value, size,
  // type, binding, visibility (and any "[...]" flags after it), section index (UND: imported), name.
  static const std::regex entry(R"(^\s*\d+:\s+[0-9a-fA-F]+\s+\S+\s+\S+\s+\S+\s+\S+(?:\s+\[[^\]]*\])?\s+(\S+)\s+(\S+))");
  const auto listing = tool_output({"readelf", "--dyn-syms", "--wide", library.string()}, limit);
  if (!listing) return std::nullopt;
  std::vector<std::string> symbols;
  for (const auto& line : split_lines(*listing)) {
    std::smatch m;
    if (!std::regex_search(line, m, entry) || (m[1] == "UND") == defined) continue;
    std::string name = m[2];
    name = name.substr(0, name.find('@'));  // drop the version: "dlopen@GLIBC_2.34"
    if (!name.empty()) symbols.push_back(name);
  }
  return symbols;
}

// The edit distance of two names (insertions, deletions, substitutions), for a misspelling's hint.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<Violation> scan_library(const std::filesystem::path& library, size_t listing_limit) {
  const auto symbols = dynamic_symbols(library, false, listing_limit);
  if (!symbols) return {oversized("dynamic symbol table", listing_limit)};
  const auto dynamic_section = tool_output({"readelf", "-d", library.string()}, listing_limit);
  if (!dynamic_section) return {oversized("dynamic section", listing_limit)};
  std::vector<std::string> needed;
  static const std::regex needed_entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (const auto& line : split_lines(*dynamic_section)) {
    std::smatch m;
    if (std::regex_search(line, m, needed_entry)) needed.push_back(m[1]);
  }
  auto found = scan_imports(*symbols, needed);
  // A raw system call in host code needs no import at all.
  const auto host_code =
      tool_output({"objdump", "-d", "--no-show-raw-insn", library.string()}, listing_limit);
  if (!host_code) {
    found.push_back(oversized("host code disassembly", listing_limit));
    return found;
  }
  static const std::regex syscall_instruction(R"(\s(syscall|sysenter|int\s+\$0x80)\b)");
  for (const auto& line : split_lines(*host_code))
    if (std::regex_search(line, syscall_instruction)) {
      found.push_back(
          {"process", "syscall instruction", 0,
           "the compiled library contains a raw system call instruction: system calls are not allowed"});
      break;
    }
  return found;
}

std::vector<Violation> check_entry_points(const std::vector<std::string>& exported,
                                          const std::vector<std::string>& symbols) {
  std::vector<Violation> found;
  for (const std::string& symbol : symbols) {
    if (std::find(exported.begin(), exported.end(), symbol) != exported.end()) continue;
    // The Itanium mangling of a function of that name at namespace scope: _Z<length><name><parameters>.
    const std::string mangled = "_Z" + std::to_string(symbol.size()) + symbol;
    std::string hint;
    const std::string* nearest = nullptr;
    size_t distance = 0;
    for (const std::string& name : exported) {
      if (name.starts_with(mangled)) {
        hint = fmt::format(" It is defined with C++ linkage (as {}): declare it extern \"C\", as "
                           "<ptxbench/abi.h> does.",
                           name);
        break;
      }
      // Near: a few edits away, or the name shortened or lengthened (ptxbench_gemm for ptxbench_gemm_bf16).
      const bool affix = name.size() >= 8 && (symbol.starts_with(name) || name.starts_with(symbol));
      const size_t d = affix ? 0 : edit_distance(name, symbol);
      if ((affix || d <= std::max<size_t>(3, symbol.size() / 4)) && (nearest == nullptr || d < distance)) {
        nearest = &name;
        distance = d;
      }
    }
    if (hint.empty() && nearest != nullptr)
      hint = fmt::format(" It exports {}: a misspelling?", *nearest);
    found.push_back({kEntryPointRule, symbol, 0,
                     fmt::format("the library does not export {}, an entry point of this task (declared in "
                                 "<ptxbench/abi.h>; define it with extern \"C\"), so the runner cannot call it.{}",
                                 symbol, hint)});
  }
  return found;
}

std::vector<Violation> missing_entry_points(const std::filesystem::path& library,
                                            const std::vector<std::string>& symbols, size_t listing_limit) {
  const auto exported = dynamic_symbols(library, true, listing_limit);
  if (!exported) return {oversized("dynamic symbol table", listing_limit)};
  return check_entry_points(*exported, symbols);
}

nlohmann::json to_json(const Violation& v) {
  return {{"rule", v.rule}, {"evidence", v.evidence}, {"line", v.line}, {"message", v.message}};
}

}  // namespace ptxbench
