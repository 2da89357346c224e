// How the solution process names a launch to the judge: a 64-bit FNV-1a hash of the kernel's whole mangled
// name (solution_protocol.h, Launch::name_hash), which the parent computes again from ncu's mangled names
// (src/eval/launch_binding.cpp). Free of CUDA, for both sides.
#pragma once

#include <cstdint>
#include <string_view>

namespace ptxbench {

inline uint64_t kernel_name_hash(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}

}  // namespace ptxbench
