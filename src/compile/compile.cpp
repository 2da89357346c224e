#include "compile/compile.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>

#include "compile/cache.h"
#include "compile/diagnostics.h"
#include "arch/profile.h"
#include "util/files.h"
#include "util/hash.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxbench {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSourceName = "solution.cu";
// How host_failure's words begin, so that host_failure_cause finds them first in a compile's output.
constexpr std::string_view kHostStatePrefix = "the host: ";

// Bump when the compile flags or the cached layout change, so old cache entries are not reused.
constexpr int kCacheFormat = 2;

// -lcuda: a driver function that host code calls directly (cuTensorMapEncodeTiled, as many Hopper kernels'
// host code does) resolves through the library's own NEEDED libcuda.so.1, the same way in every stage. The
// link uses the toolkit's stub library, so the compiling host needs no driver; which driver functions a
// solution may import is the static scan's rule (forbidden.h).
std::vector<std::string> nvcc_flags(const ArchProfile& arch, const CompileOptions& options) {
  std::vector<std::string> flags = {"-gencode", arch.gencode, "-std=c++20", "-O3",     "-lineinfo",
                                    "-shared",  "-Xcompiler", "-fPIC",      "-cudart", "shared",
                                    "-lcuda",   "-Xptxas",    "-v"};
  for (const auto& dir : options.include_dirs) flags.push_back("-I" + dir.string());
  return flags;
}

// The content of every header a solution may include, so that a kit change invalidates the cache.
std::string include_dirs_digest(const std::vector<fs::path>& dirs) {
  std::string all;
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      all += f.lexically_relative(dir).string() + '\0' + sha256_hex(read_file(f)) + '\0';
  }
  return sha256_hex(all);
}

fs::path fresh_work_dir(const fs::path& cache_dir) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  fs::path dir = cache_dir / fmt::format("tmp-{}-{:016x}", getpid(), rng());
  fs::create_directories(dir / "keep");
  return dir;
}

// What a compile leaves in its cache folder besides the artifacts: what nvcc said and how it ended.
struct RawCompile {
  CompileResult::Status status = CompileResult::Status::toolchain_error;
  std::string output;  // nvcc's stdout + stderr, as valid UTF-8
  double wall_s = 0;
};

// How a finished nvcc ended. A failure is the source's (a compile error) unless the host's state shows it
// was the host's: nvcc not started or killed by a signal, or `host` (host_failure) saying why.
CompileResult::Status status_of(const ProcessResult& r, const std::string& host) {
  using Status = CompileResult::Status;
  if (r.spawn_failed) return Status::toolchain_error;
  if (r.timed_out) return Status::timeout;
  if (r.ok()) return Status::ok;
  if (!r.exited) return Status::toolchain_error;
  return host.empty() ? Status::compile_error : Status::toolchain_error;
}

// nvcc's command line in the compile's sandbox: the system, the toolkit (the folder above nvcc's bin), the
// include folders read-only, the compile's own folder writable; a memory and CPU limit; no network; a
// private /tmp; every process it starts ends with it (bwrap's pid namespace, --die-with-parent). nvcc is run
// by its real path: a link to it (/usr/local/cuda) may lie outside what the sandbox shows.
std::vector<std::string> sandboxed_nvcc(std::vector<std::string> command, const fs::path& work_dir,
                                        const CompileOptions& options) {
  SandboxPolicy policy{.writable = {work_dir}, .system_only = true};
  std::error_code ec;
  const fs::path nvcc = fs::canonical(options.nvcc, ec);
  if (!ec) command.front() = nvcc.string();
  const fs::path bin = (ec ? fs::absolute(options.nvcc) : nvcc).parent_path();
  policy.readable.push_back(bin.filename() == "bin" ? bin.parent_path() : bin);
  for (const fs::path& dir : options.include_dirs) policy.readable.push_back(fs::absolute(dir));
  policy.limits.address_bytes = options.memory_bytes;
  policy.limits.cpu_s = static_cast<uint64_t>(4 * options.time_limit_s) + 60;
  return sandboxed_command(options.sandbox, policy, command);
}

