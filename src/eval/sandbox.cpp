#include "eval/sandbox.h"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "util/files.h"
#include "util/subprocess.h"

namespace ptxbench {
namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// An executable by name on PATH (or as given when it has a slash); empty when there is none.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  std::istringstream path(env_or("PATH", "/usr/bin:/bin"));
  for (std::string dir; std::getline(path, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate))
      return fs::absolute(candidate);
  }
  return "";
}

// The namespace and mount options, without the command. Hidden folders come before the binds, parents before
// children, so that a bind inside a hidden folder lands on its tmpfs (bwrap creates the mount points).
std::vector<std::string> bwrap_options(const SandboxPolicy& policy) {
  std::vector<std::string> args;
  if (policy.keep_admin_capability) {
    // No user namespace: the driver checks CAP_SYS_ADMIN in the initial one.
    args = {"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"};
  } else {
    args = {"--unshare-all"};  // user (where possible), ipc, pid, net, uts, cgroup
  }
  for (const char* option : {"--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev"})
    args.push_back(option);
  // The GPU: every /dev/nvidia* node (nvidiactl, nvidia0.., nvidia-uvm, nvidia-uvm-tools, nvidia-caps/).
  std::error_code ec;
  std::vector<std::string> gpu_nodes;
  for (const auto& entry : fs::directory_iterator("/dev", ec))
    if (entry.path().filename().string().starts_with("nvidia")) gpu_nodes.push_back(entry.path());
  std::sort(gpu_nodes.begin(), gpu_nodes.end());
  for (const auto& node : gpu_nodes) args.insert(args.end(), {"--dev-bind", node, node});
  args.insert(args.end(), {"--proc", "/proc", "--tmpfs", "/tmp"});

  // Hidden folders (an empty tmpfs over them) and the binds are applied parents before children, whatever
  // their kind: a folder hidden inside a readable one stays hidden, and a file made readable inside a hidden
  // folder is seen on its tmpfs (bwrap creates the mount points). On the same path, the bind comes last and
  // wins.
  enum Kind { hide = 0, read_only = 1, read_write = 2 };
  std::vector<std::pair<fs::path, Kind>> mounts;
  auto add = [&](const std::vector<fs::path>& paths, Kind kind) {
    for (const auto& p : paths)
      if (fs::exists(p, ec) && !(kind == hide && (p == "/" || p == "/tmp")))
        mounts.emplace_back(fs::weakly_canonical(p, ec), kind);
  };
  add(policy.hidden, hide);
  add(policy.readable, read_only);
  add(policy.writable, read_write);
  auto depth = [](const fs::path& p) { return std::distance(p.begin(), p.end()); };
  std::stable_sort(mounts.begin(), mounts.end(), [&](const auto& a, const auto& b) {
    return depth(a.first) != depth(b.first) ? depth(a.first) < depth(b.first) : a.second < b.second;
  });
  mounts.erase(std::unique(mounts.begin(), mounts.end()), mounts.end());
  for (const auto& [path, kind] : mounts) {
    const char* option = kind == hide ? "--tmpfs" : kind == read_only ? "--ro-bind" : "--bind";
    args.push_back(option);
    if (kind != hide) args.push_back(path.string());
    args.push_back(path.string());
  }
  args.insert(args.end(), {"--chdir", policy.writable.empty() ? "/tmp" : policy.writable.front().string()});

  args.push_back("--clearenv");
  std::map<std::string, std::string> environment = sandbox_environment();
  for (const auto& [name, value] : policy.environment) environment[name] = value;
  for (const auto& [name, value] : environment) args.insert(args.end(), {"--setenv", name, value});
  args.insert(args.end(), {"--cap-drop", "ALL"});
  if (policy.keep_admin_capability) args.insert(args.end(), {"--cap-add", "CAP_SYS_ADMIN"});
  return args;
}

std::vector<std::string> prlimit_options(const SandboxStatus& status, const SandboxLimits& limits) {
  std::vector<std::string> args = {status.prlimit, "--core=0", fmt::format("--fsize={}", limits.file_bytes)};
  if (limits.cpu_s) args.push_back(fmt::format("--cpu={}", limits.cpu_s));
  if (limits.data_bytes) args.push_back(fmt::format("--data={}", limits.data_bytes));
  if (status.process_limit && limits.processes) args.push_back(fmt::format("--nproc={}", limits.processes));
  args.push_back("--");
  return args;
}

}  // namespace

