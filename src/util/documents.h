// The JSON documents ptxbench gives other programs: what each subcommand prints with --json, and the files it
// writes for tools (a report's report.json, a run's exported trajectories). Each is one object that names its
// `kind` and the `schema` version of its format; schemas/<kind>.schema.json describes every field, and the
// tests (tests/json) hold what the commands print to those files.
//
// A version goes up when a field goes away or changes its meaning or type. A field may be added within a
// version, with its description in the schema file (the schemas refuse fields they do not describe, so that
// none goes undocumented); a reader should ignore the fields it does not know.
#pragma once

#include <array>
#include <concepts>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ptxbench {

struct DocumentFormat {
  std::string_view kind;
  int version;
};

namespace documents {
inline constexpr DocumentFormat task{"task", 1};                    // tasks ID
inline constexpr DocumentFormat task_list{"task-list", 1};          // tasks
inline constexpr DocumentFormat compile{"compile", 1};              // compile
inline constexpr DocumentFormat verdict{"verdict", 1};              // eval, results --id; the store keeps it
inline constexpr DocumentFormat agent_run{"agent-run", 1};          // run
inline constexpr DocumentFormat solutions_run{"solutions-run", 1};  // run --solutions
inline constexpr DocumentFormat evaluations{"evaluations", 1};      // results, results --run N
inline constexpr DocumentFormat runs{"runs", 1};                    // results --runs
inline constexpr DocumentFormat trajectories{"trajectories", 1};    // results --run N --export FILE
inline constexpr DocumentFormat report{"report", 1};                // report: its report.json
inline constexpr DocumentFormat report_files{"report-files", 1};    // report
inline constexpr DocumentFormat cache{"cache", 1};                  // cache
// fixit: mine and show of a mined set; repair and show of a repair run; reason; show of a reasoning run;
// export and build.
inline constexpr DocumentFormat fixit_mined{"fixit-mined", 1};
inline constexpr DocumentFormat fixit_repairs{"fixit-repairs", 1};
inline constexpr DocumentFormat fixit_reasoning{"fixit-reasoning", 1};
inline constexpr DocumentFormat fixit_reasonings{"fixit-reasonings", 1};
inline constexpr DocumentFormat fixit_export{"fixit-export", 1};

inline constexpr std::array all = {
    task,        task_list,     compile,         verdict,          agent_run,    solutions_run,
    evaluations, runs,          trajectories,    report,           report_files, cache,
    fixit_mined, fixit_repairs, fixit_reasoning, fixit_reasonings, fixit_export};
}  // namespace documents

// `body` (an object) with its kind and format version.
inline nlohmann::json tagged(const DocumentFormat& format, nlohmann::json body) {
  body["kind"] = std::string(format.kind);
  body["schema"] = format.version;
  return body;
}

// What is not there is null in a document, not 0 or an empty string: an id of 0, an empty text.
template <std::integral Id>
nlohmann::json or_null(Id id) {
  return id ? nlohmann::json(id) : nlohmann::json();
}
inline nlohmann::json or_null(const std::string& text) {
  return text.empty() ? nlohmann::json() : nlohmann::json(text);
}

// The same for a document whose fields keep the order they were written in: its kind and version first.
inline nlohmann::ordered_json tagged_ordered(const DocumentFormat& format,
                                             const nlohmann::ordered_json& body) {
  nlohmann::ordered_json doc = {{"kind", std::string(format.kind)}, {"schema", format.version}};
  doc.update(body);
  return doc;
}

}  // namespace ptxbench
