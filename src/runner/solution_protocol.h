// The messages between the runner (the judge) and the solution process (the worker it starts), over a
// SOCK_SEQPACKET socket pair: one fixed-size struct per message, so message boundaries and sizes need no
// parsing and a malformed reply is simply one of the wrong size.
//
// Why two processes: the judge holds the secret seed, the reference outputs and the key that authenticates
// the result; the solution's code (its static constructors included) runs only in the worker, which sees
// nothing but its inputs and outputs, shared through CUDA IPC. What the worker reports (return codes, CUDA
// errors, event times) is taken as its claim and checked where it can be: outputs are read by the judge
// itself, and every reported time is bounded by the judge's own clock around the request. Each request
// carries a fresh random nonce that its reply must echo, and the judge sends a request only when nothing is
// waiting on the socket: a reply queued ahead of its request (by the solution's code, which shares the
// worker's memory and descriptors) is a protocol fault rather than an instant answer.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace ptxbench::runner::solution {

// The order of requests: open, then any number of calibrate, then load, then workspace_bytes and call, then
// launches: what the recorders saw of one call (ints[0]: its call_index), asked for once the calls are over
// so that reading CUPTI's buffers is outside every call's request (launch_recorder.h).
// switch_in, at any time after open: an empty kernel on the worker's stream, synchronised, so that the GPU
// has switched to the worker's context before the judge's clock starts for the call that follows (the switch
// after the judge's own work took 140 us more than after a calibration's on the H200).
enum class Op : uint32_t {
  open = 1,
  calibrate = 2,
  load = 3,
  workspace_bytes = 4,
  call = 5,
  launches = 6,
  switch_in = 7
};

// Judge -> worker: create the CUDA context, the worker's stream and events and, when `recorded`, the
// recorders (launch_recorder.h, tensor_counter.h). cuda-gdb cannot attach to a process that records with
// CUPTI, so the process in which a call that ran out of time is run again for the debugger opens without them
// (session.cpp, debug_rerun).
struct OpenRequest {
  Op op = Op::open;
  int32_t device = 0;
  uint64_t nonce = 0;
  uint32_t recorded = 1;
  uint32_t reserved = 0;
};

inline constexpr int kMaxPointers = 12;
inline constexpr int kMaxInts = 12;
inline constexpr int kMaxFloats = 4;
inline constexpr int kMaxRank = 5;
inline constexpr int kMaxSnapshots = 4;
inline constexpr int kMaxSymbol = 128;

// Judge -> worker: load the library (its static constructors run now) and find the entry point and the
// workspace function (empty: none) of the task's family (src/family), whose arguments are, in order, the
// kinds `codes` lists (family.h's argument_codes: 't' a tensor, 'i' an int, 'f' a float; the stream follows).
// Every string NUL-terminated.
struct LoadRequest {
  Op op = Op::load;
  uint32_t reserved = 0;
  uint64_t nonce = 0;
  char entry[kMaxSymbol] = {};
  char workspace_entry[kMaxSymbol] = {};
  char codes[kMaxPointers + kMaxInts + kMaxFloats + 1] = {};
  char library[4096] = {};
};

// Judge -> worker: call the entry point (or, for workspace_bytes, the backward's size function, which takes
// the ints alone; for calibrate, before the library is loaded, a kernel of the worker's own that runs for
// `calibration_us` in place of the entry point, timed as a kTimed call is: what the runner measures then is
// the honest overhead of a request for a call of that length, which later claims are held to). Each pointer
// argument is a buffer of the judge's, shared by IPC handle (a zero handle and size for a null pointer): the
// argument is the mapped allocation plus `offsets[k]`, where the judge put the buffer for this call. Its
// element type (family.h's DType) and extents are what the Python host makes its tensor with.
struct CallRequest {
  Op op = Op::call;
  uint32_t flags = 0;
  uint64_t nonce = 0;
  uint32_t pointer_count = 0;
  uint32_t int_count = 0;
  cudaIpcMemHandle_t handles[kMaxPointers] = {};
  uint64_t bytes[kMaxPointers] = {};
  uint64_t offsets[kMaxPointers] = {};
  uint8_t dtypes[kMaxPointers] = {};
  uint8_t ranks[kMaxPointers] = {};
  int64_t extents[kMaxPointers][kMaxRank] = {};
  int64_t ints[kMaxInts] = {};
  uint32_t float_count = 0;
  float floats[kMaxFloats] = {};
  double calibration_us = 0;
  uint32_t snapshot_count = 0;
  uint32_t snapshot_of[kMaxSnapshots] = {};  // the pointer argument (an output) each snapshot copies
  cudaIpcMemHandle_t snapshots[kMaxSnapshots] = {};
};

