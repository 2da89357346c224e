// Compiled bytecode for the judge's Python processes (a Triton solution's worker, the attention tasks' vendor
// baseline), kept outside the sandbox and read inside it.
//
// The runner starts those processes with `-B` in a read-only view of the host: nothing they import can leave
// bytecode behind. Where the installation shipped none (a virtual environment installed without compiling,
// as on the H100/H200 hosts of bench/), every process compiled torch from source: 3.8-4.3 s of each start, in
// every stage. This folder holds that bytecode, written once by a trusted process of the judge's (no
// submitted code runs in it), and is read-only to every sandboxed process (`python -X
// pycache_prefix=FOLDER`), so one solution cannot leave code there that another evaluation's trusted worker
// would run.
//
// Python validates each file against its source (size and modification time), so a stale folder costs speed,
// never correctness; a folder is keyed by the interpreter and the versions of the packages it warms.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench {

// The bytecode folder for `python` under `root`: warmed on the first call in this process (importing numpy,
// torch and Triton, and compiling the whole of Triton, whose compiler is imported only at the first compile),
// then remembered. Empty when `root` is empty or `python` cannot be run: its processes then start as before.
// Safe to call from several threads and several processes at once.
std::filesystem::path python_bytecode(const std::string& python, const std::filesystem::path& root);

// One folder of bytecode under a root, as `ptxbench cache` shows it.
struct BytecodeFolder {
  std::filesystem::path path;
  std::string versions;  // what it was written for, one line each; empty: its warm-up never completed
  std::uintmax_t bytes = 0;
  bool current = false;  // the folder `python` would read now
};

// The folders under `root`, oldest first; `python`'s own marked current (none when `python` cannot run).
std::vector<BytecodeFolder> bytecode_folders(const std::filesystem::path& root, const std::string& python);

// Removes from `folders` (bytecode_folders' listing of `root`) what no evaluation reads: every folder but the
// current one, except warm-ups left unfinished within the last hour (one may be under way). Returns what it
// removed; `folders` keeps the rest. A process that still read a removed folder would compile from the
// sources: slower, never wrong.
std::vector<BytecodeFolder> prune_bytecode(const std::filesystem::path& root, std::vector<BytecodeFolder>& folders);

}  // namespace ptxbench
