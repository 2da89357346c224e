#include "report/write.h"

#include <fmt/format.h>

#include <map>

#include "report/diff.h"
#include "util/documents.h"
#include "util/files.h"
#include "util/format.h"
#include "util/text.h"

namespace ptxbench::report {

using nlohmann::ordered_json;

namespace {

// ---- cells: the text a person reads, the same in report.md and report.html ----

bool present(const Row& row, const std::string& key) {
  return row.contains(key) && !row[key].is_null();
}

double number(const Row& row, const std::string& key) {
  return row[key].get<double>();
}

// "66.7% (2/3) [20.8%, 93.9%]": the rate of k of n with its Wilson interval; "-" when nothing was decided.
std::string rate_cell(const Row& row, const std::string& prefix) {
  if (row[prefix + "_n"].get<int>() == 0) return "-";
  return fmt::format("{} ({}/{}) [{}, {}]", percent(number(row, prefix + "_rate")), row[prefix + "_k"].get<int>(),
                     row[prefix + "_n"].get<int>(), percent(number(row, prefix + "_lo")),
                     percent(number(row, prefix + "_hi")));
}

std::string times(const Row& row, const std::string& key) {
  return present(row, key) ? fmt::format("{:.3f}x", number(row, key)) : "-";
}

// "0.950x ± 0.071 (0.900x-1.020x, n=3)": the mean of the trajectories' best speedups, their sd and range.
std::string speedup_spread_cell(const Row& row) {
  const int n = row["speedup_n"].get<int>();
  if (n == 0) return "-";
  std::string out = times(row, "speedup_mean");
  if (present(row, "speedup_sd")) out += fmt::format(" ± {:.3f}", number(row, "speedup_sd"));
  return out + fmt::format(" ({}-{}, n={})", times(row, "speedup_min"), times(row, "speedup_max"), n);
}

std::string decimal(const Row& row, const std::string& key, int digits, const char* unit = "") {
  return present(row, key) ? fmt::format("{:.{}f}{}", number(row, key), digits, unit) : "-";
}

std::string text(const Row& row, const std::string& key) {
  if (!present(row, key)) return "-";
  const auto& v = row[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

// A table of text cells, rendered as Markdown or HTML; `keys` name each row for the HTML (tests find rows by
// them), `ids` each column.
struct Grid {
  std::string id;
  std::vector<std::string> header;
  std::vector<std::string> ids;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> keys;
};

std::string row_key(const Row& row, std::initializer_list<const char*> columns) {
  std::vector<std::string> parts;
  for (const char* c : columns) parts.push_back(text(row, c));
  return fmt::format("{}", fmt::join(parts, "|"));
}

Grid metrics_grid(const Report& r, bool tasks) {
  Grid g{
      .id = tasks ? "metrics-tasks" : "metrics-families",
      .header = {"model", "knowledge", "arch", "track", "family", "task", "turns", "trajectories", "correct",
                 "verified", "best speedup", "mean speedup ± sd (range, n)", "turns to verified"},
      .ids = {"model", "knowledge", "arch", "track", "family", "task", "turn_limit", "trajectories",
              "correct", "verified", "speedup_best", "speedup_spread", "turns_to_verified"}};
  for (const Row& m : r.metrics.rows) {
    if ((m["task"] != kAll) != tasks) continue;
    const std::string limit = m["turn_limit"].get<std::string>();
    g.rows.push_back(
        {text(m, "model"), text(m, "knowledge"), text(m, "arch"), text(m, "track"), text(m, "family"),
         text(m, "task"), limit == "max" ? fmt::format("max ({})", text(m, "max_turns")) : "≤ " + limit,
         std::to_string(m["trajectories"].get<int>()) +
             (m["not_yet_counted"].get<int>() ? fmt::format(" (+{} unfinished)", text(m, "not_yet_counted"))
                                              : ""),
         rate_cell(m, "correct"), rate_cell(m, "verified"), times(m, "speedup_max"), speedup_spread_cell(m),
         present(m, "turns_to_verified_mean")
             ? fmt::format("{:.2f} (n={})", number(m, "turns_to_verified_mean"),
                           m["turns_to_verified_n"].get<int>())
             : "-"});
    g.keys.push_back(row_key(m, {"model", "knowledge", "arch", "track", "family", "task", "turn_limit"}));
  }
  return g;
}

Grid error_class_grid(const Report& r) {
  std::vector<std::string> outcomes;
  std::map<std::string, std::map<std::string, int>> counts;  // row key -> outcome -> turns
  std::map<std::string, Row> firsts;
  std::vector<std::string> order;
  for (const Row& e : r.error_classes.rows) {
    const std::string key = row_key(e, {"model", "knowledge", "arch", "track", "family", "turn"});
    const std::string outcome = e["outcome"].get<std::string>();
    if (std::find(outcomes.begin(), outcomes.end(), outcome) == outcomes.end()) outcomes.push_back(outcome);
    if (!firsts.count(key)) order.push_back(key), firsts[key] = e;
    counts[key][outcome] = e["turns"].get<int>();
  }
  Grid g{.id = "error-classes", .header = {"model", "knowledge", "arch", "track", "family", "turn", "turns"}};
  g.ids = g.header;
  for (const auto& o : outcomes) g.header.push_back(o), g.ids.push_back(o);
  for (const auto& key : order) {
    const Row& e = firsts[key];
    std::vector<std::string> cells = {text(e, "model"), text(e, "knowledge"), text(e, "arch"),
                                      text(e, "track"), text(e, "family"),    text(e, "turn"),
                                      text(e, "of")};
    for (const auto& o : outcomes) cells.push_back(std::to_string(counts[key][o]));
    g.rows.push_back(cells);
    g.keys.push_back(key);
  }
  return g;
}

Grid tokens_per_turn_grid(const Report& r) {
  Grid g{.id = "tokens-per-turn",
         .header = {"model", "knowledge", "track", "turn", "turns", "input tokens", "output tokens",
                    "reasoning tokens", "latency mean", "latency median", "latency max"},
         .ids = {"model", "knowledge", "track", "turn", "turns", "input_tokens_mean", "output_tokens_mean",
                 "reasoning_tokens_mean", "latency_s_mean", "latency_s_median", "latency_s_max"}};
  for (const Row& t : r.tokens_per_turn.rows) {
    g.rows.push_back({text(t, "model"), text(t, "knowledge"), text(t, "track"), text(t, "turn"), text(t, "turns"),
                      decimal(t, "input_tokens_mean", 0), decimal(t, "output_tokens_mean", 0),
                      decimal(t, "reasoning_tokens_mean", 0), decimal(t, "latency_s_mean", 2, " s"),
                      decimal(t, "latency_s_median", 2, " s"), decimal(t, "latency_s_max", 2, " s")});
    g.keys.push_back(row_key(t, {"model", "knowledge", "track", "turn"}));
  }
  return g;
}

Grid tokens_per_verified_grid(const Report& r) {
  Grid g{.id = "tokens-per-verified",
         .header = {"model", "knowledge", "track", "family", "trajectories", "verified", "turns", "input tokens",
                    "output tokens", "reasoning tokens", "reasoning median", "latency", "latency median"},
         .ids = {"model", "knowledge", "track", "family", "trajectories", "verified", "turns_mean",
                 "input_tokens_mean", "output_tokens_mean", "reasoning_tokens_mean", "reasoning_tokens_median",
                 "latency_s_mean", "latency_s_median"}};
  for (const Row& t : r.tokens_per_verified.rows) {
    g.rows.push_back({text(t, "model"), text(t, "knowledge"), text(t, "track"), text(t, "family"),
                      text(t, "trajectories"),
                      text(t, "verified"), decimal(t, "turns_mean", 2), decimal(t, "input_tokens_mean", 0),
                      decimal(t, "output_tokens_mean", 0), decimal(t, "reasoning_tokens_mean", 0),
                      decimal(t, "reasoning_tokens_median", 0), decimal(t, "latency_s_mean", 2, " s"),
                      decimal(t, "latency_s_median", 2, " s")});
    g.keys.push_back(row_key(t, {"model", "knowledge", "track", "family"}));
  }
  return g;
}

Grid stage_time_grid(const Report& r) {
  Grid g{.id = "stage-times",
         .header = {"host", "stage", "evaluations", "mean", "median", "p90", "max", "total"},
         .ids = {"host", "stage", "evaluations", "mean_s", "median_s", "p90_s", "max_s", "total_s"}};
  for (const Row& s : r.stage_times.rows) {
    g.rows.push_back({text(s, "host"), text(s, "stage"), text(s, "evaluations"), decimal(s, "mean_s", 2, " s"),
                      decimal(s, "median_s", 2, " s"), decimal(s, "p90_s", 2, " s"), decimal(s, "max_s", 2, " s"),
                      decimal(s, "total_s", 1, " s")});
    g.keys.push_back(row_key(s, {"host", "stage"}));
  }
  return g;
}

Grid trajectory_grid(const Report& r) {
  Grid g{.id = "trajectories",
         .header = {"run", "model", "knowledge", "task", "sample", "status", "turns", "correct", "verified",
                    "first verified", "best speedup", "output tokens", "reasoning tokens", "latency"},
         .ids = {"run_id", "model", "knowledge", "task", "sample", "status", "turns", "correct", "verified",
                 "first_verified_turn", "best_speedup", "output_tokens", "reasoning_tokens", "latency_s"}};
  for (const Row& t : r.trajectories.rows) {
    g.rows.push_back(
        {text(t, "run_id"), text(t, "model"), text(t, "knowledge"), text(t, "task"), text(t, "sample"),
         text(t, "status"), fmt::format("{} of {}", text(t, "turns"), text(t, "max_turns")),
         text(t, "correct"), text(t, "verified"), text(t, "first_verified_turn"), times(t, "best_speedup"),
         text(t, "output_tokens"), text(t, "reasoning_tokens"), decimal(t, "latency_s", 2, " s")});
    g.keys.push_back(row_key(t, {"run_id", "task", "sample"}));
  }
  return g;
}

std::string view_cell(const ordered_json& cell) {
  if (cell.is_null()) return "-";
  const Row& c = cell;
  std::string out = rate_cell(c, "verified");
  if (present(c, "speedup_max")) out += "; best " + times(c, "speedup_max");
  if (present(c, "kernel_speedup_of_best"))
    out += " (its kernels " + times(c, "kernel_speedup_of_best") + ")";
  return out;
}

std::vector<Grid> view_grids(const Report& r) {
  std::vector<Grid> grids;
  int index = 0;
  for (const auto& view : r.side_by_side) {
    Grid g{.id = fmt::format("view-{}", ++index), .header = {"family", "task"}, .ids = {"family", "task"}};
    for (const auto& c : view["columns"]) g.header.push_back(c.get<std::string>()), g.ids.push_back(c.get<std::string>());
    for (const auto& row : view["rows"]) {
      std::vector<std::string> cells = {row["family"].get<std::string>(), row["task"].get<std::string>()};
      for (const auto& c : view["columns"]) {
        const std::string name = c.get<std::string>();
        cells.push_back(row["cells"].contains(name) ? view_cell(row["cells"][name]) : "-");
      }
      g.rows.push_back(cells);
      g.keys.push_back(fmt::format("{}|{}", cells[0], cells[1]));
    }
    grids.push_back(std::move(g));
  }
  return grids;
}

std::string view_caption(const ordered_json& view) {
  std::vector<std::string> fixed;
  for (const auto& [key, value] : view["fixed"].items()) fixed.push_back(fmt::format("{} {}", key, value.get<std::string>()));
  const std::string limit = view["turn_limit"].get<std::string>();
  return fmt::format(
      "{}: {}; verified rate within {} (best speedup of a verified turn, and \"its kernels\": that turn's "
      "kernels alone, without the host time inside the call's clocks)",
      view["title"].get<std::string>(), fmt::join(fixed, ", "),
      limit == "max" ? "each run's turns" : "the first " + limit + " turn" + (limit == "1" ? "" : "s"));
}

// ---- Markdown ----

std::string markdown_cell(std::string cell) {
  std::string out;
  for (const char c : cell) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string markdown(const Grid& g) {
  if (g.rows.empty()) return "(none)\n";
  std::string out = "|";
  for (const auto& h : g.header) out += " " + markdown_cell(h) + " |";
  out += "\n|";
  for (size_t i = 0; i < g.header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& row : g.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + markdown_cell(cell) + " |";
    out += "\n";
  }
  return out;
}

// ---- HTML ----

std::string escape_html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html(const Grid& g) {
  if (g.rows.empty()) return "<p class=\"none\">(none)</p>\n";
  std::string out = fmt::format("<div class=\"scroll\"><table id=\"{}\">\n<thead><tr>", escape_html(g.id));
  for (const auto& h : g.header) out += "<th>" + escape_html(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < g.rows.size(); ++r) {
    out += fmt::format("<tr data-key=\"{}\">", escape_html(g.keys[r]));
    for (size_t c = 0; c < g.rows[r].size(); ++c)
      out += fmt::format("<td data-col=\"{}\">{}</td>", escape_html(g.ids[c]), escape_html(g.rows[r][c]));
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

// JSON inside <script>: no "</script>", no "<!--" (every '<' as \u003c, which JSON reads back as '<').
std::string script_json(const ordered_json& value) {
  const std::string text = json_text(value);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

// A script's text inside <script>: "</script" cannot end it early.
std::string script_text(std::string_view code) {
  std::string out(code);
  for (size_t at = out.find("</script"); at != std::string::npos; at = out.find("</script", at + 2))
    out.replace(at, 2, "<\\/");
  return out;
}

std::string runs_markdown(const Report& r) {
  std::string out =
      "| run | model | knowledge | context | feedback | track | turns | samples | trajectories | started | "
      "finished |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& run : r.about["runs"])
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", run["id"].get<int64_t>(),
                    run["model"].get<std::string>(), run["knowledge"].get<std::string>(),
                    run["context"].get<std::string>(), run["feedback"].get<std::string>(),
                    run["track"].get<std::string>(), run["max_turns"].get<int>(), run["samples"].get<int>(),
                    run["trajectories"].get<int>(), run["started_at"].get<std::string>(),
                    run["finished_at"].is_null() ? "(unfinished)" : run["finished_at"].get<std::string>());
  return out;
}

std::string runs_html(const Report& r) {
  std::string out =
      "<div class=\"scroll\"><table id=\"runs\"><thead><tr><th>run</th><th>model</th><th>knowledge</th>"
      "<th>context</th><th>feedback</th><th>track</th><th>turns</th><th>samples</th><th>trajectories</"
      "th><th>started</th><th>finished</th></tr>"
      "</thead><tbody>\n";
  for (const auto& run : r.about["runs"])
    out += fmt::format(
        "<tr "
        "data-key=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</"
        "td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        run["id"].get<int64_t>(), run["id"].get<int64_t>(), escape_html(run["model"].get<std::string>()),
        escape_html(run["knowledge"].get<std::string>()), escape_html(run["context"].get<std::string>()),
        escape_html(run["feedback"].get<std::string>()), escape_html(run["track"].get<std::string>()),
        run["max_turns"].get<int>(), run["samples"].get<int>(), run["trajectories"].get<int>(),
        escape_html(run["started_at"].get<std::string>()),
        run["finished_at"].is_null() ? "(unfinished)" : escape_html(run["finished_at"].get<std::string>()));
  return out + "</tbody></table></div>\n";
}

constexpr const char* kDefinitions =
    "A trajectory counts at turn limit L (L within its run's turns) once it has L finished turns or has ended. "
    "Within its first L turns it is *correct* when a turn passed the correct stage, and *verified* when a turn "
    "passed every stage (correct, the required instructions executed with the coverage, timed); it is undecided, "
    "and left out of the rate, when nothing failed but its host could not judge (no GPU of the task's "
    "architecture). Rates are k of n decided trajectories with a 95% Wilson interval. A trajectory's speedup is "
    "its best verified turn's (vendor library time / solution time); the spread is over trajectories. `max` is "
    "each run's own number of turns.";

}  // namespace

std::string to_csv(const Table& table) {
  auto field = [](const ordered_json& v) -> std::string {
    std::string s;
    if (v.is_null()) return "";
    if (v.is_string())
      s = v.get<std::string>();
    else
      s = v.dump();
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string quoted = "\"";
    for (const char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  };
  std::string out = fmt::format("{}\n", fmt::join(table.columns, ","));
  for (const Row& row : table.rows) {
    std::vector<std::string> cells;
    for (const auto& c : table.columns) cells.push_back(field(row.contains(c) ? row[c] : ordered_json()));
    out += fmt::format("{}\n", fmt::join(cells, ","));
  }
  return valid_utf8(out);
}

ordered_json to_json(const Report& report) {
  ordered_json doc = tagged_ordered(documents::report, report.about);
  for (const Table* t : report.tables()) doc[t->name] = t->rows;
  doc["side_by_side"] = report.side_by_side;
  return doc;
}

std::string to_markdown(const Report& r) {
  std::string out = fmt::format("# ptxbench report\n\nMade by ptxbench {} from {} run(s), tasks matching `{}`.\n\n",
                                PTXBENCH_VERSION, r.about["runs"].size(),
                                r.about["selection"]["tasks"].get<std::string>());
  out += runs_markdown(r);
  out += fmt::format("\n{}\n\n## By family\n\n{}", kDefinitions, markdown(metrics_grid(r, false)));
  out += "\n## Side by side\n\n";
  const auto views = view_grids(r);
  if (views.empty()) out += "Nothing to compare: one model, one knowledge level, one architecture and one track.\n";
  for (size_t i = 0; i < views.size(); ++i)
    out += fmt::format("### {}\n\n{}\n", view_caption(r.side_by_side[i]), markdown(views[i]));
  out += fmt::format("\n## By task\n\n{}", markdown(metrics_grid(r, true)));
  out += fmt::format("\n## Outcomes per turn\n\nFailed turns by error class; `verified` and `undecided` (nothing "
                     "failed, not judged on a GPU) turns beside them.\n\n{}",
                     markdown(error_class_grid(r)));
  out += fmt::format("\n## Tokens and latency per turn\n\nMeans over the turns that reported usage.\n\n{}",
                     markdown(tokens_per_turn_grid(r)));
  out += fmt::format("\n## Cost of a verified trajectory\n\nSums over the turns up to and including the first "
                     "verified one, averaged over verified trajectories.\n\n{}",
                     markdown(tokens_per_verified_grid(r)));
  out += fmt::format("\n## Evaluation time per stage\n\n{}", markdown(stage_time_grid(r)));
  out += fmt::format("\n## Trajectories\n\n{}", markdown(trajectory_grid(r)));
  out += "\nCharts and the trajectory viewer: report.html. The numbers: report.json and the CSV files.\n";
  return valid_utf8(out);
}

ordered_json viewer_data(const Dataset& data) {
  ordered_json trajectories = ordered_json::array();
  std::map<std::string, bool> used;
  for (const auto& t : data.trajectories) {
    ordered_json turns = ordered_json::array();
    std::string previous_hash;
    int previous_index = 0;
    for (const auto& turn : t.turns) {
      ordered_json item = {
          {"turn", turn.index},
          {"outcome", turn.outcome},
          {"error_class", turn.error_class},
          {"verified", turn.verified ? ordered_json(*turn.verified) : nullptr},
          {"speedup", turn.speedup ? ordered_json(*turn.speedup) : nullptr},
          {"input_tokens", turn.input_tokens ? ordered_json(*turn.input_tokens) : nullptr},
          {"output_tokens", turn.output_tokens ? ordered_json(*turn.output_tokens) : nullptr},
          {"reasoning_tokens", turn.reasoning_tokens ? ordered_json(*turn.reasoning_tokens) : nullptr},
          {"latency_s", turn.latency_s ? ordered_json(*turn.latency_s) : nullptr},
          {"code", turn.code_hash.empty() ? nullptr : ordered_json(turn.code_hash)},
          {"feedback", turn.feedback},
          {"reasoning", turn.reasoning.empty() ? nullptr : ordered_json(turn.reasoning)},
          {"diff", nullptr},
          {"diff_against", nullptr}};
      if (!turn.code_hash.empty()) {
        used[turn.code_hash] = true;
        if (!previous_hash.empty()) {
          auto before = data.code.find(previous_hash), after = data.code.find(turn.code_hash);
          if (before != data.code.end() && after != data.code.end()) {
            item["diff"] = unified_diff(before->second, after->second);
            item["diff_against"] = previous_index;
          }
        }
        previous_hash = turn.code_hash;
        previous_index = turn.index;
      }
      turns.push_back(std::move(item));
    }
    trajectories.push_back({{"key", fmt::format("{}|{}|{}", t.run_id, t.task, t.sample)},
                            {"run", t.run_id},
                            {"model", t.model},
                            {"knowledge", t.knowledge},
                            {"task", t.task},
                            {"sample", t.sample},
                            {"status", t.status},
                            {"turns", turns}});
  }
  ordered_json code = ordered_json::object();
  for (const auto& [hash, source] : data.code)
    if (used.count(hash)) code[hash] = source;
  return with_valid_utf8(ordered_json{{"trajectories", trajectories}, {"code", code}});
}

std::string to_html(const Report& r, const ordered_json& viewer) {
  std::string body;
  body += fmt::format(
      "<header><h1>ptxbench report</h1><p>Made by ptxbench {} from {} run(s), tasks matching <code>{}</code>. The "
      "numbers are also in report.json, the CSV files and report.md.</p></header>\n",
      PTXBENCH_VERSION, r.about["runs"].size(), escape_html(r.about["selection"]["tasks"].get<std::string>()));
  body += "<nav><a href=\"#charts\">Charts</a> <a href=\"#families\">By family</a> <a href=\"#side-by-side\">Side by "
          "side</a> <a href=\"#tasks\">By task</a> <a href=\"#outcomes\">Outcomes per turn</a> <a "
          "href=\"#tokens\">Tokens and latency</a> <a href=\"#stages\">Evaluation time</a> <a "
          "href=\"#trajectories\">Trajectories</a> <a href=\"#viewer\">Trajectory viewer</a></nav>\n";
  body += "<section id=\"runs-section\"><h2>Runs</h2>\n" + runs_html(r) + "</section>\n";
  body += "<section id=\"charts\"><h2>Charts</h2><div id=\"chart-grid\"></div></section>\n";
  std::string definitions = escape_html(kDefinitions);
  body += fmt::format("<section id=\"families\"><h2>By family</h2><p class=\"note\">{}</p>\n{}</section>\n",
                      definitions, html(metrics_grid(r, false)));
  body += "<section id=\"side-by-side\"><h2>Side by side</h2>\n";
  const auto views = view_grids(r);
  if (views.empty())
    body += "<p class=\"none\">Nothing to compare: one model, one knowledge level, one architecture and one "
            "track.</p>\n";
  for (size_t i = 0; i < views.size(); ++i)
    body += fmt::format("<h3>{}</h3>\n{}", escape_html(view_caption(r.side_by_side[i])), html(views[i]));
  body += "</section>\n";
  body += fmt::format("<section id=\"tasks\"><h2>By task</h2>\n{}</section>\n", html(metrics_grid(r, true)));
  body += fmt::format("<section id=\"outcomes\"><h2>Outcomes per turn</h2><p class=\"note\">Failed turns by error "
                      "class; verified and undecided (nothing failed, not judged on a GPU) turns beside "
                      "them.</p>\n{}</section>\n",
                      html(error_class_grid(r)));
  body += fmt::format("<section id=\"tokens\"><h2>Tokens and latency per turn</h2>\n{}<h3>Cost of a verified "
                      "trajectory</h3><p class=\"note\">Sums over the turns up to and including the first verified "
                      "one, averaged over verified trajectories.</p>\n{}</section>\n",
                      html(tokens_per_turn_grid(r)), html(tokens_per_verified_grid(r)));
  body += fmt::format("<section id=\"stages\"><h2>Evaluation time per stage</h2>\n{}</section>\n",
                      html(stage_time_grid(r)));
  body += fmt::format("<section id=\"trajectories\"><h2>Trajectories</h2>\n{}</section>\n",
                      html(trajectory_grid(r)));
  body += "<section id=\"viewer\"><h2>Trajectory viewer</h2><p class=\"note\">Each turn's code, the feedback the "
          "model was shown on it in the next turn, and the diff from the previous turn's code.</p>"
          "<label>Trajectory <select id=\"trajectory-select\"></select></label><div id=\"trajectory-view\"></div>"
          "</section>\n";
  return valid_utf8(fmt::format(
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
      "content=\"width=device-width, initial-scale=1\">\n<title>ptxbench report</title>\n<style>\n{}</style>\n"
      "</head>\n<body>\n{}<script type=\"application/json\" id=\"report-data\">{}</script>\n"
      "<script type=\"application/json\" id=\"viewer-data\">{}</script>\n<script>\n{}\n</script>\n<script>\n{}\n"
      "</script>\n</body>\n</html>\n",
      report_style(), body, script_json(to_json(r)), script_json(viewer), script_text(chart_library()),
      script_text(report_script())));
}

std::vector<std::filesystem::path> write_report(const std::filesystem::path& folder, const Dataset& data,
                                                const Report& report) {
  std::filesystem::create_directories(folder);
  std::vector<std::filesystem::path> written;
  auto write = [&](const std::string& name, const std::string& content) {
    write_file(folder / name, content);
    written.push_back(folder / name);
  };
  write("report.json", json_text(to_json(report), 2) + "\n");
  for (const Table* t : report.tables()) write(t->name + ".csv", to_csv(*t));
  write("report.md", to_markdown(report));
  write("report.html", to_html(report, viewer_data(data)));
  return written;
}

}  // namespace ptxbench::report
