// Tracks: the language a solution is written in, and everything the judge and the agent do differently for
// it. CUDA (one .cu file, compiled by nvcc into a library with C entry points) is one track; Triton (one
// Python file whose entry points launch Triton kernels) is the other. Tasks, inputs, tolerances, timing, the
// sandbox and the instruction proof are shared, which is what makes the tracks comparable. A task file says
// which tracks it accepts (docs/tasks.md); `--track` chooses one for a run.
#pragma once

#include <string>
#include <vector>

#include "compile/compile.h"
#include "compile/forbidden.h"
#include "arch/profile.h"
#include "task/task.h"

namespace ptxbench {

// A track's knowledge kit for one architecture, as the agent's prompt shows it (agent/prompt.h): params.md,
// the template files, contracts.md.
struct KitLayout {
  std::string folder;              // under kits/: "hopper"
  std::string shared_folder;       // under kits/, what every architecture shares: "common" ("" for none)
  std::string title;               // "Hopper kit"
  std::string templates;           // the template files' folder in it: "ptx"
  std::string template_extension;  // ".cuh"
  std::string templates_intro;     // the line before the templates: how a solution uses them
  std::string no_templates;        // the params level's line: what to do without them
  std::string no_template_files;   // the line when the folder holds none
  std::string no_kit;              // what to do when the kit does not exist (after "does not exist yet: ")
};

// The solution process that loads a track's solution and calls its entry point in the GPU stages.
struct SolutionWorker {
  bool implemented = false;
  std::string loads;    // what it loads and how it calls the entry point, for people
  std::string missing;  // when !implemented: why the GPU stages cannot run, for the verdict
};

class Track {
 public:
  virtual ~Track() = default;

  // "cuda", "triton": the name in task files, --track, verdicts, run settings and the service's requests.
  virtual std::string name() const = 0;
  virtual std::string title() const = 0;  // "CUDA", "Triton", for people

  // The artefact: the solution's file name in its work folder ("solution.cu"); its extension names the
  // agent's files and tells a Triton file given to a CUDA run.
  virtual std::string source_name() const = 0;
  std::string extension() const;  // ".cu"

  // The compile stage: nvcc into a library (CUDA), or parsing the source (Triton, whose kernels are compiled
  // on the GPU at the first call). Never throws for a bad solution; a failing host is a toolchain_error.
  virtual CompileResult compile(const std::string& source, const Task& task,
                                const CompileOptions& options) const = 0;
  // The static stage's scan of the source and of what compile() made of it: forbidden means, and the task's
  // entry points where compile() did not check them. Throws std::runtime_error when the scan itself cannot
  // run (a host failure, not the solution's).
  virtual std::vector<Violation> scan(const std::string& source, const CompileResult& compiled,
                                      const Task& task, const CompileOptions& options) const = 0;

  virtual SolutionWorker worker() const = 0;

  // The agent's prompt: the system prompt, and the task statement's lines that depend on the track.
  virtual std::string system_prompt() const = 0;
  virtual std::string toolchain(const ArchProfile& arch) const = 0;  // after "Architecture: sm_90a (Hopper)"
  virtual std::string entry_point(const Family& family) const = 0;  // where declared, then the signature
  virtual std::string file_start() const = 0;                           // how the file begins
  virtual KitLayout kit(const ArchProfile& arch) const = 0;

  // Code fences: the language a model is asked for and shown ("cuda"), the fence languages taken as this
  // track's code ("" included: an unlabelled block), and the words for what is asked.
  virtual std::string fence() const = 0;
  virtual bool takes_fence(const std::string& language) const = 0;
  virtual std::string file_noun() const = 0;      // ".cu file": "the whole .cu file"
  virtual std::string language_noun() const = 0;  // "CUDA/C++": "no CUDA/C++ code block"
};

const Track& cuda_track();
const Track& triton_track();
const std::vector<const Track*>& all_tracks();
const Track* find_track(const std::string& name);  // nullptr for an unknown name
std::string track_names();                         // "cuda, triton"
// The track whose solutions have this file's extension ("x.py": triton), nullptr for none.
const Track* track_of_file(const std::string& file_name);

// The compile stage and the static stage's scan of a solution in `track`: track.compile(), then track.scan()
// into the result's violations. A scan that cannot run makes the result a toolchain_error.
CompileResult compile_solution(const Track& track, const std::string& source, const Task& task,
                               const CompileOptions& options);

// Whether `task` accepts `track` (task.tracks), and the error a run or an evaluation gives when it does not.
bool accepts(const Task& task, const Track& track);
std::string not_accepted(const Task& task, const Track& track);

}  // namespace ptxbench