// CallRequest::flags.
inline constexpr uint32_t kFreshStream = 1;  // call on a new stream (trials); else on the worker's own one
inline constexpr uint32_t kTimed = 2;        // bracket the call with events on its stream
inline constexpr uint32_t kProfiled = 4;     // bracket the call with cudaProfilerStart / cudaProfilerStop
// Once the call's stream is synchronised, and before the device is, copy each output named in `snapshots`
// into its snapshot buffer: what work hidden on other streams writes afterwards then shows as a late write.
// (Done here because the runner's own copy, from another CUDA context, would only run once this context's
// kernels are done.)
inline constexpr uint32_t kSnapshotPoint = 8;
// Count the tensor-pipe instructions the call executes with hardware counters (tensor_counter.h). The judge
// chooses these calls at random among the checked and timed ones; nothing else about the call differs.
inline constexpr uint32_t kCounted = 16;
// Queue the call behind a kernel of the worker's that keeps the GPU busy for kDispatchSpinUs, before the
// start event: the host's work up to the call's first launch is then outside the events (Reply::dispatch_us
// says how long it was). For the baseline's process alone, whose entry point is the harness's own Python: its
// dispatch through aten took 60-530 us a call outside the judge and 270-830 us (median of a call, up to 1.16
// ms) in it, different in each process, where a C++ caller of the library pays a few microseconds
// (2026-12-05, bench/harness/h200-2026-12-05d/). A solution's calls never have it: the host time of a
// solution's call is the solution's.
inline constexpr uint32_t kBehindSpin = 32;
inline constexpr double kDispatchSpinUs = 2000;

// Where a call went wrong, for the runtime_error report.
enum class Phase : uint32_t {
  none = 0,
  load = 1,       // dlopen, a missing symbol, the context
  call = 2,       // the entry point returned non-zero
  launch = 3,     // cudaGetLastError right after the call
  stream = 4,     // cudaStreamSynchronize of the call's stream
  device = 5,     // cudaDeviceSynchronize: work left on other streams
  workspace = 6,  // the backward's size function
  harness = 7,    // the worker's own setup failed (IPC mapping, stream creation)
  state = 8,      // the load or the call left a device limit or its stream changed (device_state.h)
};

// One kernel a call launched (launch_recorder.h).
inline constexpr int kMaxLaunches = 32;
struct Launch {
  uint64_t name_hash = 0;  // kernel_name_hash.h: of the whole mangled name
  char name[96] = {};      // its beginning, NUL-terminated
  int32_t grid[3] = {};
  int32_t block[3] = {};
  int32_t cluster[3] = {};
  int32_t dynamic_shared_bytes = 0;
  uint64_t duration_ns = 0;
};

// Reply::recorder and Reply::counter: what the worker's CUPTI recorders could do in this process.
enum class Tool : uint32_t { unavailable = 0, recorded = 1 };

// Worker -> judge, one per request.
struct Reply {
  uint64_t nonce = 0;  // the request's
  Phase failed = Phase::none;
  int32_t return_code = 0;
  int32_t cuda_error = 0;              // cudaError_t
  uint32_t writes_confined = 0;        // load only: the worker confined its file-system writes (Landlock)
  uint32_t threads_when_confined = 0;  // load only: the worker's threads then; 1 binds every later thread
  uint64_t value = 0;                  // workspace_bytes: the size; call: the stream's id (cudaStreamGetId)
  uint32_t call_index = 0;             // call and calibrate: the worker's number for the call (Op::launches)
  uint64_t stream_handle = 0;
  double event_us = 0;  // kTimed: the events' elapsed time
  double wall_us = 0;   // the call and the stream and device synchronisation, on the worker's clock
  // The worker's own time within the request, before the wall clock started and after it stopped: where the
  // judge's round trip goes (diagnostics; the rules use the judge's clock alone).
  double before_us = 0;
  double after_us = 0;
  // kBehindSpin: the worker's clock from the spin's launch to the entry point's return.
  double dispatch_us = 0;
  char message[512] = {};  // NUL-terminated; the judge keeps printable ASCII only
  // launches: the kernels the call launched (the first kMaxLaunches of launch_count).
  Tool recorder = Tool::unavailable;
  uint32_t launch_count = 0;
  Launch launches[kMaxLaunches] = {};
  // launches, of a kCounted call: the tensor-pipe instructions it executed, warp-level, by the GPU's
  // architecture profile's two counters (runner/tensor_counter.h: its own MMA, every MMA of the pipe).
  Tool counter = Tool::unavailable;
  uint64_t mma_instructions = 0;
  uint64_t tensor_instructions = 0;
  char tool_problem[256] = {};  // why a recorder is unavailable, NUL-terminated
};

}  // namespace ptxbench::runner::solution
