#include "util/names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace ptxbench {

std::string demangle(const std::string& symbol) {
  if (!symbol.starts_with("_Z")) return symbol;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

bool opcode_has_prefix(std::string_view opcode, std::string_view prefix) {
  if (prefix.empty() || !opcode.starts_with(prefix)) return false;
  return opcode.size() == prefix.size() || opcode[prefix.size()] == '.';
}

}  // namespace ptxbench
