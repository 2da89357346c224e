// The static inventory: which PTX instructions the generated PTX contains. Read from the PTX the compiler
// produced, with comments removed, so instruction names in C++ comments, strings or PTX comments do not
// count. Static presence proves nothing about execution (dead code); the GPU stage's dynamic counts do.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "task/task.h"

namespace ptxbench {

struct PtxInventory {
  // Opcode with its first modifier ("wgmma.mma_async", "mbarrier.try_wait", "ld.global", "fma.rn") -> count
  // of static occurrences.
  std::map<std::string, int> opcodes;
  // Per required family of the task: static occurrences of its PTX prefixes.
  std::map<std::string, int> required_counts;
  std::vector<std::string> missing_families;  // required families with no occurrence
};

// Full opcodes ("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") of every instruction in `ptx`.
std::vector<std::string> ptx_instructions(const std::string& ptx);
PtxInventory take_inventory(const std::string& ptx, const Task& task);
nlohmann::json to_json(const PtxInventory& inventory);

}  // namespace ptxbench
