// The Triton track's solution process: python3 runs the trusted host script (triton_worker.py), which loads
// the worker library (libptxbench-solution-worker.so, this interface) with ctypes, confines the process, then
// hands the worker its socket and four callbacks through which the worker reaches the solution's Python entry
// points. The worker (solution_worker.cpp) keeps the protocol, the IPC buffers, the stream, the events, the
// clocks and the CUPTI recorders; the script only turns the arguments of each request into torch tensors and
// calls the entry point. Every callback returns 0 on success and otherwise writes a NUL-terminated message of
// at most `capacity` bytes into `message`.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

struct ptxbench_python_callbacks {
  // Imports the solution file `path` and finds its functions `entry` and `workspace` ("" for none), the
  // entry point's arguments being of the kinds `codes` lists (solution_protocol.h's LoadRequest).
  int (*load)(const char* path, const char* entry, const char* workspace, const char* codes, char* message,
              size_t capacity);
  // Makes the tensors for the next call from the runner's buffers as mapped here (device addresses and sizes
  // in bytes, 0 for a null pointer), each with its element type (family.h's DType), rank and extents
  // (`extents` holds solution::kMaxRank per pointer), and makes `stream` (a cudaStream_t) current; the ints
  // and floats are the other arguments, in order.
  int (*prepare)(const uint64_t* pointers, const uint64_t* bytes, const uint8_t* dtypes, const uint8_t* ranks,
                 const int64_t* extents, uint32_t pointer_count, const int64_t* ints, uint32_t int_count,
                 const float* floats, uint32_t float_count, uint64_t stream, char* message, size_t capacity);
  // Calls the entry point with the prepared arguments. 0: it returned, and *returned is its value (None is
  // 0); 1: it raised, and `message` says what; any other value: the script itself failed.
  int (*call)(int64_t* returned, char* message, size_t capacity);
  // The workspace function's answer for these ints.
  int (*workspace_bytes)(const int64_t* ints, uint32_t count, uint64_t* bytes, char* message,
                         size_t capacity);
};

// Confines the process's writes (solution_worker.h); the script calls it first, before it imports anything
// that starts a thread. Returns the number of threads the process had then, 0 when Landlock was not applied.
uint32_t ptxbench_worker_confine(void);

// Serves the runner's requests on `socket` until it closes; returns the exit status for the process. With
// `unavailable` set (the python cannot run Triton solutions: no torch, triton or numpy), answers the first
// request with it as the host's failure instead.
int ptxbench_worker_serve(int socket, const struct ptxbench_python_callbacks* callbacks,
                          const char* unavailable);
}
