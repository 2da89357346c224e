// Confining a process's file-system writes with Landlock (Linux 5.13 and later), for the solution process:
// header-only and free of CUDA, so that the CPU tests can check it.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>

// Access rights newer than some systems' kernel headers (Debian 12 ships those of Linux 6.1): the values are
// the kernel's ABI, and they are only asked for when the running kernel reports the ABI version that has
// them.
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)  // ABI 2, Linux 5.19
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)  // ABI 3, Linux 6.2
#endif

namespace ptxbench::runner {

// How a process confined its file-system writes.
struct Confinement {
  bool writes_confined = false;
  // The process's threads at that moment. Landlock binds the thread that asks and the threads it starts
  // later, so 1 means every thread the process will have is bound.
  uint32_t threads = 0;
};

// The threads of this process (the entries of /proc/self/task); 0 when that cannot be read.
inline uint32_t threads_of_this_process() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return 0;
  uint32_t count = 0;
  while (const dirent* entry = readdir(tasks))
    if (entry->d_name[0] != '.') ++count;
  closedir(tasks);
  return count;
}

// From here on this process, and every process it starts, may create, write, truncate, rename into or remove
// files only beneath the `writable` folders; reading is not restricted. Returns false, changing nothing, when
// the kernel has no Landlock (or a seccomp filter hides it).
inline bool confine_writes_to(std::initializer_list<const char*> writable) {
#ifdef LANDLOCK_ACCESS_FS_MAKE_SYM
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return false;
  __u64 writes = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
#ifdef LANDLOCK_ACCESS_FS_REFER
  if (abi >= 2) writes |= LANDLOCK_ACCESS_FS_REFER;  // renaming or linking a file into another folder
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
  if (abi >= 3)
    writes |= LANDLOCK_ACCESS_FS_TRUNCATE;  // truncate(2) by path, which WRITE_FILE does not cover
#endif
  landlock_ruleset_attr ruleset{};
  ruleset.handled_access_fs = writes;
  const int ruleset_fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &ruleset, sizeof(ruleset), 0));
  if (ruleset_fd < 0) return false;
  bool ok = true;
  for (const char* path : writable) {
    const int dir = open(path, O_PATH | O_CLOEXEC);
    if (dir < 0) continue;  // a folder that does not exist needs no right
    landlock_path_beneath_attr rule{};
    rule.allowed_access = writes;
    rule.parent_fd = dir;
    ok = ok && syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
    close(dir);
  }
  ok = ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
       syscall(SYS_landlock_restrict_self, ruleset_fd, 0) == 0;
  close(ruleset_fd);
  return ok;
#else
  (void)writable;
  return false;
#endif
}

// The solution process's confinement: writes only to /dev (the GPU's device nodes), /tmp (the sandbox's
// private tmpfs), this process's own /proc/PID (CUDA's start failed without it on the H200, with
// cudaErrorOperatingSystem) and `also_writable` (a folder, or none: a Triton solution's kernel cache, which
// the judge may keep outside /tmp for the evaluation's stages to share). The runner's scratch folder, where
// the profiler and the sanitizer write their logs, becomes read-only to the solution. Call it first of all,
// while this is the only thread: Landlock binds the thread that asks and the threads it starts later, so the
// threads CUDA starts are bound too, and no thread is left that the solution could take over to write
// elsewhere. (A path reached through /proc/PID/root or /proc/PID/fd is checked where it resolves.)
// A process started for the debugger (`for_debugger`: kForDebuggerVariable is "1" in its environment) keeps
// all of /proc writable: CUDA's debugger back-end, which cuda-gdb starts in the process it attaches to,
// forks, and its child writes to its own /proc/PID, which is not this process's; without it the back-end
// fails with CUDBG_ERROR_NO_DEVICE_AVAILABLE (H100, 2026-12-06: bench/harness/h200-2026-12-06c/). Other
// processes' memory and descriptors stay out of reach there: Landlock denies ptrace access, which
// /proc/PID/mem and /proc/PID/fd ask for, to any process outside the confined ones, and the runner is not
// dumpable.
inline Confinement confine_solution_process(const char* also_writable = nullptr, bool for_debugger = false) {
  const uint32_t threads = threads_of_this_process();
  const char* also = also_writable != nullptr && *also_writable != '\0' ? also_writable : "/tmp";
  const char* proc = for_debugger ? "/proc" : "/proc/self";
  return {.writes_confined = confine_writes_to({"/dev", "/tmp", proc, also}), .threads = threads};
}

// The environment variable that tells a solution process whether the runner started it for the debugger
// ("1"; "0" in every other, SolutionProcess sets it either way), and its reading.
inline constexpr const char* kForDebuggerVariable = "PTXBENCH_SOLUTION_FOR_DEBUGGER";

inline bool started_for_debugger() {
  const char* value = getenv(kForDebuggerVariable);
  return value != nullptr && value[0] == '1' && value[1] == '\0';
}

}  // namespace ptxbench::runner
