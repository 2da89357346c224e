#include "eval/ncu_report.h"
#include "util/text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ptxbench {

using nlohmann::json;

namespace {

// ncu gives the per-opcode metric with modifiers when asked for it; the base metric names opcodes only
// ("HGMMA"), which is enough to see that a family ran but not to read an MMA shape. Preferred first.
constexpr std::array<std::string_view, 2> kOpcodeMetrics = {
    "sass__inst_executed_per_opcode_with_modifier_all",
    "sass__inst_executed_per_opcode",
};

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The header row is the first line that starts a CSV record with ncu's first two columns. Matching both keeps
// a program that happens to print `"ID"` from being taken for the table.
bool is_header_line(std::string_view line) {
  return starts_with(line, "\"ID\",\"Process ID\"");
}

// "(2, 64, 1)" -> {2, 64, 1}
std::optional<Dim3> parse_dim3(std::string_view text) {
  text = trim_view(text);
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::array<int64_t, 3> values{};
  for (size_t i = 0; i < values.size(); ++i) {
    const auto comma = text.find(',');
    const auto part = trim_view(text.substr(0, comma));
    if (!parse_count(part, values[i])) return std::nullopt;
    if (i + 1 < values.size()) {
      if (comma == std::string_view::npos) return std::nullopt;
      text = text.substr(comma + 1);
    } else if (comma != std::string_view::npos) {
      return std::nullopt;
    }
  }
  return Dim3{values[0], values[1], values[2]};
}

// ncu prefixes its own lines; everything else before the table is the profiled program's output.
enum class LineKind { prof, warning, error, other };

LineKind classify(std::string_view line, std::string_view& text_after_tag) {
  static constexpr std::array<std::pair<std::string_view, LineKind>, 3> kTags = {{
      {"==PROF==", LineKind::prof},
      {"==WARNING==", LineKind::warning},
      {"==ERROR==", LineKind::error},
  }};
  for (const auto& [tag, kind] : kTags) {
    if (starts_with(line, tag)) {
      text_after_tag = trim_view(line.substr(tag.size()));
      return kind;
    }
  }
  text_after_tag = line;
  return LineKind::other;
}

}  // namespace

bool parse_decimal(std::string_view text, double& value) {
  text = trim_view(text);
  std::string digits;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ',' && i > 0 && i + 1 < text.size()) continue;  // a thousands separator
    digits += text[i];
  }
  char* end = nullptr;
  value = std::strtod(digits.c_str(), &end);
  return !digits.empty() && end == digits.c_str() + digits.size() && std::isfinite(value);
}

// A cell's value without the instances --print-metric-instances details adds ("0 (0: 0)" -> "0").
static std::string_view without_instances(std::string_view cell) {
  cell = trim_view(cell);
  return trim_view(cell.substr(0, cell.find(" (")));
}

// A count cell, instanced or not.
static bool parse_total(std::string_view cell, int64_t& value) {
  return parse_count(without_instances(cell), value);
}

// ncu's unit of a time column (the units row) in nanoseconds.
static double nanoseconds_per(std::string_view unit) {
  unit = trim_view(unit);
  if (unit == "usecond") return 1e3;
  if (unit == "msecond") return 1e6;
  if (unit == "second") return 1e9;
  return 1;  // "nsecond", ncu's base unit
}

bool parse_count(std::string_view text, int64_t& value) {
  text = trim_view(text);
  if (text.empty()) return false;
  std::string digits;
  digits.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c == ',' && i > 0 && i + 1 < text.size()) {
      continue;  // a thousands separator
    } else if (c == '-' && i == 0) {
      digits += c;
    } else {
      return false;
    }
  }
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return error == std::errc{} && end == digits.data() + digits.size();
}

