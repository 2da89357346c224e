#include "track/track.h"

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>
#include <ranges>

#include "util/text.h"

namespace ptxbench {

std::string Track::extension() const {
  return std::filesystem::path(source_name()).extension().string();
}

const std::vector<const Track*>& all_tracks() {
  static const std::vector<const Track*> tracks = {&cuda_track(), &triton_track()};
  return tracks;
}

const Track* find_track(const std::string& name) {
  for (const Track* track : all_tracks())
    if (track->name() == name) return track;
  return nullptr;
}

std::string track_names() {
  return fmt::format("{}", fmt::join(all_tracks() | std::views::transform(&Track::name), ", "));
}

const Track* track_of_file(const std::string& file_name) {
  const std::string extension = std::filesystem::path(file_name).extension().string();
  for (const Track* track : all_tracks())
    if (!extension.empty() && track->extension() == extension) return track;
  return nullptr;
}

CompileResult compile_solution(const Track& track, const std::string& source, const Task& task,
                               const CompileOptions& options) {
  CompileResult result = track.compile(source, task, options);
  try {
    result.violations = track.scan(source, result, task, options);
  } catch (const std::exception& e) {
    // The scan's tool failed: the solution was not checked, so it must not pass, and the failure is the
    // host's.
    result.status = CompileResult::Status::toolchain_error;
    result.diagnostics =
        fmt::format("the forbidden-means scan failed on this host, not on the source: {}\n{}",
                    valid_utf8(e.what()), result.diagnostics);
  }
  return result;
}

bool accepts(const Task& task, const Track& track) {
  return std::find(task.tracks.begin(), task.tracks.end(), track.name()) != task.tracks.end();
}

std::string not_accepted(const Task& task, const Track& track) {
  return fmt::format("task {} does not accept the {} track (it accepts: {})", task.id, track.name(),
                     fmt::join(task.tracks, ", "));
}

}  // namespace ptxbench