RawCompile run_nvcc(const std::string& source, const fs::path& work_dir,
                    const std::vector<std::string>& command, const CompileOptions& options) {
  if (std::string refused = refused_unconfined(options.sandbox, "nvcc is not run on the submission");
      !refused.empty())
    return {.output = std::move(refused)};
  write_file(work_dir / kSourceName, source);
  const HostReading before = read_host(work_dir);
  ProcessResult r =
      run_process({.argv = options.sandbox.requested ? sandboxed_nvcc(command, work_dir, options) : command,
                   .working_dir = work_dir.string(),
                   .time_limit = std::chrono::milliseconds(static_cast<long>(options.time_limit_s * 1000))});
  // bwrap exits with 128 + N when nvcc was killed by signal N; nvcc's own exit codes stay below that.
  if (options.sandbox.requested && r.exited && r.exit_code > 128 && r.exit_code <= 128 + 64) {
    r.exited = false;
    r.term_signal = r.exit_code - 128;
  }
  RawCompile raw;
  raw.wall_s = r.wall_s;
  // nvcc echoes the source's bytes (a string literal in a diagnostic's excerpt, an #error line), which need
  // not be UTF-8; the record and everything made from it are text.
  raw.output = valid_utf8(r.out + r.err);
  const std::string host = r.ok() ? "" : host_failure(before, read_host(work_dir), options.min_free_bytes);
  raw.status = status_of(r, host);
  if (!host.empty()) raw.output = host + "\n" + raw.output;
  if (r.spawn_failed)
    raw.output = r.describe();
  else if (!r.exited && !r.timed_out)
    raw.output += "\nnvcc " + r.describe();
  if (raw.status == CompileResult::Status::ok) {
    fs::rename(work_dir / "keep" / "solution.ptx", work_dir / "solution.ptx");
    fs::rename(work_dir / "keep" / "solution.cubin", work_dir / "solution.cubin");
  }
  fs::remove_all(work_dir / "keep");
  return raw;
}

CompileResult::Status status_from_string(const std::string& text) {
  for (auto s : {CompileResult::Status::ok, CompileResult::Status::compile_error,
                 CompileResult::Status::timeout, CompileResult::Status::toolchain_error})
    if (to_string(s) == text) return s;
  return CompileResult::Status::toolchain_error;
}

// A cache entry's record, when the entry can serve: its record reads, and a successful compile's artifacts
// are all there.
std::optional<RawCompile> read_cache_entry(const fs::path& entry) {
  try {
    const json doc = json::parse(read_file(entry / "compile.json"));
    RawCompile raw{status_from_string(doc.at("status")), doc.at("output"), doc.at("wall_s")};
    if (raw.status == CompileResult::Status::ok)
      for (const char* artifact : {"solution.so", "solution.ptx", "solution.cubin"})
        if (!fs::is_regular_file(entry / artifact)) return std::nullopt;
    return raw;
  } catch (const std::exception&) {
    return std::nullopt;  // no record, or a damaged one
  }
}

}  // namespace

std::string to_string(CompileResult::Status status) {
  switch (status) {
    case CompileResult::Status::ok:
      return "ok";
    case CompileResult::Status::compile_error:
      return "compile_error";
    case CompileResult::Status::timeout:
      return "timeout";
    case CompileResult::Status::toolchain_error:
      return "toolchain_error";
  }
  return "toolchain_error";
}

std::string nvcc_version(const fs::path& nvcc) {
  static std::mutex mutex;
  static std::map<fs::path, std::string> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(nvcc); it != known.end()) return it->second;
  ProcessResult r =
      run_process({.argv = {nvcc.string(), "--version"}, .time_limit = std::chrono::seconds(30)});
  static const std::regex release(R"(, V(\d+\.\d+\.\d+))");
  std::smatch m;
  std::string version = r.ok() && std::regex_search(r.out, m, release) ? m[1].str() : "";
  if (!version.empty()) known[nvcc] = version;  // a failure may pass (a process limit): ask again next time
  return version;
}

HostReading read_host(const fs::path& folder) {
  HostReading reading;
  struct statvfs disk {};
  if (statvfs(folder.c_str(), &disk) == 0) reading.free_bytes = uint64_t{disk.f_bavail} * disk.f_frsize;
  std::ifstream vmstat("/proc/vmstat");
  for (std::string name; vmstat >> name;) {
    uint64_t value = 0;
    if (!(vmstat >> value)) break;
    if (name == "oom_kill") reading.oom_kills = value;
  }
  return reading;
}

std::string host_failure(const HostReading& before, const HostReading& after, uint64_t min_free_bytes) {
  if (after.free_bytes < min_free_bytes)
    return fmt::format("{}the compile folder's file system has {:.1f} MB free (at least {:.0f} MB wanted)",
                       kHostStatePrefix, static_cast<double>(after.free_bytes) / 1e6,
                       static_cast<double>(min_free_bytes) / 1e6);
  if (after.oom_kills > before.oom_kills)
    return fmt::format("{}the kernel's out-of-memory killer ended {} process(es) during the compile",
                       kHostStatePrefix, after.oom_kills - before.oom_kills);
  return "";
}

