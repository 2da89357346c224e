// Where a hung call's threads wait, from cuda-gdb attached to the solution process while the call still runs:
//   cuda-gdb -q -batch -p PID -ex "info cuda kernels" -ex "info cuda threads"
// "info cuda kernels" lists the kernels on the GPU (id, grid and block dimensions, the invocation);
// "info cuda threads" lists their threads as runs of consecutive threads at one PC, each with the source file
// and line when the code has line information (the judge compiles with -lineinfo):
//   Kernel 0
//   *  (0,0,0)   (0,0,0)     (0,0,0)  (31,0,0)    32 0x00007fe1177ac2c0 /path/solution.cu     5
// tests/data/cuda-gdb/ holds a real output from an H100.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ptxbench {

// A kernel that was running.
struct HungKernel {
  int id = 0;
  std::string grid;        // "(4,1,1)"
  std::string block;       // "(128,1,1)"
  std::string invocation;  // "wait_for_flag()"
};

// The threads of one kernel at one source line (or one PC, without line information).
struct WaitSite {
  int kernel = 0;
  std::string location;  // "solution.cu:5" (the file's name alone), or the PC "0x00007fe1177ac2c0"
  std::string file;      // "solution.cu", empty without line information
  int line = 0;
  int64_t threads = 0;
  int64_t runs = 0;  // the listing's runs of consecutive threads there (about its warps)
};

struct HangReport {
  std::vector<HungKernel> kernels;
  std::vector<WaitSite> sites;  // most threads first
  int64_t threads = 0;          // every thread listed
  bool stopped = false;         // cuda-gdb stopped the process in a kernel ("Switching focus to CUDA kernel")
  // Why cuda-gdb saw no GPU side, when it said so: its first line about the CUDA attach failing ("The CUDA
  // driver hit an internal error while attaching to the application", "Could not find CUDA Debugger
  // back-end"), as in a process that records with CUPTI or on a host without the driver's debugger back-end,
  // libcudadebugger.so.1. Empty otherwise.
  std::string attach_failure;

  // One line: "kernel wait_for_flag<<<(4,1,1),(128,1,1)>>>: 128 threads at hang.cu:5", the `max_sites` sites
  // with the most threads; "" when no thread was listed.
  std::string summary(size_t max_sites = 3) const;
};

HangReport parse_cuda_gdb_threads(const std::string& output);

nlohmann::json to_json(const HangReport& report);

}  // namespace ptxbench
