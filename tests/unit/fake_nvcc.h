// An nvcc for tests of a failing host: it answers --version as the real one does (so the compile stage takes
// it for nvcc), and runs a shell script for each compile, with $REAL_NVCC naming the real compiler so that
// the script can hand over to it.
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "compile/compile.h"
#include "util/files.h"

namespace ptxbench::testing_compile {

inline std::filesystem::path real_nvcc() {
  const char* nvcc = std::getenv("PTXBENCH_NVCC");
  return nvcc && *nvcc ? std::filesystem::path(nvcc) : CompileOptions{}.nvcc;
}

// The sandbox the compile runs nvcc in, resolved once, as a front end resolves it (bwrap is a dependency).
inline const SandboxStatus& compile_sandbox() {
  static const SandboxStatus status = resolve_sandbox({});
  return status;
}

// Writes the fake to `file` (a fresh path for each fake: nvcc_version remembers what a path answered).
inline std::filesystem::path write_fake_nvcc(const std::filesystem::path& file, const std::string& script) {
  write_file(file, "#!/bin/sh\nREAL_NVCC='" + real_nvcc().string() + "'\n" +
                       "if [ \"$1\" = --version ]; then exec \"$REAL_NVCC\" --version; fi\n" + script + "\n");
  chmod(file.c_str(), 0755);
  return file;
}

}  // namespace ptxbench::testing_compile
