#include "cli/progress.h"

#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace ptxbench {

namespace {

std::FILE* g_tputs_target = stderr;  // tputs writes one character at a time through a plain function
int put_character(int c) {
  return std::fputc(c, g_tputs_target);
}

std::string phase_text(const ProgressState::Trajectory& t) {
  if (t.status == "pending") return "pending";
  if (t.ended) return fmt::format("{} t{}", t.status, t.finished_turns);
  return fmt::format("{} t{}", t.status, t.turn);
}

std::string fit(std::string line, int width) {
  const size_t limit = static_cast<size_t>(std::max(10, width - 1));
  if (line.size() > limit) line = line.substr(0, limit - 3) + "...";
  return line;
}

}  // namespace

void ProgressState::apply(const agent::TurnEvent& e) {
  Trajectory& t = trajectories[{e.task_id, e.sample}];
  if (e.turn == 0) {  // the trajectory ended (or stopped on an error)
    t.status = e.status;
    if (agent::is_terminal(e.status) && !t.ended) {
      t.ended = true;
      ++ended_here;
    }
    return;
  }
  t.turn = e.turn;
  switch (e.phase) {
    case agent::TurnPhase::asking:
      t.status = "asking";
      break;
    case agent::TurnPhase::judging:
      t.status = "judging";
      break;
    case agent::TurnPhase::done:
      if (e.status == agent::kError) {
        t.status = "error";
        break;
      }
      t.status = e.error_class.empty() ? "passed" : e.error_class;
      t.finished_turns = std::max(t.finished_turns, e.turn);
      ++turns_here;
      break;
  }
}

int ProgressState::in_flight() const {
  int n = 0;
  for (const auto& [key, t] : trajectories) n += t.status == "judging";
  return n;
}

int ProgressState::turns_left_at_most() const {
  int n = 0;
  for (const auto& [key, t] : trajectories)
    if (!t.ended) n += std::max(0, max_turns - t.finished_turns);
  return n;
}

