#include "agent/trajectory.h"

#include <fmt/format.h>

#include "agent/extract.h"
#include "agent/feedback.h"
#include "agent/prompt.h"
#include "util/hash.h"
#include "util/text.h"

namespace ptxbench::agent {

using nlohmann::json;

namespace {

// Kept of a failed call's response body, for diagnosis.
constexpr size_t kErrorBodyKept = 4000;

bool hit_token_limit(const std::string& finish_reason) {
  return finish_reason == "length" || finish_reason == "max_tokens" || finish_reason == "MAX_TOKENS";
}

class Driver {
 public:
  explicit Driver(const TrajectoryContext& c) : c_(c) {}

  std::string run() {
    Store& store = *c_.store;
    if (c_.row.status != kRunning) set_status(kRunning);
    for (;;) {
      std::vector<TurnRow> turns = store.turns(c_.row.id);
      if (!turns.empty() && turns.back().finished()) {
        const TurnRow& last = turns.back();
        std::optional<Verdict> verdict;
        if (last.evaluation_id) verdict = store.verdict(last.evaluation_id);
        if (auto stop = stop_status(c_.options, last.index, verdict ? &*verdict : nullptr)) return end(*stop);
      }
      TurnRow turn;
      if (!turns.empty() && !turns.back().finished()) {
        turn = turns.back();  // a turn left unfinished by a crash or an error
        if (!turn.answered()) store.mark_turn_requested(turn.id);
      } else {
        const int index = static_cast<int>(turns.size()) + 1;
        turn.index = index;
        try {
          turn.request = to_json(next_request(turns, index));
        } catch (const ContextTooLarge& e) {  // the model's window: nothing is asked; resumable once it fits
          emit({.turn = index, .outcome = e.what(), .status = kError});
          return end(kError);
        }
        turn.id = store.begin_turn(c_.row.id, index, turn.request);
      }
      if (!turn.answered()) {
        if (!ask(turn)) return end(kError);
      }
      if (!judge(turn)) return end(kError);
    }
  }

 private:
  void set_status(const std::string& status) { c_.store->set_trajectory_status(c_.row.id, status); }

  std::string end(const std::string& status) {
    set_status(status);
    emit({.turn = 0, .outcome = "trajectory " + status, .status = status});
    return status;
  }

  void emit(TurnEvent event) {
    if (!c_.on_event) return;
    event.task_id = c_.row.task_id;
    event.sample = c_.row.sample;
    if (event.status.empty()) event.status = kRunning;
    c_.on_event(event);
  }

  // The request of turn `index` from the turns before it, as stored: the same on a resumed run.
  llm::Request next_request(const std::vector<TurnRow>& turns, int index) {
    if (turns.empty()) return build_request(*c_.track, c_.first_message, 1, {}, c_.context);
    const std::string first = turns.front().request.at("messages").at(0).at("content").get<std::string>();
    std::vector<PreviousTurn> previous;
    for (const TurnRow& turn : turns) {
      PreviousTurn& p = previous.emplace_back(PreviousTurn{.index = turn.index,
                                                           .reply = turn.reply.value_or(""),
                                                           .feedback = turn.feedback,
                                                           .outcome = turn.outcome});
      // The code and the verdict of the turns the request shows in full (compact: the last alone).
      const bool shown = c_.context.policy == ContextPolicy::full || &turn == &turns.back();
      if (shown && !turn.code_hash.empty()) p.code = c_.store->source(turn.code_hash);
      if (shown && turn.evaluation_id)
        if (auto v = c_.store->verdict(turn.evaluation_id)) p.passed = verified(*v);
    }
    return build_request(*c_.track, first, index, previous, c_.context);
  }

  bool ask(TurnRow& turn) {
    emit({.turn = turn.index, .phase = TurnPhase::asking});
    llm::Reply reply;
    try {
      reply = c_.provider->complete(request_from_json(turn.request));
    } catch (const std::exception& e) {
      reply.ok = false;
      reply.error = e.what();
    }
    const json meta = reply_meta(reply);
    // An answer without text is the model's turn, spent: judged as a reply without code (the next turn says
    // so, and names the token limit when that was why), not retried forever on --resume.
    if (!reply.ok && !reply.no_text) {
      c_.store->record_reply_error(turn.id, meta);
      emit({.turn = turn.index,
            .error_class = "provider",
            .outcome = "the model call failed: " + reply.error,
            .status = kError});
      return false;
    }
    const Extraction extraction = extract_code(*c_.track, reply.text);
    c_.store->record_reply(turn.id, reply.text, meta,
                           extraction.found ? std::optional<std::string>(extraction.code) : std::nullopt);
    turn.reply = reply.text;
    turn.reply_meta = meta;
    return true;
  }

