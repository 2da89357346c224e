// Fixit: supervised fine-tuning data from a model's failed turns (docs/fixit.md). Four steps on the store, each
// stored as a run so that it can be listed, resumed and pointed to:
//   mine    (run kind "fixit-mine"):   failed turns (or verified ones, for direct generation) selected from agent
//                                      runs, deduplicated by normalised code, with or without quotas;
//   repair  (run kind "fixit-repair"): a teacher fixes each through the agent loop, judged by the full pipeline;
//                                      only verified fixes count (correct-only ones are kept apart, marked);
//   reason  (run kind "fixit-reason"): a reasoning model explains the way from the failure to the fix, checked
//                                      for length and for not pasting the code;
//   export  (dataset.h):               chat JSONL and a data card.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/agent_run.h"
#include "agent/feedback.h"
#include "eval/evaluator.h"
#include "llm/provider.h"
#include "store/store.h"
#include "task/task.h"

namespace ptxbench::fixit {

inline constexpr const char* kMineKind = "fixit-mine";
inline constexpr const char* kRepairKind = "fixit-repair";
inline constexpr const char* kReasonKind = "fixit-reason";

// The code with comments removed and every run of whitespace made one space: two attempts that differ only in
// those are one attempt.
std::string normalize_code(const std::string& code);

// One mined turn: a failed attempt (or, with MineOptions::correct, a verified solution).
struct Mined {
  int64_t run_id = 0;
  int64_t trajectory_id = 0;
  int turn = 0;  // 1-based
  std::string task_id;
  std::string model;        // the model that wrote it
  std::string knowledge;    // what that model was shown
  std::string error_class;  // empty for a verified solution
  std::string code_hash;    // the code in the store's submissions
  int64_t evaluation_id = 0;
  std::string normalized_hash;  // sha256 of normalize_code(code)
};
nlohmann::json to_json(const Mined& item);
Mined mined_from_json(const nlohmann::json& doc);
// Whether a mined failure can have this class: a failed turn's with code (a reply without any, extraction, is
// not mined).
bool minable_class(agent::ErrorClass c);

struct Quotas {
  int per_task = 0;   // at most this many per task, stratified by error class and turn; 0: no limit
  int per_class = 0;  // at most this many per (task, error class); 0: no limit
  bool any() const { return per_task > 0 || per_class > 0; }
};

struct MineOptions {
  std::vector<int64_t> runs;  // agent runs; empty: every agent run in the store
  std::string model;          // the model that wrote the turns; empty: any
  std::string tasks = "*";    // glob over task ids
  std::vector<std::string> error_classes;  // empty: every class a failed turn with code can have
  int min_turn = 1;
  int max_turn = 0;      // 0: no limit
  bool correct = false;  // verified turns instead of failed ones: direct-generation data
  Quotas quotas;         // none: every distinct turn (unbalanced)
  uint64_t seed = 1;     // which turns a quota keeps
};
nlohmann::json to_json(const MineOptions& options);
MineOptions mine_options_from_json(const nlohmann::json& doc);  // throws std::invalid_argument

// The turns that match, deduplicated by (task, normalised code) (the earliest turn is kept), then balanced by
// the quotas. Ordered by task, then error class, then turn.
std::vector<Mined> mine(Store& store, const TaskRegistry& registry, const MineOptions& options);

// Balancing alone: per task, strata of (error class, turn) are drawn from in turn, each in an order fixed by
// the seed, until the task's quota is met, and no (task, class) beyond its own quota. Returns the indices of
// the items kept, in the order of `items`.
std::vector<size_t> balance(const std::vector<const Mined*>& items, const Quotas& quotas, uint64_t seed);

// The mined set as a run (kind "fixit-mine") holding the options and the items; returns its id.
int64_t store_mined(Store& store, const MineOptions& options, const std::vector<Mined>& items);
std::vector<Mined> mined_set(Store& store, int64_t mine_run);  // throws std::invalid_argument

// --- repair ---------------------------------------------------------------------------------------------

struct RepairSettings {
  std::string teacher;           // a catalogue name or "reference"
  nlohmann::json teacher_spec;   // its catalogue entry, as stored
  int64_t mine_run = 0;
  int turns = 5;                 // fix turns at most
  std::string knowledge = "contracts";
  bool cpu_only = false;
};

// The first message of a repair: the task (as the failed model saw it), its failed code and the verdict on it.
std::string repair_message(const std::string& task_first_message, const std::string& failed_code,
                           const std::string& feedback);

// Begins the repair run: one trajectory per mined item (task, sample k = the item's place among its task's).
int64_t start_repair(Store& store, const RepairSettings& settings, const std::vector<Mined>& items);
RepairSettings repair_settings_from_json(const nlohmann::json& args);  // throws std::invalid_argument

// Drives the repair run's trajectories (resumable: what is stored is never asked again) through the agent
// loop, stopping each at its first verified turn.
agent::AgentRunResult run_repair(int64_t run_id, Store& store, const TaskRegistry& registry,
                                 llm::Provider& teacher, Evaluator& judge,
                                 const std::filesystem::path& kits_dir, int parallel = 4,
                                 std::function<void(const agent::TurnEvent&)> on_event = {});

// What became of one mined item.
inline constexpr const char* kVerified = "verified";          // every stage passed: the only fixes used
inline constexpr const char* kCorrectOnly = "correct_only";   // correct, but the instructions failed
inline constexpr const char* kUnverifiedFix = "unverified";   // nothing failed, but this host cannot verify
inline constexpr const char* kNotFixed = "not_fixed";         // every turn failed
inline constexpr const char* kPendingFix = "pending";         // the trajectory is not done (resume it)

struct Repair {
  Mined failure;
  int64_t trajectory_id = 0;
  std::string status;          // one of the above
  int fix_turn = 0;            // the turn of the fix (verified, else correct-only, else unverified)
  int64_t fix_evaluation_id = 0;
  std::string fix_hash;        // the fix's code in submissions
  std::string teacher;
};
std::vector<Repair> repairs(Store& store, int64_t repair_run);

// --- reason ---------------------------------------------------------------------------------------------

struct ReasonLimits {
  size_t min_chars = 200;
  size_t max_chars = 6000;
  size_t max_code_lines = 3;  // lines of the code (at least 24 characters) that may be quoted verbatim
};

// Why a reasoning is refused, or empty when it is accepted: out of the length limits, a code block, or more
// than max_code_lines lines of the fix or the failed code quoted.
std::string check_reasoning(const std::string& text, const std::string& failed_code,
                            const std::string& fix_code, const ReasonLimits& limits);

struct ReasonSettings {
  std::string reasoner;
  nlohmann::json reasoner_spec;
  int64_t repair_run = 0;
  ReasonLimits limits;
  int attempts = 2;  // asks per fix, a refused reasoning is asked again
};

llm::Request reason_request(const Task& task, const std::string& failed_code, const std::string& feedback,
                            const std::string& fix_code, const ReasonLimits& limits);

// Begins the reasoning run: one trajectory per verified repair (same task and sample as in the repair run);
// with `only`, per verified repair whose trajectory id is in it.
int64_t start_reasoning(Store& store, const ReasonSettings& settings,
                        const std::optional<std::set<int64_t>>& only = std::nullopt);
ReasonSettings reason_settings_from_json(const nlohmann::json& args);

struct ReasonResult {
  int fixes = 0;
  int accepted = 0;
  int refused = 0;  // every attempt refused
  int errors = 0;   // the model call failed: resume
};
// Resumable: a finished attempt is never asked again.
ReasonResult run_reasoning(int64_t run_id, Store& store, const TaskRegistry& registry,
                           llm::Provider& reasoner,
                           std::function<void(const std::string& line)> on_event = {});

// The accepted reasoning per repair trajectory id.
std::map<int64_t, std::string> reasonings(Store& store, int64_t reason_run);

// The built-in offline reasoner ("reference"): a short explanation written from the verdict and the size of
// the change alone. It exercises the flow; it is no teacher.
class ReferenceReasoner : public llm::Provider {
 public:
  llm::Reply complete(const llm::Request& request) override;
};

}  // namespace ptxbench::fixit
