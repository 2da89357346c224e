// How the solution process reaches a track's solution: it loads the solution once, then calls its entry point
// with the arguments of each request. The CUDA track's solution is a shared library with C entry points
// (dlopen, dlsym); the Triton track's is a Python file whose entry points take torch tensors, reached through
// the trusted Python host of the worker (python_worker.h). Everything else in the worker (the protocol, the
// buffers, the streams, the events, the clocks, the recorders) is the same for both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "runner/solution_protocol.h"

namespace ptxbench::runner {

// One call's arguments, by kind, each kind in the entry point's order (solution_protocol.h): the pointers
// (the runner's buffers as mapped here, nullptr for a null pointer) with their sizes in bytes, element types
// and extents, the ints and the floats, and the stream the call runs on.
struct CallArguments {
  void* pointers[solution::kMaxPointers] = {};
  uint64_t bytes[solution::kMaxPointers] = {};
  uint8_t dtypes[solution::kMaxPointers] = {};
  uint8_t ranks[solution::kMaxPointers] = {};
  int64_t extents[solution::kMaxPointers][solution::kMaxRank] = {};
  uint32_t pointer_count = 0;
  int64_t ints[solution::kMaxInts] = {};
  uint32_t int_count = 0;
  float floats[solution::kMaxFloats] = {};
  uint32_t float_count = 0;
  cudaStream_t stream = nullptr;

  bool operator==(const CallArguments&) const = default;
};

// What to load: the symbols of the family's entry point and workspace function ("" for none) and the kinds of
// the entry point's arguments (solution_protocol.h's LoadRequest).
struct EntrySpec {
  std::string entry;
  std::string workspace;
  std::string codes;
};

// What a call of the solution's code came to: its return value, or the exception it raised (Python).
struct Returned {
  int code = 0;
  std::optional<std::string> raised;
};

// Why the dynamic loader would not load a solution library, for the verdict: its words, without the
// library's path (a folder of the harness's), and, for a symbol nothing provides, what to do about it.
inline std::string load_failure(std::string said, const std::string& library) {
  if (said.starts_with(library + ": ")) said.erase(0, library.size() + 2);
  std::string text = "the dynamic loader could not load it: " + said;
  if (said.find("undefined symbol") != std::string::npos)
    text +=
        ". The library calls a function that nothing it links defines: a solution links only the CUDA "
        "runtime, the CUDA driver (the functions the static stage allows) and the C and C++ runtimes";
  return text;
}

class SolutionBinding {
 public:
  virtual ~SolutionBinding() = default;

  // Loads the solution (its own code runs now) and finds the functions `entry` names; why not, in words.
  virtual std::optional<std::string> load(const std::string& path, const EntrySpec& entry) = 0;
  // Readies a call before the clocks start (the Python binding makes its tensors here); a failure is the
  // harness's, in words.
  virtual std::optional<std::string> prepare(const CallArguments&) { return std::nullopt; }
  // Calls the entry point with the arguments last prepared.
  virtual Returned invoke(const CallArguments& arguments) = 0;
  // The workspace function's answer for these ints; the error when the function failed.
  struct Size {
    uint64_t bytes = 0;
    std::optional<std::string> error;
  };
  virtual Size workspace_bytes(const int64_t* ints, uint32_t count) = 0;
};

}  // namespace ptxbench::runner