  bool judge(TurnRow& turn) {
    const Extraction extraction = extract_code(*c_.track, *turn.reply);
    const std::string finish_reason = turn.reply_meta.value("finish_reason", std::string());
    std::string notes;
    if (turn.reply->empty())
      notes += fmt::format("Note: your reply had no text ({}).\n",
                           turn.reply_meta.value("error", std::string("the provider gave none")));
    if (hit_token_limit(finish_reason)) notes += "Note: your reply stopped at the output token limit.\n";
    if (!extraction.found) {
      const TurnEnd end{.error_class = to_string(ErrorClass::extraction),
                        .outcome = "no code: " + extraction.problem.substr(0, extraction.problem.find('.')),
                        .feedback = notes + extraction.problem};
      c_.store->finish_turn(turn.id, end, nullptr, "", c_.run_id);
      emit({.turn = turn.index, .error_class = end.error_class, .outcome = end.outcome});
      return true;
    }
    if (extraction.unterminated)
      notes +=
          "Note: your reply ended inside the code block; the code up to the end of the reply was compiled.\n";
    if (const auto before = judged_before(extraction.code, turn.index)) {
      // The same code as an earlier turn of this trajectory: its verdict (where a failed call failed
      // included) stands, and the GPU is not spent on it again.
      const TurnEnd end{
          .error_class = to_string(classify(before->verdict)),
          .outcome = before->verdict.summary(),
          .feedback =
              notes +
              fmt::format("Note: this code is the same as your turn {}'s; it was not judged again, and that "
                          "turn's verdict stands.\n",
                          before->turn) +
              compact_feedback(before->verdict)};
      c_.store->finish_turn_judged_before(turn.id, end, before->evaluation_id);
      emit({.turn = turn.index, .error_class = end.error_class, .outcome = end.outcome});
      return true;
    }
    Verdict verdict;
    emit({.turn = turn.index, .phase = TurnPhase::judging});
    try {
      verdict = c_.evaluator->evaluate(
          {extraction.code,
           fmt::format("sample{}-turn{}{}", c_.row.sample, turn.index, c_.track->extension()), c_.track},
          *c_.task);
    } catch (const std::exception& e) {
      emit({.turn = turn.index,
            .error_class = "harness",
            .outcome = std::string("the judge failed: ") + e.what(),
            .status = kError});
      return false;
    }
    if (verdict.overall() == OverallStatus::error) {
      // ptxbench could not judge: that says nothing about the code, so the turn is not spent; --resume judges
      // again.
      emit({.turn = turn.index, .error_class = "harness", .outcome = verdict.summary(), .status = kError});
      return false;
    }
    const TurnEnd end{.error_class = to_string(classify(verdict)),
                      .outcome = verdict.summary(),
                      .feedback = notes + compact_feedback(verdict)};
    c_.store->finish_turn(turn.id, end, &verdict, extraction.code, c_.run_id);
    emit({.turn = turn.index, .error_class = end.error_class, .outcome = end.outcome});
    return true;
  }

  struct JudgedBefore {
    int turn = 0;
    int64_t evaluation_id = 0;
    Verdict verdict;
  };
  // The first earlier turn of this trajectory that was judged on exactly this code, if any.
  std::optional<JudgedBefore> judged_before(const std::string& code, int index) {
    const std::string hash = sha256_hex(code);
    for (const TurnRow& earlier : c_.store->turns(c_.row.id)) {
      if (earlier.index >= index || earlier.code_hash != hash || earlier.evaluation_id == 0) continue;
      if (auto verdict = c_.store->verdict(earlier.evaluation_id))
        return JudgedBefore{earlier.index, earlier.evaluation_id, std::move(*verdict)};
    }
    return std::nullopt;
  }

  const TrajectoryContext& c_;
};

}  // namespace

json reply_meta(const llm::Reply& reply) {
  json meta = {{"finish_reason", reply.finish_reason},
               {"attempts", reply.attempts},
               {"http_status", reply.http_status},
               {"latency_s", reply.latency_s}};
  // Without a report there is no count: 0 tokens would be averaged into the report's token figures.
  if (reply.usage.reported)
    meta["usage"] = {{"input_tokens", reply.usage.input_tokens},
                     {"output_tokens", reply.usage.output_tokens},
                     {"reasoning_tokens", reply.usage.reasoning_tokens}};
  // The reasoning text the server returned beside the answer (vLLM, SGLang, OpenRouter): kept with the turn.
  if (!reply.reasoning.empty()) meta["reasoning"] = reply.reasoning;
  if (!reply.ok) {
    meta["error"] = reply.error;
    meta["response_body"] = utf8_head(reply.response_body, kErrorBodyKept);
  }
  return meta;
}

bool is_terminal(const std::string& status) {
  return status == kSolved || status == kUnverified || status == kFinished;
}

std::optional<std::string> stop_status(const LoopOptions& options, int index, const Verdict* verdict) {
  if (options.stop_when_verified && verdict) {
    if (verified(*verdict) &&
        (!options.target_speedup || verdict->speedup.value_or(0) >= *options.target_speedup))
      return std::string(kSolved);
    // Nothing failed, yet something was skipped: no GPU here (or a static-only task). More turns cannot
    // change that, and the model has nothing to fix.
    if (verdict->overall() == OverallStatus::incomplete) return std::string(kUnverified);
  }
  if (index >= options.max_turns) return std::string(kFinished);
  return std::nullopt;
}

std::string run_trajectory(const TrajectoryContext& context) {
  return Driver(context).run();
}

}  // namespace ptxbench::agent
