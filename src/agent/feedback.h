// What a verdict means to the agent: the compact text the model sees next turn, the class of a failed turn,
// and whether the trajectory may stop.
#pragma once

#include <optional>
#include <string>

#include "eval/verdict.h"

namespace ptxbench::agent {

// Why a turn failed, from the first failing stage of its verdict (docs/agent.md):
//   compile (compile failed; or static, for an entry point the library does not export alone), forbidden
//   (static: forbidden means; its own class, because it is a rule broken,
//   not a program the compiler rejected), memory_safety (sanitize), timeout (any stage timed out), runtime
//   (any stage crashed or the call returned an error), numerical (correct; or time, when the timed calls'
//   output was wrong), instruction (instructions), extraction (no code in the reply). Not the model's code:
//   harness (ptxbench could not judge), provider (the model call failed after its retries). none: the turn
//   did not fail.
enum class ErrorClass {
  none,
  compile,
  forbidden,
  memory_safety,
  timeout,
  runtime,
  numerical,
  instruction,
  timing,  // the time stage: the timed calls' output wrong, or faster than the hardware allows
  extraction,
  harness,
  provider
};

std::string to_string(ErrorClass error_class);
std::optional<ErrorClass> error_class_from_string(const std::string& text);
// The classes a failed submission or reply can have, in the order summaries show them.
inline constexpr ErrorClass kFailureClasses[] = {
    ErrorClass::compile, ErrorClass::forbidden, ErrorClass::memory_safety, ErrorClass::timeout,
    ErrorClass::runtime, ErrorClass::numerical, ErrorClass::instruction,   ErrorClass::timing,
    ErrorClass::extraction};

ErrorClass classify(const Verdict& verdict);

// Limits that keep the feedback compact: each stage's message, and the whole text.
struct FeedbackLimits {
  size_t stage_chars = 1500;
  size_t stage_lines = 24;
  size_t total_chars = 6000;
};

// The verdict as the model sees it: the one-line summary, every stage that did not pass with its (capped)
// message, stages skipped for one reason grouped on one line, the ptxas warnings, coverage and speed, and the
// profile summary when the instruction stage made one (run --feedback profile).
std::string compact_feedback(const Verdict& verdict, const FeedbackLimits& limits = {});
// The profile summary's text (eval/profile_summary.h) with the compile's spills, or "" when the verdict has
// none.
std::string profile_feedback(const Verdict& verdict);

// Correct, and the required instructions verified as executed (with the coverage): every stage passed.
bool verified(const Verdict& verdict);
// Nothing failed, and what did not pass was skipped (no GPU here, a static-only task): the best this host can
// say.
bool nothing_failed(const Verdict& verdict);

}  // namespace ptxbench::agent
