#include "eval/sandbox.h"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <sstream>

#include "util/files.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxbench {
namespace fs = std::filesystem;

std::string find_program(const std::string& name, const std::string& search_path) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  std::istringstream path(search_path.empty() ? "/usr/bin:/bin" : search_path);
  for (std::string dir; std::getline(path, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate))
      return fs::absolute(candidate);
  }
  return "";
}

namespace {

// The namespace and mount options, without the command. Hidden folders come before the binds, parents before
// children, so that a bind inside a hidden folder lands on its tmpfs (bwrap creates the mount points).
std::vector<std::string> bwrap_options(const SandboxStatus& status, const SandboxPolicy& policy) {
  std::vector<std::string> args;
  if (policy.keep_admin_capability) {
    // No user namespace: the driver checks CAP_SYS_ADMIN in the initial one.
    args = {"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"};
  } else {
    args = {"--unshare-all"};  // user (where possible), ipc, pid, net, uts, cgroup
  }
  args.insert(args.end(), {"--die-with-parent", "--new-session"});
  std::error_code ec;
  if (policy.system_only) {
    // The system's programs and libraries as they are laid out here (folders, or links into /usr).
    for (const char* dir : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
      const fs::file_status kind = fs::symlink_status(dir, ec);
      if (fs::is_symlink(kind))
        args.insert(args.end(), {"--symlink", fs::read_symlink(dir, ec).string(), dir});
      else if (fs::is_directory(kind))
        args.insert(args.end(), {"--ro-bind", dir, dir});
    }
    for (const char* file : {"/etc/ld.so.cache", "/etc/alternatives"})
      if (fs::exists(file, ec)) args.insert(args.end(), {"--ro-bind", file, file});
    args.insert(args.end(), {"--dev-bind", "/dev/null", "/dev/null"});
  } else {
    args.insert(args.end(), {"--ro-bind", "/", "/", "--dev", "/dev"});
    // The GPU: every /dev/nvidia* node (nvidiactl, nvidia0.., nvidia-uvm, nvidia-uvm-tools, nvidia-caps/).
    std::vector<std::string> gpu_nodes;
    for (const auto& entry : fs::directory_iterator("/dev", ec))
      if (entry.path().filename().string().starts_with("nvidia")) gpu_nodes.push_back(entry.path());
    std::sort(gpu_nodes.begin(), gpu_nodes.end());
    for (const auto& node : gpu_nodes) args.insert(args.end(), {"--dev-bind", node, node});
  }
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
  std::map<std::string, std::string> environment = status.environment;
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
  if (limits.address_bytes) args.push_back(fmt::format("--as={}", limits.address_bytes));
  if (status.process_limit && limits.processes) args.push_back(fmt::format("--nproc={}", limits.processes));
  args.push_back("--");
  return args;
}

}  // namespace

std::string refused_unconfined(const SandboxStatus& status, const std::string& what) {
  if (!status.requested || status.available) return "";
  return "the sandbox is not available, so " + what + ": " + status.reason +
         ". Fix that, or set PTXBENCH_SANDBOX=off for trusted code.";
}

nlohmann::json SandboxStatus::to_json() const {
  return {{"requested", requested},           {"enabled", requested && available}, {"bwrap", bwrap},
          {"user_namespace", user_namespace}, {"process_limit", process_limit},    {"note", reason}};
}

std::map<std::string, std::string> sandbox_environment(const SandboxSettings& settings) {
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", "/tmp"},
      {"TMPDIR", "/tmp"},
      {"LANG", "C"}};
  for (const char* name : kSandboxInherited)
    if (const auto it = settings.inherited.find(name); it != settings.inherited.end() && !it->second.empty())
      env[name] = it->second;
  return env;
}

std::vector<fs::path> default_hidden_paths(const SandboxStatus& status) {
  std::vector<fs::path> paths = {"/root", "/home", "/run", "/mnt", "/media", "/srv"};
  if (!status.home.empty() && status.home != "/") paths.push_back(status.home);
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

SandboxStatus probe_sandbox(const SandboxSettings& settings) {
  SandboxStatus status;
  status.reason.clear();
  status.environment = sandbox_environment(settings);
  status.home = settings.home;
  status.bwrap = find_program(settings.bwrap, settings.search_path);
  status.prlimit = find_program("prlimit", settings.search_path);
  if (const std::string env = find_program("env", settings.search_path); !env.empty()) status.env = env;
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
  const SandboxPolicy probe_policy{.hidden = default_hidden_paths(status)};
  const ProcessResult probe =
      run_process({.argv = sandboxed_command(status, probe_policy, {"/bin/cat", "/proc/self/uid_map"}),
                   .time_limit = std::chrono::seconds(20)});
  if (!probe.ok()) {
    status.available = false;
    // One line: the reason ends messages that are read by their last line (a host failure's cause).
    status.reason = fmt::format("bwrap cannot create the sandbox here ({}): {}", probe.describe(),
                                fmt::join(split_lines(utf8_head(probe.err, 400)), " "));
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

SandboxStatus resolve_sandbox(const SandboxSettings& settings) {
  if (settings.enabled) return probe_sandbox(settings);
  SandboxStatus off;
  off.requested = false;
  off.environment = sandbox_environment(settings);
  off.home = settings.home;
  off.reason = "PTXBENCH_SANDBOX=off: solutions run without the sandbox (trusted code only)";
  return off;
}

std::vector<std::string> sandboxed_command(const SandboxStatus& status, const SandboxPolicy& policy,
                                           const std::vector<std::string>& command) {
  // env -i: bwrap itself starts with an empty environment, so that not even the sandbox's pid 1 (bwrap's own
  // init, readable as /proc/1/environ inside) carries the caller's keys.
  std::vector<std::string> argv = {status.env, "-i", status.bwrap};
  for (auto& option : bwrap_options(status, policy)) argv.push_back(std::move(option));
  argv.push_back("--");
  for (auto& option : prlimit_options(status, policy.limits)) argv.push_back(std::move(option));
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace ptxbench
