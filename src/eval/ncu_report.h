// Parsing Nsight Compute's per-opcode executed counts, as printed by
//   ncu --clock-control none --profile-from-start off
//       --metrics sass__inst_executed_per_opcode_with_modifier_all
//       --print-metric-instances details --csv --page raw <program>
// The output holds the program's own stdout and ncu's ==PROF==/==WARNING==/==ERROR== lines, then (if any
// kernel was profiled) one CSV table: a header row, a units row, and one row per profiled kernel launch.
// Instanced metric cells look like `847,109 (UIADD3: 232,896; HGMMA.64x64x16.F32.BF16: 65,536; ...)`: the
// total, then each opcode's warp-level executed count. tests/data/ncu/ holds real outputs from an H200.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arch/profile.h"

namespace ptxbench {

struct Dim3 {
  int64_t x = 0, y = 0, z = 0;
};

// One profiled kernel launch (one CSV row).
struct NcuLaunch {
  int id = 0;               // ncu's ID: the order of the profiled launches, from 0
  std::string kernel_name;  // as ncu prints it: mangled when asked (--print-kernel-base mangled), else
                            // demangled, "void mine::scale_kernel<4>(float *, int)"
  int64_t stream_id = -1;   // ncu's Stream column; equals cudaStreamGetId() of the launch's stream
  Dim3 grid;
  Dim3 block;
  // With the launch metrics asked for (kLaunchMetrics): the cluster shape ((0,0,0) without clusters), the
  // dynamic shared memory in bytes and the kernel's duration in nanoseconds, measured by ncu in a pass of its
  // own. Absent when the table lacks the column.
  std::optional<Dim3> cluster;
  std::optional<int64_t> dynamic_shared_bytes;
  std::optional<double> duration_ns;
  int64_t instructions_executed = 0;       // the per-opcode cell's total, warp-level
  std::map<std::string, int64_t> opcodes;  // opcode (with modifiers when available) -> warp-level count
  // The metric columns the profiler feedback reads (parse_ncu_report's `profile`: ProfileSpec::reads) that
  // hold one number, as printed (percentages as percent, in the units row's unit; profile_summary.h). Empty
  // without a profile. Not in to_json.
  std::map<std::string, double> metrics;
};

struct NcuReport {
  std::vector<NcuLaunch> launches;
  // The column the opcode counts were read from; empty when no launch was profiled or no such column exists.
  std::string opcode_metric;
  bool opcodes_have_modifiers = false;  // true for ..._with_modifier_all ("HGMMA.64x8x16.F32.BF16")
  bool no_kernels_profiled = false;     // ncu said "No kernels were profiled", or the output has no table
  std::vector<std::string> errors;      // ==ERROR== lines (text after the tag) and problems reading the table
  std::vector<std::string> warnings;    // ==WARNING== lines (text after the tag)
  std::vector<std::string> program_output;  // the profiled program's own lines, before the table
};

// The metrics beside the per-opcode counts that describe each launch, for binding the proof to the launches
// of unprofiled calls (launch_binding.h); and each launch's duration, which ncu measures in a pass on the
// GPU's counters (asked for only when the stage has the GPU alone).
inline constexpr const char* kLaunchMetrics =
    "launch__cluster_dim_x,launch__cluster_dim_y,launch__cluster_dim_z,launch__shared_mem_per_block_dynamic";
inline constexpr const char* kDurationMetric = "gpu__time_duration.sum";

// Entry: reads ncu's whole output (stdout and stderr together). Never throws on odd input: what cannot be
// read is named in `errors`. With `profile`, each launch also keeps the metrics it reads
// (NcuLaunch::metrics), and only those: a report holds some 300 columns per launch, and a call may launch
// thousands of kernels.
NcuReport parse_ncu_report(const std::string& output, const ProfileSpec* profile = nullptr);

// Pieces, exposed for tests and for other ncu pages.
// RFC 4180 records: comma-separated, double-quoted fields may hold commas, "" and newlines.
std::vector<std::vector<std::string>> parse_csv(std::string_view text);
// `1,234 (IMAD: 96; HGMMA.64x8x16.F32.BF16: 4)` -> total 1234 and the instance map. A cell without instances
// ("0") gives its total and an empty map. Returns false when the cell is not of that form.
bool parse_instanced_counts(std::string_view cell, int64_t& total, std::map<std::string, int64_t>& instances);
// "12,345" -> 12345 (ncu prints thousands separators). Returns false for anything else.
bool parse_count(std::string_view text, int64_t& value);
// "1,234.5" -> 1234.5. Returns false for anything else.
bool parse_decimal(std::string_view text, double& value);

nlohmann::json to_json(const NcuLaunch& launch);
nlohmann::json to_json(const NcuReport& report);

}  // namespace ptxbench