bool parse_instanced_counts(std::string_view cell, int64_t& total,
                            std::map<std::string, int64_t>& instances) {
  instances.clear();
  cell = trim_view(cell);
  const auto open = cell.find('(');
  if (open == std::string_view::npos) return parse_count(cell, total);
  if (cell.back() != ')') return false;
  if (!parse_count(cell.substr(0, open), total)) return false;
  std::string_view body = cell.substr(open + 1, cell.size() - open - 2);
  while (!body.empty()) {
    const auto end = body.find(';');
    const auto item = trim_view(body.substr(0, end));
    body = end == std::string_view::npos ? std::string_view{} : body.substr(end + 1);
    if (item.empty()) continue;
    // "HGMMA.64x8x16.F32.BF16: 4": the name never holds ": ", the count may hold commas.
    const auto colon = item.rfind(':');
    if (colon == std::string_view::npos) return false;
    int64_t count = 0;
    if (!parse_count(item.substr(colon + 1), count)) return false;
    instances[std::string(trim_view(item.substr(0, colon)))] += count;
  }
  return true;
}

std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  bool record_has_content = false;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
  };
  auto end_record = [&] {
    if (record_has_content) {
      end_field();
      records.push_back(std::move(record));
    }
    record.clear();
    field.clear();
    record_has_content = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quotes = true;
        record_has_content = true;
        break;
      case ',':
        end_field();
        record_has_content = true;
        break;
      case '\r':
        break;
      case '\n':
        end_record();
        break;
      default:
        field += c;
        record_has_content = true;
    }
  }
  end_record();
  return records;
}

