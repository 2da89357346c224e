#include "eval/python_bytecode.h"

#include <map>
#include <mutex>

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

fs::path warm(const std::string& python, const fs::path& root) {
  const ProcessResult versions =
      run_process({.argv = {python, "-I", "-c", kVersions}, .time_limit = std::chrono::seconds(30)});
  if (!versions.ok()) return {};
  std::error_code ec;
  const fs::path real = fs::canonical(python, ec);
  const std::string key = sha256_hex((ec ? python : real.string()) + "\n" + versions.out).substr(0, 24);
  const fs::path folder = root / key;
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
  write_file(folder / kComplete, versions.out);
  return folder;
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

}  // namespace ptxbench
