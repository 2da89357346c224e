// The solution process's entry: `ptxbench-runner --solution-worker FD` (solution_protocol.h).
#pragma once

namespace ptxbench::runner {

// Serves the runner's requests on the socket `socket` until it closes; returns the process's exit status.
int solution_worker_main(int socket);

}  // namespace ptxbench::runner
