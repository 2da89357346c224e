#include "eval/sass_inventory.h"

#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ptxbench {

using nlohmann::json;

const SassFunction* SassInventory::find(const std::string& name) const {
  for (const auto& function : functions)
    if (function.name == name) return &function;
  return nullptr;
}

SassInventory parse_cuobjdump_sass(const std::string& text) {
  // "        /*0130*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR6], R0 ;   /*
  // 0x00000000ff0075a7 */" "        /*0140*/              @!P0 BRA 0x170 ; /* 0x0000000000088947 */" The
  // second line of each instruction holds only the encoding's upper half and does not match.
  static const std::regex kInstruction(
      R"(^\s*/\*[0-9a-fA-F]+\*/\s+(?:\{\s*)?(?:@!?U?P[0-9T]+\s+)?([^\s;]+))");
  static const std::regex kFunction(R"(^\s*Function : (\S+))");
  static const std::regex kArch(R"(^\s*code for (sm_\w+))");
  SassInventory inventory;
  std::string arch;
  std::istringstream lines(text);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, kInstruction)) {
      if (inventory.functions.empty()) continue;  // instructions before any "Function :" header: not ours
      auto& function = inventory.functions.back();
      const std::string opcode = match[1];
      ++function.opcodes[opcode];
      ++function.instructions;
      ++inventory.opcodes[opcode];
    } else if (std::regex_search(line, match, kFunction)) {
      inventory.functions.push_back(SassFunction{match[1], arch, 0, {}});
    } else if (std::regex_search(line, match, kArch)) {
      arch = match[1];
    }
  }
  return inventory;
}

json to_json(const SassInventory& inventory) {
  json functions = json::array();
  for (const auto& function : inventory.functions)
    functions.push_back(json{{"name", function.name},
                             {"arch", function.arch},
                             {"instructions", function.instructions},
                             {"opcodes", function.opcodes}});
  return json{{"functions", std::move(functions)}, {"opcodes", inventory.opcodes}};
}

}  // namespace ptxbench
