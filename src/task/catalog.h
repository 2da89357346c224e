// What the code knows about task families and architectures; everything else about a task is data.
#pragma once

#include <string>
#include <vector>

namespace ptxbench {

struct FamilyInfo {
  std::string name;               // "gemm"
  std::vector<std::string> dims;  // dimensions every shape must give, in order
  std::string entry_point;        // the C symbol a solution defines
  std::string signature;          // its declaration, as in include/ptxbench/abi.h
  std::string semantics;          // one line: what it computes
};

struct ArchInfo {
  std::string name;        // "sm_90a"
  std::string marketing;   // "Hopper"
  std::string kit;         // folder under kits/
  std::string gencode;     // nvcc's -gencode value
  int compute_capability;  // 90, 100: what a GPU reports to run this architecture's tasks
};

const FamilyInfo* find_family(const std::string& name);
const ArchInfo* find_arch(const std::string& name);
const std::vector<FamilyInfo>& all_families();
const std::vector<ArchInfo>& all_archs();

}  // namespace ptxbench