nlohmann::json SandboxStatus::to_json() const {
  return {{"requested", requested},           {"enabled", requested && available}, {"bwrap", bwrap},
          {"user_namespace", user_namespace}, {"process_limit", process_limit},    {"note", reason}};
}

std::map<std::string, std::string> sandbox_environment() {
  std::map<std::string, std::string> env = {
      {"PATH", env_or("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")},
      {"HOME", "/tmp"},
      {"TMPDIR", "/tmp"},
      {"LANG", "C"}};
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME"})
    if (const std::string value = env_or(name); !value.empty()) env[name] = value;
  return env;
}

std::vector<fs::path> default_hidden_paths() {
  std::vector<fs::path> paths = {"/root", "/home", "/run", "/mnt", "/media", "/srv"};
  if (const std::string home = env_or("HOME"); !home.empty() && home != "/") paths.emplace_back(home);
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status("/var/run", ec))) paths.emplace_back("/var/run");
  return paths;
}

bool profiling_needs_admin() {
  std::error_code ec;
  if (!fs::exists("/proc/driver/nvidia/params", ec)) return false;
  try {
    return read_file("/proc/driver/nvidia/params").find("RmProfilingAdminOnly: 1") != std::string::npos;
  } catch (const std::exception&) {
    return false;
  }
}

SandboxStatus probe_sandbox(const std::string& bwrap_override) {
  SandboxStatus status;
  status.bwrap = find_program(bwrap_override.empty() ? env_or("PTXBENCH_BWRAP", "bwrap") : bwrap_override);
  status.prlimit = find_program("prlimit");
  if (status.bwrap.empty()) {
    status.reason = "bubblewrap (bwrap) is not installed or not on PATH (Debian package: bubblewrap)";
    return status;
  }
  if (status.prlimit.empty()) {
    status.reason = "prlimit (util-linux) is not on PATH: the sandbox cannot set resource limits";
    return status;
  }
  // The probe runs the same namespaces and mounts the evaluations use, and reports the user mapping.
  status.available = true;
  const SandboxPolicy probe_policy{.hidden = default_hidden_paths()};
  const ProcessResult probe =
      run_process({.argv = sandboxed_command(status, probe_policy, {"/bin/cat", "/proc/self/uid_map"}),
                   .time_limit = std::chrono::seconds(20)});
  if (!probe.ok()) {
    status.available = false;
    status.reason = fmt::format("bwrap cannot create the sandbox here ({}): {}", probe.describe(),
                                probe.err.substr(0, 400));
    return status;
  }
  // "0 0 4294967295": the initial user namespace; anything else: a new one.
  status.user_namespace = probe.out.find("4294967295") == std::string::npos;
  status.process_limit = status.user_namespace && geteuid() != 0;
  if (!status.process_limit)
    status.reason = geteuid() == 0
                        ? "running as root: RLIMIT_NPROC does not apply to uid 0 (processes are "
                          "contained by the pid namespace and the stage time limit)"
                        : "no user namespace: RLIMIT_NPROC would count all of this user's processes "
                          "and is not set";
  return status;
}

const SandboxStatus& sandbox_status() {
  static const SandboxStatus status = [] {
    const std::string setting = env_or("PTXBENCH_SANDBOX");
    if (setting == "off" || setting == "0" || setting == "no") {
      SandboxStatus off;
      off.requested = false;
      off.reason = "PTXBENCH_SANDBOX=off: solutions run without the sandbox (trusted code only)";
      return off;
    }
    return probe_sandbox();
  }();
  return status;
}

std::vector<std::string> sandboxed_command(const SandboxStatus& status, const SandboxPolicy& policy,
                                           const std::vector<std::string>& command) {
  // env -i: bwrap itself starts with an empty environment, so that not even the sandbox's pid 1 (bwrap's own
  // init, readable as /proc/1/environ inside) carries the caller's keys.
  std::vector<std::string> argv = {find_program("env").empty() ? "/usr/bin/env" : find_program("env"), "-i",
                                   status.bwrap};
  for (auto& option : bwrap_options(policy)) argv.push_back(std::move(option));
  argv.push_back("--");
  for (auto& option : prlimit_options(status, policy.limits)) argv.push_back(std::move(option));
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace ptxbench
