// Parsing `ptxas -v` (nvcc -Xptxas -v) output: per kernel registers, shared memory, stack and spills.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ptxbench {

struct KernelResources {
  std::string name;  // demangled where possible
  std::string mangled;
  int registers = 0;
  int shared_bytes = 0;    // static shared memory; dynamic shared memory is set at launch
  int constant_bytes = 0;  // cmem[0], the kernel's parameters and constants
  int stack_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int barriers = 0;
};

struct PtxasReport {
  std::vector<KernelResources> kernels;
  std::vector<std::string> warnings;  // "ptxas warning : ..." lines, as printed
};

PtxasReport parse_ptxas_report(const std::string& compiler_output);
nlohmann::json to_json(const KernelResources& kernel);

}  // namespace ptxbench