namespace {

constexpr const char* kHostFailure = "the compile failed on this host, not on the source; nothing was cached";

// The line that says why the host failed a compile (the verdict's summary shows it): host_failure's, which
// run_nvcc puts first; else the line of nvcc's output that names a host trouble (host_failure_line: words
// only, which decide nothing); else nvcc's last (how it was killed).
std::string host_failure_cause(const std::string& output) {
  if (output.starts_with(kHostStatePrefix)) return output.substr(0, output.find('\n'));
  if (std::string line = host_failure_line(output, kSourceName); !line.empty()) return line;
  const std::string trimmed = output.substr(0, output.find_last_not_of('\n') + 1);
  return trimmed.substr(trimmed.rfind('\n') + 1);
}

// Whether an outcome is the source's own and so may be served again: timeouts and host failures are not.
bool belongs_to_source(CompileResult::Status status) {
  return status == CompileResult::Status::ok || status == CompileResult::Status::compile_error;
}

// Compiles in a fresh work folder and publishes it as the cache entry `entry` when the outcome belongs to the
// source, with one rename, so that a reader never sees half an entry. An entry, once published, is never
// replaced (another thread or process may be reading it): when a twin compile got there first, its artifacts
// are used and ours are dropped; they are the same compile of the same source.
RawCompile compile_into(const fs::path& entry, const std::string& source,
                        const std::vector<std::string>& command, const CompileOptions& options) {
  const fs::path work_dir = fresh_work_dir(options.cache_dir);
  const struct Removed {
    const fs::path& dir;
    ~Removed() {
      std::error_code ec;
      fs::remove_all(dir, ec);  // left only when not published, or when our own write failed
    }
  } removed{work_dir};
  const RawCompile raw = run_nvcc(source, work_dir, command, options);
  if (!belongs_to_source(raw.status)) return raw;
  write_file(
      work_dir / "compile.json",
      json_text(json{{"status", to_string(raw.status)}, {"output", raw.output}, {"wall_s", raw.wall_s}}, 1));
  std::error_code ec;
  fs::rename(work_dir, entry, ec);
  if (ec) mark_cache_entry_used(entry);  // the twin's entry serves this evaluation too
  return raw;
}

CompileResult compile_for(const std::string& source, const Task& task, const ArchProfile& arch,
                          const CompileOptions& options) {
  CompileResult result;
  result.nvcc_version = nvcc_version(options.nvcc);
  if (result.nvcc_version.empty()) {
    result.diagnostics = fmt::format("nvcc not found or not working at {}", options.nvcc.string());
    return result;
  }
  const auto flags = nvcc_flags(arch, options);
  result.command = {options.nvcc.string()};
  result.command.insert(result.command.end(), flags.begin(), flags.end());
  result.command.insert(result.command.end(),
                        {"-keep", "-keep-dir", "keep", "-o", "solution.so", kSourceName});

  // The key covers everything the artifacts depend on. Task fields other than the architecture only matter to
  // the checks below, which are cheap and run again on every hit.
  std::string key_material = fmt::format("format {}\nnvcc {}\n", kCacheFormat, result.nvcc_version);
  for (const auto& flag : flags)
    key_material += flag.starts_with("-I") ? "" : flag + "\n";  // include dirs: by content, not path
  key_material += "headers " + include_dirs_digest(options.include_dirs) + "\nsource\n" + source;
  result.cache_key = sha256_hex(key_material);
  const fs::path entry = options.cache_dir / result.cache_key;

  std::optional<RawCompile> cached = options.use_cache ? read_cache_entry(entry) : std::nullopt;
  // An entry that cannot serve (half deleted, damaged) is replaced rather than trusted.
  if (options.use_cache && !cached && fs::exists(entry)) discard_cache_entry(entry);
  RawCompile raw;
  if (cached) {
    raw = *cached;
    result.cached = true;
    mark_cache_entry_used(entry);
  } else if (!options.use_cache) {
    raw = compile_into(entry, source, result.command, options);
  } else {
    // One compile of a key at a time, across processes that share the cache: a twin that waited finds the
    // entry published, and uses it. The lock file goes before the lock: one who opens it afterwards locks a
    // new file, and finds the entry first too (only after a compile that published nothing may two run).
    std::error_code ec;
    fs::create_directories(options.cache_dir, ec);  // a failure shows in the compile's own writes
    const fs::path lock_file = options.cache_dir / (kCompileLockPrefix + result.cache_key);
    const FileLock lock(lock_file);
    if (lock.held() && (cached = read_cache_entry(entry))) {
      raw = *cached;
      result.cached = true;
      mark_cache_entry_used(entry);
    } else {
      raw = compile_into(entry, source, result.command, options);
    }
    if (lock.held()) fs::remove(lock_file, ec);
  }
  const fs::path& artifacts = entry;

  result.status = raw.status;
  result.wall_s = raw.wall_s;
  const PtxasReport ptxas = parse_ptxas_report(raw.output);
  result.kernels = ptxas.kernels;
  result.ptxas_warnings = ptxas.warnings;
  const auto trimmed = trim_diagnostics(raw.output, "", 8, 4000, options.display_root.string());
  result.diagnostics = trimmed.text;
  result.error_count = trimmed.errors;
  if (raw.status == CompileResult::Status::timeout)
    result.diagnostics =
        fmt::format("nvcc did not finish within {:.0f} s\n", options.time_limit_s) + result.diagnostics;
  if (raw.status == CompileResult::Status::toolchain_error)
    result.diagnostics =
        fmt::format("{}: {}\n{}", kHostFailure, host_failure_cause(raw.output), result.diagnostics);

  if (result.ok()) {
    result.library = artifacts / "solution.so";
    result.ptx = artifacts / "solution.ptx";
    result.cubin = artifacts / "solution.cubin";
    result.inventory = take_inventory(read_file(result.ptx), task);
  }
  return result;
}

}  // namespace

