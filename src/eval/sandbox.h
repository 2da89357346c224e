// The sandbox every process that runs solution code starts in: bubblewrap (bwrap) with new user, pid,
// network, ipc and uts namespaces, a read-only view of the file system with the harness's data (store,
// compile cache, other submissions), the home folders and /run hidden under empty tmpfs mounts, a private
// /tmp, a writable scratch folder of its own, the GPU device nodes, an allow-listed environment (no keys),
// and resource limits (prlimit: no core files, file size, CPU time, data segment, processes).
// docs/anti-cheat.md says what this stops and what it does not.
//
// A front end resolves it once (resolve_sandbox, from SandboxSettings) and hands the result down in GpuTools;
// nothing here reads the environment. Disabled (PTXBENCH_SANDBOX=off), solutions run without it (trusted code
// only); the verdict records that. When bwrap is missing or cannot create namespaces, the GPU stages are a
// harness_error: ptxbench does not silently run untrusted code unconfined.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptxbench {

struct SandboxLimits {
  uint64_t file_bytes = uint64_t{1} << 30;  // RLIMIT_FSIZE: largest file the sandbox may write
  uint64_t data_bytes = 0;     // RLIMIT_DATA (0: none); RLIMIT_AS would break CUDA's reservations
  uint64_t processes = 1024;   // RLIMIT_NPROC (threads count): only where it applies, see status
  uint64_t cpu_s = 0;          // RLIMIT_CPU (0: none); the parent's wall-clock limit is the main one
  uint64_t address_bytes = 0;  // RLIMIT_AS (0: none): for programs without CUDA's large reservations
};

// What one sandboxed command may see beyond the read-only system.
struct SandboxPolicy {
  std::vector<std::filesystem::path> hidden;    // replaced by empty tmpfs mounts (before the binds below)
  std::vector<std::filesystem::path> readable;  // bound read-only (e.g. the solution library inside `hidden`)
  std::vector<std::filesystem::path> writable;  // bound read-write; the first is the working directory
  SandboxLimits limits;
  // Keeps CAP_SYS_ADMIN and the initial user namespace: what Nsight Compute needs where the driver restricts
  // profiling to administrators (RmProfilingAdminOnly=1). Weaker: such a process could undo its mounts.
  bool keep_admin_capability = false;
  // Set over the status's environment (CUDA_VISIBLE_DEVICES: the GPU an evaluation was given).
  std::map<std::string, std::string> environment;
  // The file system is not bound whole: only the system's programs and libraries (/usr and the /bin, /sbin
  // and /lib folders or links, /etc/ld.so.cache, /etc/alternatives), `readable` and `writable`; of /dev only
  // /dev/null. What the compile runs in: a file outside these is not there to be included.
  bool system_only = false;
};

// What the host says about the sandbox, read once by a front end (eval/settings.h).
struct SandboxSettings {
  bool enabled = true;          // false: PTXBENCH_SANDBOX=off
  std::string bwrap = "bwrap";  // a name on `search_path`, or a path ($PTXBENCH_BWRAP)
  std::string search_path;      // where bwrap, prlimit and env are looked up ($PATH; empty: /usr/bin:/bin)
  std::filesystem::path home;   // the user's home folder, hidden ($HOME)
  // What a sandboxed process may inherit of the caller's environment: PATH, LD_LIBRARY_PATH,
  // CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, CUDA_HOME, where set (sandbox_environment adds the rest).
  std::map<std::string, std::string> inherited;
};

// The sandbox as resolved once: whether it is wanted and works, the tools it runs, the environment it gives.
// A default-constructed one is not available, so GPU stages handed no resolved sandbox do not run.
struct SandboxStatus {
  bool requested = true;             // false: disabled in the settings
  bool available = false;            // bwrap and prlimit found and a namespace probe succeeded
  bool user_namespace = false;       // the probe ran in a new user namespace
  bool process_limit = false;        // RLIMIT_NPROC applies (a new user namespace and not uid 0 outside it)
  std::string bwrap;                 // absolute path
  std::string prlimit;               // absolute path
  std::string env = "/usr/bin/env";  // absolute path
  std::map<std::string, std::string> environment;       // sandbox_environment(settings)
  std::filesystem::path home;                           // hidden with the other default_hidden_paths
  std::string reason = "the sandbox was not resolved";  // why it is not available / what is weaker, in words
  nlohmann::json to_json() const;
};

// Disabled in the settings: a status that says so; else the probe of bwrap. A front end calls it once (the
// probe starts a process) and passes the result to every evaluation.
SandboxStatus resolve_sandbox(const SandboxSettings& settings);
// The probe itself, whatever the settings say about enabling it (tests).
SandboxStatus probe_sandbox(const SandboxSettings& settings);

// Untrusted code never runs unconfined unless someone said so: why `what` (its subject says what is not run,
// "nvcc is not run on the submission") does not happen when the sandbox was asked for and is not available;
// "" when it may run (the host's failure, in words, for the stage to report).
std::string refused_unconfined(const SandboxStatus& status, const std::string& what);

// The argv that runs `command` inside the sandbox: env -i bwrap <policy> -- prlimit <limits> -- command.
// `command[0]` must be an absolute path or a name on the sandbox's PATH.
std::vector<std::string> sandboxed_command(const SandboxStatus& status, const SandboxPolicy& policy,
                                           const std::vector<std::string>& command);

// Folders every sandbox hides: the user's home, /root, /home, /run (sockets of system daemons, secrets),
// /var/run when it is a folder of its own, and /mnt, /media, /srv.
// An executable by name on `search_path` (or as given when it has a slash); empty when there is none.
std::string find_program(const std::string& name, const std::string& search_path);

std::vector<std::filesystem::path> default_hidden_paths(const SandboxStatus& status);

// The environment a sandboxed process gets: the settings' inherited variables (PATH, LD_LIBRARY_PATH,
// CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, CUDA_HOME), and HOME=TMPDIR=/tmp, LANG=C. Nothing else (no
// *_API_KEY, no tokens).
std::map<std::string, std::string> sandbox_environment(const SandboxSettings& settings);
// The variables sandbox_environment passes on from the caller's.
inline constexpr const char* kSandboxInherited[] = {"PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
                                                    "CUDA_DEVICE_ORDER", "CUDA_HOME"};

// True when the NVIDIA driver restricts GPU performance counters to administrators.
bool profiling_needs_admin();

}  // namespace ptxbench
