// The static SASS inventory: how many times each opcode appears in the machine code, per kernel, read from
// `cuobjdump -sass <cubin or executable>`. Shown beside the dynamic counts of Nsight Compute: static presence
// proves nothing (dead code), but an opcode that ran in a launch of a kernel and is absent from that kernel's
// compiled code proves the launch ran other code than the submission's (see instruction_check.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ptxbench {

struct SassFunction {
  std::string name;  // as cuobjdump prints it: mangled ("_Z12wgmma_kernelPfi") or plain for extern "C"
  std::string arch;  // "sm_90a", from the "code for sm_90a" line above it
  int64_t instructions = 0;
  std::map<std::string, int64_t> opcodes;  // opcode with modifiers ("HGMMA.64x8x16.F32.BF16") -> occurrences
};

struct SassInventory {
  std::vector<SassFunction> functions;     // in file order
  std::map<std::string, int64_t> opcodes;  // summed over all functions

  const SassFunction* find(const std::string& name) const;
};

// Entry: the text of `cuobjdump -sass`. Predicates ("@!P0") and operands are left out; the padding after the
// last instruction (NOP, BRA to itself) is counted like any other instruction, as cuobjdump prints it.
SassInventory parse_cuobjdump_sass(const std::string& text);

nlohmann::json to_json(const SassInventory& inventory);

}  // namespace ptxbench
