// Writes a report's files: report.json, one CSV per table, report.md and report.html (self-contained: its
// charts' library, its script and its data inlined; docs/report.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/dataset.h"
#include "report/metrics.h"

namespace ptxbench::report {

std::string to_csv(const Table& table);
nlohmann::ordered_json to_json(const Report& report);
std::string to_markdown(const Report& report);
// The trajectory viewer's data: each trajectory's turns with their code (by hash), feedback and diff.
nlohmann::ordered_json viewer_data(const Dataset& data);
std::string to_html(const Report& report, const nlohmann::ordered_json& viewer);

// Writes every file into `folder` (created); returns their paths.
std::vector<std::filesystem::path> write_report(const std::filesystem::path& folder, const Dataset& data,
                                                const Report& report);

// The inlined assets (src/report/assets.cpp).
std::string_view chart_library();  // Chart.js, from the system's package, found by the build
std::string_view report_script();
std::string_view report_style();

}  // namespace ptxbench::report