fs::path keep_source(const std::string& source, const std::string& name, const CompileOptions& options) {
  if (options.cache_dir.empty()) throw std::runtime_error("no compile cache folder to keep the source in");
  const fs::path entry = options.cache_dir / sha256_hex(fmt::format("kept source\n{}\n{}", name, source));
  if (fs::is_regular_file(entry / name) && read_file(entry / name) == source) {
    mark_cache_entry_used(entry);
    return entry / name;
  }
  if (fs::exists(entry)) discard_cache_entry(entry);
  // Published with one rename, as a compile's entry; compile.json makes it one to the cache's upkeep.
  const fs::path work_dir = fresh_work_dir(options.cache_dir);
  write_file(work_dir / name, source);
  write_file(work_dir / "compile.json",
             json_text(json{{"status", "ok"}, {"output", ""}, {"wall_s", 0}, {"kept_source", true}}, 1));
  std::error_code ec;
  fs::rename(work_dir, entry, ec);
  if (ec) {
    fs::remove_all(work_dir, ec);
    if (!fs::is_regular_file(entry / name))
      throw std::runtime_error("cannot keep the source in " + entry.string());
  }
  return entry / name;
}

CompileResult compile_with_nvcc(const std::string& source, const Task& task, const CompileOptions& options) {
  const ArchProfile* arch = find_arch(task.arch);
  if (!arch) throw std::runtime_error("unknown architecture " + task.arch);
  try {
    const auto started = std::chrono::steady_clock::now();
    CompileResult result = compile_for(source, task, *arch, options);
    if (result.cached) {
      result.compiled_s = result.wall_s;
      result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
    return result;
  } catch (const std::exception& e) {
    // Our own reads and writes failed (a cache folder we cannot write, a full disk as std::filesystem reports
    // it, an unreadable kit): that says nothing about the source.
    CompileResult result;
    result.diagnostics = fmt::format("{}: {}", kHostFailure, valid_utf8(e.what()));
    return result;
  }
}

json to_json(const CompileResult& r) {
  json violations = json::array();
  for (const auto& v : r.violations) violations.push_back(to_json(v));
  json doc = {{"status", to_string(r.status)}, {"cached", r.cached},           {"cache_key", r.cache_key},
              {"command", r.command},          {"diagnostics", r.diagnostics}, {"error_count", r.error_count},
              {"violations", violations}};
  if (r.cached) doc["compiled_s"] = r.compiled_s;
  if (!r.compiles_kernels) {
    doc["python_version"] = r.python_version;
    return doc;
  }
  json kernels = json::array();
  for (const auto& k : r.kernels) kernels.push_back(to_json(k));
  doc["nvcc_version"] = r.nvcc_version;
  doc["ptxas_warnings"] = r.ptxas_warnings;
  doc["kernels"] = kernels;
  doc["ptx_inventory"] = r.ok() ? to_json(r.inventory) : json(nullptr);  // none taken of a failed compile
  return doc;
}

}  // namespace ptxbench
