// The launches and tensor counts the solution process reported for the calls of one mode, summarised for the
// result document: the parent binds the instruction stage's proof to them (src/eval/launch_binding.h).
#pragma once

#include <string>
#include <vector>

#include "runner/family.h"
#include "runner/solution_protocol.h"

namespace ptxbench::runner {

class SolutionProcess;

class LaunchLog {
 public:
  // One call, by its reply's call_index; `where` names it ("timed call 7"); `counted`: it was kCounted.
  void note(const solution::Reply& reply, const std::string& where, bool counted);

  // Asks the solution process what it recorded of each noted call (once the calls are over) and summarises:
  // {"recorder": "recorded" | "unavailable", "problem", "calls",
  //  "signatures": [{"calls", "launch_count", "launches": [{"name", "name_hash", "grid", "block", "cluster",
  //                  "dynamic_shared_bytes", "duration_us"}]}],
  //  "counted": [{"where", "mma", "tensor"} | {"where", "problem"}]}:
  // the calls grouped by the launches they made (everything but durations equal; each duration the median
  // over the group), and the counted calls.
  Json collect(SolutionProcess& solution);

 private:
  struct Noted {
    uint32_t index;
    std::string where;
    bool counted;
  };
  struct Group {
    std::vector<solution::Launch> launches;  // the first call's
    uint32_t launch_count = 0;
    std::vector<std::vector<double>> durations_us;  // per launch, over the group's calls
    int calls = 0;
  };
  void add(const solution::Reply& recorded, const Noted& call);
  Json summary() const;

  std::vector<Noted> noted_;
  std::vector<Group> groups_;
  int calls_ = 0;
  std::string problem_;
  Json counted_ = Json::array();
};

}  // namespace ptxbench::runner
