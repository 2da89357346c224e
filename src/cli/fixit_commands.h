// `ptxbench fixit` (docs/fixit.md): its options, filled in by CLI11, and the command.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace ptxbench {

struct FixitCommandOptions {
  // which subcommand was given
  CLI::App* mine = nullptr;
  CLI::App* repair = nullptr;
  CLI::App* reason = nullptr;
  CLI::App* export_cmd = nullptr;
  CLI::App* build = nullptr;
  CLI::App* show = nullptr;

  // mine (and build's overrides)
  std::vector<long long> runs;
  std::string model;
  std::string tasks = "*";
  std::vector<std::string> error_classes;
  int min_turn = 1;
  int max_turn = 0;
  bool correct = false;
  int per_task = 0;
  int per_class = 0;
  uint64_t seed = 1;
  // repair
  long long mined = 0;
  std::string teacher;
  int turns = 5;
  std::string knowledge = "contracts";
  long long resume = 0;
  std::string models;
  bool cpu_only = false;
  double stage_time_limit_s = 0;
  int parallel = 4;
  // reason
  long long repair_run = 0;
  std::string reasoner;
  size_t min_chars = 200;
  size_t max_chars = 6000;
  size_t max_code_lines = 3;
  int attempts = 2;
  // export, build
  long long reason_run = 0;
  std::string out;
  std::string format = "prompt-completion";
  std::string prompt = "statement";
  std::vector<std::string> holdout;
  std::string name;
  std::string spec;
  // show
  long long show_run = 0;
};

CLI::App* add_fixit_command(CLI::App& app, FixitCommandOptions& options,
                            const std::function<void(CLI::App*)>& add_json);
int fixit_command(const CommonOptions& common, const FixitCommandOptions& options);

}  // namespace ptxbench
