#include "compile/ptxas_report.h"

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "util/names.h"

namespace ptxbench {
namespace {

int to_int(const std::string& digits) {
  return std::stoi(digits);
}

}  // namespace

PtxasReport parse_ptxas_report(const std::string& compiler_output) {
  // ptxas -v prints, per entry function:
  //   ptxas info    : Compiling entry function '_Z6kernelPf' for 'sm_90a'
  //   ptxas info    : Function properties for _Z6kernelPf
  //       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 168 registers, used 1 barriers, 16384 bytes smem, 384 bytes cmem[0]
  // "Function properties" also appears for non-entry device functions; those are not kernels.
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(ptxas info\s*: Used (\d+) registers(.*))");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[0\])");

  PtxasReport report;
  KernelResources* current = nullptr;  // the kernel the following lines describe
  std::istringstream lines(compiler_output);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, entry)) {
      report.kernels.push_back({.name = demangle(m[1]), .mangled = m[1]});
      current = &report.kernels.back();
    } else if (std::regex_search(line, m, properties)) {
      current = nullptr;
      for (auto& k : report.kernels)
        if (k.mangled == m[1].str()) current = &k;
    } else if (current && std::regex_search(line, m, frame)) {
      current->stack_bytes = to_int(m[1]);
      current->spill_store_bytes = to_int(m[2]);
      current->spill_load_bytes = to_int(m[3]);
    } else if (current && std::regex_search(line, m, used)) {
      current->registers = to_int(m[1]);
      const std::string rest = m[2];
      std::smatch part;
      if (std::regex_search(rest, part, barriers)) current->barriers = to_int(part[1]);
      if (std::regex_search(rest, part, smem)) current->shared_bytes = to_int(part[1]);
      if (std::regex_search(rest, part, cmem)) current->constant_bytes = to_int(part[1]);
    } else if (line.find("ptxas") != std::string::npos && line.find("warning") != std::string::npos) {
      report.warnings.push_back(line);
    }
  }
  return report;
}

nlohmann::json to_json(const KernelResources& k) {
  return {{"name", k.name},
          {"mangled", k.mangled},
          {"registers", k.registers},
          {"shared_bytes", k.shared_bytes},
          {"constant_bytes", k.constant_bytes},
          {"stack_bytes", k.stack_bytes},
          {"spill_store_bytes", k.spill_store_bytes},
          {"spill_load_bytes", k.spill_load_bytes},
          {"barriers", k.barriers}};
}

}  // namespace ptxbench
