#include "eval/python_bytecode.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "util/files.h"
#include "util/hash.h"
#include "util/subprocess.h"

namespace ptxbench {
namespace fs = std::filesystem;

namespace {

// What the bytecode depends on: the interpreter's version and the packages' (one line each).
constexpr const char* kVersions = R"(import importlib.metadata as m, sys
print(sys.version)
for name in ("numpy", "torch", "triton"):
    try:
        print(name, m.version(name))
    except m.PackageNotFoundError:
        print(name, "absent")
)";

// Writes the bytecode of what the judge's Python processes import. -I: nothing of the caller's environment or
// user site applies. In one process: with compileall's worker processes, 110 files appeared beside Triton's
// sources on the H100 host (bench/harness/h200-2026-12-05e), not under the prefix.
constexpr const char* kWarm = R"(import compileall, importlib, os
for name in ("numpy", "torch", "torch.cuda", "triton", "triton.language"):
    try:
        module = importlib.import_module(name)
    except Exception:
        continue
    if name == "triton":
        compileall.compile_dir(os.path.dirname(module.__file__), quiet=2, workers=1)
)";

constexpr const char* kComplete = "complete";

struct Versions {
  std::string text;  // kVersions' output
  std::string key;   // the folder's name: of the interpreter's real path and `text`
};

// `python`'s versions, or nothing when it cannot run.
std::optional<Versions> versions_of(const std::string& python) {
  const ProcessResult versions =
      run_process({.argv = {python, "-I", "-c", kVersions}, .time_limit = std::chrono::seconds(30)});
  if (!versions.ok()) return std::nullopt;
  std::error_code ec;
  const fs::path real = fs::canonical(python, ec);
  return Versions{versions.out,
                  sha256_hex((ec ? python : real.string()) + "\n" + versions.out).substr(0, 24)};
}

fs::path warm(const std::string& python, const fs::path& root) {
  const std::optional<Versions> versions = versions_of(python);
  if (!versions) return {};
  const std::string& key = versions->key;
  const fs::path folder = root / key;
  std::error_code ec;
  if (fs::exists(folder / kComplete, ec)) return folder;
  fs::create_directories(folder, ec);
  if (ec) return {};
  // One process warms a folder; another that asks meanwhile waits and finds it complete.
  const FileLock lock(root / ("lock-" + key));
  if (fs::exists(folder / kComplete, ec)) return folder;
  const ProcessResult warmed =
      run_process({.argv = {python, "-I", "-X", "pycache_prefix=" + folder.string(), "-c", kWarm},
                   .time_limit = std::chrono::minutes(5)});
  if (!warmed.ok()) return {};
  write_file(folder / kComplete, versions->text);
  return folder;
}

std::uintmax_t folder_bytes(const fs::path& folder) {
  std::uintmax_t bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  return bytes;
}

}  // namespace

fs::path python_bytecode(const std::string& python, const fs::path& root) {
  if (root.empty() || python.empty()) return {};
  static std::mutex mutex;
  static std::map<std::pair<std::string, fs::path>, fs::path> warmed;
  const std::lock_guard<std::mutex> hold(mutex);
  const auto key = std::make_pair(python, root);
  if (const auto it = warmed.find(key); it != warmed.end()) return it->second;
  fs::path folder;
  try {
    folder = warm(python, root);
  } catch (const std::exception&) {
    // A folder that cannot be written: the processes start as they would without it.
  }
  return warmed[key] = folder;
}

std::vector<BytecodeFolder> bytecode_folders(const fs::path& root, const std::string& python) {
  std::vector<std::pair<fs::file_time_type, BytecodeFolder>> found;
  const std::optional<Versions> versions = python.empty() ? std::nullopt : versions_of(python);
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    BytecodeFolder folder{.path = it->path(), .bytes = folder_bytes(it->path())};
    if (fs::exists(it->path() / kComplete, ec)) folder.versions = read_file(it->path() / kComplete);
    folder.current = versions && it->path().filename() == versions->key;
    found.emplace_back(fs::last_write_time(it->path(), ec), std::move(folder));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<BytecodeFolder> folders;
  for (auto& [time, folder] : found) folders.push_back(std::move(folder));
  return folders;
}

std::vector<BytecodeFolder> prune_bytecode(const fs::path& root, std::vector<BytecodeFolder>& folders) {
  std::vector<BytecodeFolder> removed, kept;
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (BytecodeFolder& folder : folders) {
    std::error_code ec;
    if (!folder.current && !(folder.versions.empty() && fs::last_write_time(folder.path, ec) > hour_ago)) {
      fs::remove_all(folder.path, ec);
      if (!ec) {
        fs::remove(root / ("lock-" + folder.path.filename().string()), ec);
        removed.push_back(std::move(folder));
        continue;
      }
    }
    kept.push_back(std::move(folder));
  }
  folders = std::move(kept);
  return removed;
}

}  // namespace ptxbench
