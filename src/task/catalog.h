// What the code knows about task families and architectures; everything else about a task is data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ptxbench {

// A task parameter of a family: a boolean switch of the computation that every task file of the family sets
// in its "parameters" object ("causal" for attention). Only booleans so far; a new type is a new case in
// task.cpp's reader.
struct ParameterInfo {
  std::string name;     // "causal"
  std::string meaning;  // one line, for docs and errors
};

// The baselines a task file may name in "baseline": what the time stage measures a solution against.
inline constexpr const char* kBaselineCublasLt = "cublaslt";                 // the runner times cuBLASLt
inline constexpr const char* kBaselineVendorAttention = "vendor-attention";  // baselines/attention_cudnn.py
inline constexpr const char* kBaselineNone = "none";                         // the solution's time alone

// A tensor the harness allocates for a call: its element count, an expression over the shape's dimensions as
// task.h's evaluate_expression reads it, so that a task's shapes can be checked to give sizes that fit.
struct TensorInfo {
  std::string name;      // "A"
  std::string elements;  // "M*K"
};

struct FamilyInfo {
  std::string name;               // "gemm"
  std::vector<std::string> dims;  // dimensions every shape must give, in order
  std::string entry_point;        // the C symbol a solution defines (the main one, looked up by the runner)
  // Every C symbol a solution's library must define: the entry point and its helpers (the backward's
  // workspace size), which the static stage looks for among the library's exports.
  std::vector<std::string> symbols;
  std::string signature;          // its declaration(s), as in include/ptxbench/abi.h
  std::string semantics;          // one line: what it computes
  std::vector<std::string> outputs;       // the outputs the runner compares, by the names of its results
  std::vector<ParameterInfo> parameters;  // every task file of the family sets each of them
  std::vector<std::string> baselines;     // the values its task files may give "baseline"
  std::vector<TensorInfo> tensors;        // the entry point's tensors, inputs and outputs
  // Checks a shape against the family's rules beyond "positive integers" (GQA divisibility, head dims);
  // returns what is wrong, or "" when the shape is fine. Null: no further rules.
  std::function<std::string(const std::map<std::string, int64_t>& dims,
                            const std::map<std::string, bool>& parameters)>
      check_shape;
};

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

const FamilyInfo* find_family(const std::string& name);
const ArchInfo* find_arch(const std::string& name);
const std::vector<FamilyInfo>& all_families();
const std::vector<ArchInfo>& all_archs();

}  // namespace ptxbench
