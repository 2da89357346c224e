// What the code knows about architectures (the task families are src/family); everything else about a task is
// data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench {

struct ArchInfo {
  std::string name;        // "sm_90a"
  std::string marketing;   // "Hopper"
  std::string kit;         // folder under kits/
  std::string gencode;     // nvcc's -gencode value
  int compute_capability;  // 90, 100: what a GPU reports to run this architecture's tasks
  // Dense bf16 tensor-core FLOPs per SM per clock: with the SM count and clock, the peak the time stage's
  // physics floor holds a call to (runner/timing_rules.h).
  int dense_bf16_flops_per_sm_per_clock;
  // The PTX mnemonics and SASS opcodes (base names) a task of this architecture may require: a task file's
  // "ptx" and "sass" entries each name one, alone or with modifiers after it ("mbarrier.try_wait.parity",
  // "SYNCS.PHASECHK"), so that a misspelt one stops the task from loading (known_instruction).
  std::vector<std::string> ptx_mnemonics;
  std::vector<std::string> sass_opcodes;
};

// Whether `name` is one of `known`, or one of them followed by modifiers ("." and more).
bool known_instruction(const std::vector<std::string>& known, const std::string& name);

// The instruction families a task may require (the "name" of each "required" entry), as verdicts report them.
// The opcode prefixes that prove one are the task file's; the names are fixed here so that a misspelt one
// stops the task from loading rather than reading as a family the solution failed to execute.
const std::vector<std::string>& instruction_family_names();

const ArchInfo* find_arch(const std::string& name);
const std::vector<ArchInfo>& all_archs();

}  // namespace ptxbench