NcuReport parse_ncu_report(const std::string& output, const ProfileSpec* profile) {
  NcuReport report;
  std::string_view rest = output;
  std::string_view table;
  // Before the table: the program's lines and ncu's tagged lines. ncu also prints tagged lines after the
  // table on some errors; those are gathered below from the table's text.
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (is_header_line(line)) {
      table = rest;
      break;
    }
    rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
    std::string_view text;
    switch (classify(line, text)) {
      case LineKind::warning:
        report.warnings.emplace_back(text);
        break;
      case LineKind::error:
        report.errors.emplace_back(text);
        break;
      case LineKind::prof:
        break;
      case LineKind::other:
        if (!trim_view(line).empty()) report.program_output.emplace_back(line);
    }
  }
  for (const auto& warning : report.warnings)
    if (warning.find("No kernels were profiled") != std::string::npos) report.no_kernels_profiled = true;
  if (table.empty()) {
    report.no_kernels_profiled = true;
    return report;
  }

  // Tagged lines after the table are ncu's, not CSV records.
  std::string csv_text;
  {
    std::istringstream lines{std::string(table)};
    std::string line;
    while (std::getline(lines, line)) {
      std::string_view text;
      const auto kind = classify(line, text);
      if (kind == LineKind::warning)
        report.warnings.emplace_back(text);
      else if (kind == LineKind::error)
        report.errors.emplace_back(text);
      else if (kind == LineKind::other)
        csv_text += line + '\n';
    }
  }
  const auto records = parse_csv(csv_text);
  if (records.empty()) {
    report.no_kernels_profiled = true;
    return report;
  }
  const auto& header = records.front();
  auto column = [&](std::string_view name) -> std::optional<size_t> {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) return std::nullopt;
    return static_cast<size_t>(it - header.begin());
  };
  const auto id_column = column("ID");
  const auto name_column = column("Kernel Name");
  const auto stream_column = column("Stream");
  const auto grid_column = column("Grid Size");
  const auto block_column = column("Block Size");
  std::optional<size_t> opcode_column;
  for (const auto metric : kOpcodeMetrics) {
    if ((opcode_column = column(metric))) {
      report.opcode_metric = std::string(metric);
      report.opcodes_have_modifiers = metric.find("with_modifier") != std::string_view::npos;
      break;
    }
  }
  const auto cluster_columns = std::array{column("launch__cluster_dim_x"), column("launch__cluster_dim_y"),
                                          column("launch__cluster_dim_z")};
  const auto dynamic_shared_column = column("launch__shared_mem_per_block_dynamic");
  const auto duration_column = column(kDurationMetric);
  // The units row follows the header: a duration's unit is ncu's to choose unless --print-units base.
  double duration_scale_ns = 1;
  if (duration_column && records.size() > 1 && records[1].size() == header.size())
    duration_scale_ns = nanoseconds_per(records[1][*duration_column]);
  std::vector<size_t> metric_columns;  // the profile's
  for (size_t i = 0; profile && i < header.size(); ++i)
    if (profile->reads(header[i])) metric_columns.push_back(i);
  if (!name_column) report.errors.push_back("the ncu table has no \"Kernel Name\" column");
  if (!opcode_column)
    report.errors.push_back("the ncu table has no per-opcode column (sass__inst_executed_per_opcode...)");

  for (size_t row = 1; row < records.size(); ++row) {
    const auto& cells = records[row];
    if (cells.size() != header.size()) {
      report.errors.push_back(
          fmt::format("ncu table row {} has {} cells, the header {}", row, cells.size(), header.size()));
      continue;
    }
    // The units row ("", "", ..., "inst", ...) has no ID; every launch row has one.
    int64_t id = 0;
    if (!id_column || !parse_count(cells[*id_column], id)) continue;
    NcuLaunch launch;
    launch.id = static_cast<int>(id);
    if (name_column) launch.kernel_name = cells[*name_column];
    if (stream_column && !parse_count(cells[*stream_column], launch.stream_id)) launch.stream_id = -1;
    if (grid_column)
      if (auto grid = parse_dim3(cells[*grid_column])) launch.grid = *grid;
    if (block_column)
      if (auto block = parse_dim3(cells[*block_column])) launch.block = *block;
    if (cluster_columns[0] && cluster_columns[1] && cluster_columns[2]) {
      Dim3 cluster;
      if (parse_total(cells[*cluster_columns[0]], cluster.x) &&
          parse_total(cells[*cluster_columns[1]], cluster.y) &&
          parse_total(cells[*cluster_columns[2]], cluster.z))
        launch.cluster = cluster;
    }
    if (int64_t bytes = 0; dynamic_shared_column && parse_total(cells[*dynamic_shared_column], bytes))
      launch.dynamic_shared_bytes = bytes;
    if (double duration = 0;
        duration_column && parse_decimal(without_instances(cells[*duration_column]), duration))
      launch.duration_ns = duration * duration_scale_ns;
    for (const size_t i : metric_columns)
      if (double value = 0; parse_decimal(without_instances(cells[i]), value))
        launch.metrics[header[i]] = value;
    if (opcode_column &&
        !parse_instanced_counts(cells[*opcode_column], launch.instructions_executed, launch.opcodes)) {
      report.errors.push_back(fmt::format("cannot read the {} cell of launch {} ({}): '{}'",
                                          report.opcode_metric, launch.id, launch.kernel_name,
                                          cells[*opcode_column].substr(0, 80)));
    }
    report.launches.push_back(std::move(launch));
  }
  if (report.launches.empty()) report.no_kernels_profiled = true;
  return report;
}

json to_json(const NcuLaunch& launch) {
  return json{
      {"id", launch.id},
      {"kernel", launch.kernel_name},
      {"stream", launch.stream_id},
      {"grid", {launch.grid.x, launch.grid.y, launch.grid.z}},
      {"block", {launch.block.x, launch.block.y, launch.block.z}},
      {"cluster", launch.cluster ? json{launch.cluster->x, launch.cluster->y, launch.cluster->z} : json()},
      {"dynamic_shared_bytes", launch.dynamic_shared_bytes ? json(*launch.dynamic_shared_bytes) : json()},
      {"duration_us", launch.duration_ns ? json(*launch.duration_ns * 1e-3) : json()},
      {"instructions", launch.instructions_executed},
      {"opcodes", launch.opcodes}};
}

json to_json(const NcuReport& report) {
  json launches = json::array();
  for (const auto& launch : report.launches) launches.push_back(to_json(launch));
  return json{{"launches", std::move(launches)},
              {"opcode_metric", report.opcode_metric},
              {"opcodes_have_modifiers", report.opcodes_have_modifiers},
              {"no_kernels_profiled", report.no_kernels_profiled},
              {"errors", report.errors},
              {"warnings", report.warnings}};
}

}  // namespace ptxbench
