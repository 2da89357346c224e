#include "compile/ptx_inventory.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "util/names.h"

namespace ptxbench {
namespace {

// PTX has C-style comments only; string literals do not occur in instruction text.
std::string strip_ptx_comments(const std::string& ptx) {
  std::string out;
  out.reserve(ptx.size());
  for (size_t i = 0; i < ptx.size(); ++i) {
    if (ptx.compare(i, 2, "//") == 0) {
      while (i < ptx.size() && ptx[i] != '\n') ++i;
      out += '\n';
    } else if (ptx.compare(i, 2, "/*") == 0) {
      size_t end = ptx.find("*/", i + 2);
      i = end == std::string::npos ? ptx.size() : end + 1;
      out += ' ';
    } else {
      out += ptx[i];
    }
  }
  return out;
}

bool is_opcode(const std::string& token) {
  if (token.empty() || !std::islower(static_cast<unsigned char>(token[0]))) return false;
  for (char c : token)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':') return false;
  return true;
}

// The name an inventory groups by: the opcode and its first modifier ("ld.global", "wgmma.mma_async"),
// with the bulk-copy forms kept whole ("cp.async.bulk.tensor"), since they are different instructions.
std::string inventory_key(const std::string& opcode) {
  size_t end = opcode.find('.');
  if (end == std::string::npos) return opcode;
  end = opcode.find('.', end + 1);
  std::string key = opcode.substr(0, end);
  if ((key == "cp.async" || key == "cp.reduce") && opcode.compare(key.size(), 5, ".bulk") == 0) {
    bool tensor = opcode.compare(key.size() + 5, 7, ".tensor") == 0;
    key += tensor ? ".bulk.tensor" : ".bulk";
  }
  return key;
}

}  // namespace

std::vector<std::string> ptx_instructions(const std::string& ptx) {
  std::vector<std::string> out;
  const std::string text = strip_ptx_comments(ptx);
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ';' && text[i] != '{' && text[i] != '}') continue;
    // One statement: skip labels ("$L__BB0_2:"), a predicate guard ("@%p1", "@!%p1") and directive lines
    // (".loc 1 12 3" has no ';'); the next token is the opcode, unless the statement is data ("1, 2, 3").
    size_t pos = start;
    start = i + 1;
    for (;;) {
      while (pos < i && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
      size_t end = pos;
      while (end < i && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
      if (pos == end) break;
      std::string token = text.substr(pos, end - pos);
      bool label = token.back() == ':' && (token.size() < 2 || token[token.size() - 2] != ':');
      if (label || token[0] == '@') {
        pos = end;
        continue;
      }
      if (token[0] == '.') {  // a directive: some (.loc, .file, .maxntid) end at the line, not at a ';'
        pos = text.find('\n', end);
        if (pos == std::string::npos || pos > i) break;
        continue;
      }
      if (is_opcode(token)) out.push_back(token);
      break;
    }
  }
  return out;
}

PtxInventory take_inventory(const std::string& ptx, const Task& task) {
  PtxInventory inventory;
  const auto instructions = ptx_instructions(ptx);
  for (const auto& opcode : instructions) ++inventory.opcodes[inventory_key(opcode)];
  for (const auto& family : task.required) {
    int count = 0;
    for (const auto& opcode : instructions)
      for (const auto& prefix : family.ptx)
        if (opcode_has_prefix(opcode, prefix)) {
          ++count;
          break;
        }
    inventory.required_counts[family.name] = count;
    if (count == 0) inventory.missing_families.push_back(family.name);
  }
  return inventory;
}

nlohmann::json to_json(const PtxInventory& inventory) {
  return {{"opcodes", inventory.opcodes},
          {"required", inventory.required_counts},
          {"missing_families", inventory.missing_families}};
}

}  // namespace ptxbench
