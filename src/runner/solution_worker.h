// The solution process: `ptxbench-runner --solution-worker FD` for a CUDA solution, or the Python host of a
// Triton one (python_worker.h), started by the runner (solution_process.cpp). Either serves the runner's
// requests (solution_protocol.h) with the same worker; they differ only in how they reach the solution
// (solution_binding.h).
#pragma once

#include <string>

#include "runner/landlock.h"
#include "runner/solution_binding.h"

namespace ptxbench::runner {

// Serves the runner's requests on `socket` until it closes, reaching the solution through `binding`; returns
// the process's exit status.
int serve_solution(int socket, Confinement confinement, SolutionBinding& binding);

// Answers the runner's first request (open) with `reason`, a failure of the host (the Triton host's python
// lacks torch), and serves nothing; returns the process's exit status.
int refuse_to_serve(int socket, const std::string& reason);

// The CUDA track's worker: confines the process, then serves with the shared-library binding.
int solution_worker_main(int socket);

}  // namespace ptxbench::runner