std::string human_duration(std::chrono::seconds seconds) {
  const long long s = seconds.count();
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::vector<std::string> render_progress(const ProgressState& state, std::chrono::seconds elapsed, int width,
                                         int height) {
  std::vector<std::string> rows;
  rows.push_back(fit(state.title, width));
  const int total = state.total(), ended = state.ended();
  const int bar_width = 12;
  const int filled = total ? ended * bar_width / total : 0;
  std::string estimate = "estimating";
  const double seconds = static_cast<double>(elapsed.count());
  if (ended == total) {
    estimate = "done";
  } else if (state.ended_here > 0) {
    estimate = "~" + human_duration(std::chrono::seconds(static_cast<long long>(
                         seconds / state.ended_here * (total - ended))));
  } else if (state.turns_here > 0) {
    estimate = "at most ~" + human_duration(std::chrono::seconds(static_cast<long long>(
                                 seconds / state.turns_here * state.turns_left_at_most())));
  }
  // What matters most first: a narrow terminal cuts the end of the line.
  rows.push_back(fit(fmt::format("[{}{}] trajectories {}/{} ended | elapsed {} | left {} | evaluations in flight "
                                 "{} | turns {} done, at most {} to go",
                                 std::string(filled, '#'), std::string(bar_width - filled, '.'), ended, total,
                                 human_duration(elapsed), estimate, state.in_flight(),
                                 state.turns_before + state.turns_here, state.turns_left_at_most()),
                     width));
  // Tasks: those with work under way first, then those not begun, then those done.
  struct TaskLine {
    int rank;
    std::string task, text;
  };
  std::map<std::string, std::vector<std::pair<int, const ProgressState::Trajectory*>>> by_task;
  for (const auto& [key, t] : state.trajectories) by_task[key.first].push_back({key.second, &t});
  std::vector<TaskLine> tasks;
  size_t task_width = 0;
  for (const auto& [task, samples] : by_task) task_width = std::max(task_width, task.size());
  for (const auto& [task, samples] : by_task) {
    bool active = false, all_ended = true;
    std::vector<std::string> parts;
    for (const auto& [sample, t] : samples) {
      active = active || (!t->ended && t->status != "pending");
      all_ended = all_ended && t->ended;
      parts.push_back(fmt::format("#{} {}", sample, phase_text(*t)));
    }
    tasks.push_back({active ? 0 : all_ended ? 2 : 1, task,
                     fmt::format("  {:<{}}  {}", task, task_width, fmt::join(parts, "  "))});
  }
  std::stable_sort(tasks.begin(), tasks.end(), [](const TaskLine& a, const TaskLine& b) { return a.rank < b.rank; });
  const int room = std::max(1, height - 1 - static_cast<int>(rows.size()));
  const int shown = static_cast<int>(tasks.size()) <= room ? static_cast<int>(tasks.size()) : room - 1;
  for (int i = 0; i < shown; ++i) rows.push_back(fit(tasks[i].text, width));
  if (shown < static_cast<int>(tasks.size())) {
    int waiting = 0, done = 0;
    for (size_t i = shown; i < tasks.size(); ++i) (tasks[i].rank == 2 ? done : waiting) += 1;
    rows.push_back(fit(fmt::format("  ... {} more task(s): {} under way or waiting, {} done",
                                    tasks.size() - shown, waiting, done),
                        width));
  }
  return rows;
}

RunProgress::RunProgress(ProgressMode mode, ProgressState initial, std::FILE* out)
    : out_(out), state_(std::move(initial)) {
  if (mode != ProgressMode::plain && isatty(fileno(out_))) {
    int error = 0;
    if (setupterm(nullptr, fileno(out_), &error) == 0) {  // 0: OK
      auto capability = [](const char* name) -> std::string {
        const char* value = tigetstr(const_cast<char*>(name));
        return value && value != reinterpret_cast<char*>(-1) ? value : "";
      };
      up_ = capability("cuu1");
      clear_down_ = capability("ed");
      carriage_return_ = capability("cr");
      live_ = !up_.empty() && !clear_down_.empty() && !carriage_return_.empty();
    }
  }
  if (live_) {
    std::lock_guard lock(mutex_);
    redraw({});
    ticker_ = std::thread([this] {
      std::unique_lock held(mutex_);
      while (!done_) {
        wake_.wait_for(held, std::chrono::seconds(1));
        if (!done_) redraw({});
      }
    });
  }
}

RunProgress::~RunProgress() {
  finish();
}

void RunProgress::put(const char* capability) {
  g_tputs_target = out_;
  tputs(capability, 1, put_character);
}

void RunProgress::redraw(const std::vector<std::string>& log) {
  winsize size{};
  int width = 100, height = 30;
  if (ioctl(fileno(out_), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    width = size.ws_col;
    height = size.ws_row;
  }
  // Back to the frame's first line, and clear from there down.
  put(carriage_return_.c_str());
  for (int i = 0; i < drawn_lines_; ++i) put(up_.c_str());
  put(clear_down_.c_str());
  for (const auto& line : log) std::fprintf(out_, "%s\n", line.c_str());
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_);
  const auto frame = render_progress(state_, elapsed, width, std::max(4, height / 2));
  for (const auto& line : frame) std::fprintf(out_, "%s\n", line.c_str());
  drawn_lines_ = static_cast<int>(frame.size());
  std::fflush(out_);
}

void RunProgress::on_event(const agent::TurnEvent& e) {
  std::unique_lock lock(mutex_);
  state_.apply(e);
  // The log: one line per finished turn and ended trajectory, as off a terminal.
  std::string line;
  if (e.turn == 0)
    line = fmt::format("  [{}/{}] {} #{}: {}{}", state_.ended(), state_.total(), e.task_id, e.sample, e.status,
                       e.status == agent::kError ? ": " + e.outcome : "");
  else if (e.phase == agent::TurnPhase::done)
    line = fmt::format("  {} #{} turn {}: {:<13} {}", e.task_id, e.sample, e.turn,
                       e.error_class.empty() ? "ok" : e.error_class, e.outcome.substr(0, 160));
  if (!live_) {
    if (!line.empty()) std::fprintf(out_, "%s\n", line.c_str());
    return;
  }
  redraw(line.empty() ? std::vector<std::string>{} : std::vector<std::string>{line});
}

void RunProgress::finish() {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    if (live_) redraw({});
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

}  // namespace ptxbench
