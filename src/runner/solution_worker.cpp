// The solution process: `ptxbench-runner --solution-worker FD`, started by the runner (solution_process.cpp).
// It confines its own file-system writes, loads the solution library, then answers the runner's requests on
// the socket FD until the socket closes. It holds nothing secret: its inputs and outputs are the runner's
// buffers, mapped through CUDA IPC.
#include "runner/solution_worker.h"

#include <dlfcn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include "ptxbench/abi.h"
#include "runner/device_state.h"
#include "runner/kernels.h"
#include "runner/landlock.h"
#include "runner/launch_recorder.h"
#include "runner/solution_binding.h"
#include "runner/solution_protocol.h"
#include "runner/tensor_counter.h"
// After abi.h and solution_binding.h: the calls generated from the family descriptors.
#include "family/solution_calls.inc"

namespace ptxbench::runner {
namespace {

namespace s = solution;

// Why a process opened unrecorded has no launches or counts to give.
constexpr const char* kNotRecorded = "the process was opened unrecorded, for the debugger";

void set_message(s::Reply& reply, const std::string& text) {
  std::snprintf(reply.message, sizeof(reply.message), "%s", text.c_str());
}

// The CUDA track: the solution is a shared library with C entry points (include/ptxbench/abi.h), called
// through the casts generated from the family descriptors (family/codegen.cpp).
class LibraryBinding final : public SolutionBinding {
 public:
  std::optional<std::string> load(const std::string& library, const EntrySpec& spec) override {
    for (const generated::EntryCaller& caller : generated::kEntryCallers)
      if (spec.entry == caller.symbol) caller_ = &caller;
    if (caller_ == nullptr || spec.codes != caller_->codes)
      return "the worker cannot call " + spec.entry + " (" + spec.codes +
             "): not an entry point it was built for";
    if (!spec.workspace.empty()) {
      for (const generated::SizeCaller& caller : generated::kSizeCallers)
        if (spec.workspace == caller.symbol) size_caller_ = &caller;
      if (size_caller_ == nullptr) return "the worker cannot call " + spec.workspace;
    }
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return load_failure(dlerror(), library);
    entry_ = dlsym(handle, spec.entry.c_str());
    if (entry_ == nullptr)
      return "the solution library does not define " + spec.entry + " with C linkage (extern \"C\")";
    if (size_caller_ != nullptr) {
      workspace_entry_ = dlsym(handle, spec.workspace.c_str());
      if (workspace_entry_ == nullptr)
        return "the solution library does not define " + spec.workspace +
               " with C linkage (extern \"C\"); its family needs it even when it returns 0";
    }
    // Never dlclose'd: the solution's code may still be referenced by the CUDA runtime.
    return std::nullopt;
  }

  Size workspace_bytes(const int64_t* ints, uint32_t count) override {
    if (workspace_entry_ == nullptr || count != size_caller_->int_count)
      return {.error = "no workspace size function to call with " + std::to_string(count) + " ints"};
    return {.bytes = size_caller_->call(workspace_entry_, ints)};
  }

  Returned invoke(const CallArguments& arguments) override { return {caller_->call(entry_, arguments)}; }

 private:
  const generated::EntryCaller* caller_ = nullptr;
  const generated::SizeCaller* size_caller_ = nullptr;
  void* entry_ = nullptr;
  void* workspace_entry_ = nullptr;
};

class Worker {
 public:
  Worker(int socket, Confinement confinement, SolutionBinding& binding)
      : socket_(socket), confinement_(confinement), binding_(binding) {}

  int serve() {
    s::OpenRequest open;
    if (!receive(&open, sizeof(open)) || open.op != s::Op::open) return 2;
    s::Reply opened;
    this->open(open.device, open.recorded != 0, opened);
    send(opened, open.nonce);
    if (opened.failed != s::Phase::none) return 1;
    bool loaded = false;
    for (;;) {
      union {
        s::LoadRequest load;
        s::CallRequest call;
      } request{};
      const ssize_t size = receive_any(&request, sizeof(request));
      received_ = std::chrono::steady_clock::now();
      if (size <= 0) return 0;  // the runner is done
      s::Op op;
      std::memcpy(&op, &request, sizeof(op));
      s::Reply reply;
      if (op == s::Op::load && !loaded && size == sizeof(s::LoadRequest)) {
        load(request.load, reply);
        loaded = reply.failed == s::Phase::none;
        send(reply, request.load.nonce);
        if (!loaded) return 1;
        continue;
      }
      if (size != sizeof(s::CallRequest)) return 2;
      if (op == s::Op::calibrate && !loaded) {
        call(request.call, reply);
      } else if (op == s::Op::workspace_bytes && loaded) {
        workspace_bytes(request.call, reply);
      } else if (op == s::Op::call && loaded) {
        call(request.call, reply);
      } else if (op == s::Op::switch_in) {
        switch_in(stream_, reply);
      } else if (op == s::Op::launches && loaded) {
        recorded(static_cast<uint32_t>(request.call.ints[0]), reply);
      } else {
        return 2;
      }
      if (op == s::Op::call || op == s::Op::calibrate) reply.after_us = microseconds_since(call_ended_);
      send(reply, request.call.nonce);
    }
  }

 private:
  // Polls rather than sleeps, as the judge does (solution_process.cpp): a worker woken from a deep idle state
  // would add its wake-up to the request it answers, more the longer the judge took since the last one.
  ssize_t receive_any(void* message, size_t capacity) {
    for (;;) {
      const ssize_t n = recv(socket_, message, capacity, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      return n;
    }
  }

  bool receive(void* message, size_t size) {
    return receive_any(message, size) == static_cast<ssize_t>(size);
  }

  void send(s::Reply& reply, uint64_t nonce) {
    reply.nonce = nonce;
    while (::send(socket_, &reply, sizeof(reply), MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
  }

  static void fail(s::Reply& reply, s::Phase phase, cudaError_t error, const std::string& text) {
    reply.failed = phase;
    reply.cuda_error = static_cast<int32_t>(error);
    set_message(reply, text);
  }

  void open(int device, bool recorded, s::Reply& reply) {
    // The context first, so that a library that breaks CUDA at load time is seen as such.
    if (const cudaError_t error = cudaSetDevice(device); error != cudaSuccess)
      return fail(reply, s::Phase::harness, error, "cudaSetDevice failed");
    // Synchronisations spin, as the judge's do (main.cpp): no thread of the call sleeps, so no wake-up is
    // timed.
    if (const cudaError_t error = cudaSetDeviceFlags(cudaDeviceScheduleSpin); error != cudaSuccess)
      return fail(reply, s::Phase::harness, error, "cudaSetDeviceFlags failed");
    if (const cudaError_t error = cudaFree(nullptr); error != cudaSuccess)
      return fail(reply, s::Phase::harness, error, "could not create the CUDA context");
    if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreate(&start_) != cudaSuccess || cudaEventCreate(&stop_) != cudaSuccess)
      return fail(reply, s::Phase::harness, cudaGetLastError(), "could not create the stream and events");
    // The recorders, in every mode and before the library loads: whether a call is recorded or counted is
    // nothing its code can see. Not in a process opened unrecorded, for the debugger (solution_protocol.h).
    if (recorded) {
      recorder_ = std::make_unique<LaunchRecorder>();
      int major = 0, minor = 0;
      (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
      (void)cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
      counter_ = std::make_unique<TensorCounter>(arch_of_compute_capability(10 * major + minor));
    } else {
      recorder_ = std::make_unique<LaunchRecorder>(kNotRecorded);
      counter_ = std::make_unique<TensorCounter>(kNotRecorded);
    }
    // The context's state as the solution must leave it, read before its code first runs.
    device_state_ = read_device_state();
  }

  // Fails `reply` when the device's state is no longer what it was before the solution's code first ran.
  void check_device_state(s::Reply& reply, const char* what) const {
    if (const std::string changed = changes(device_state_, read_device_state()); !changed.empty())
      fail(reply, s::Phase::state, cudaSuccess,
           std::string("state kept between calls: ") + what + " changed " + changed);
  }

  void load(const s::LoadRequest& request, s::Reply& reply) {
    reply.writes_confined = confinement_.writes_confined ? 1 : 0;
    reply.threads_when_confined = confinement_.threads;
    const auto text = [](const char* field, size_t capacity) {
      return std::string(field, strnlen(field, capacity));
    };
    const std::string path = text(request.library, sizeof(request.library));
    const EntrySpec entry{.entry = text(request.entry, sizeof(request.entry)),
                          .workspace = text(request.workspace_entry, sizeof(request.workspace_entry)),
                          .codes = text(request.codes, sizeof(request.codes))};
    if (const auto error = binding_.load(path, entry))
      return fail(reply, s::Phase::load, cudaSuccess, *error);
    check_device_state(reply, "loading the library (its static constructors)");
  }

  void workspace_bytes(const s::CallRequest& request, s::Reply& reply) {
    const SolutionBinding::Size size = binding_.workspace_bytes(request.ints, request.int_count);
    if (size.error) return fail(reply, s::Phase::workspace, cudaSuccess, *size.error);
    reply.value = size.bytes;
  }

  // The runner's buffer behind an IPC handle, mapped once and kept while the runner keeps sending it; the
  // mappings of buffers the runner has moved on from are closed, so that it can free them.
  void* map(const cudaIpcMemHandle_t& handle) {
    const std::string key(handle.reserved, sizeof(handle.reserved));
    if (key.find_first_not_of('\0') == std::string::npos) return nullptr;  // a null pointer argument
    if (const auto it = mapped_.find(key); it != mapped_.end()) return it->second;
    void* pointer = nullptr;
    if (const cudaError_t error = cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess);
        error != cudaSuccess)
      throw error;
    mapped_.emplace(key, pointer);
    return pointer;
  }

  void unmap_all_but(const std::vector<std::string>& keep) {
    for (auto it = mapped_.begin(); it != mapped_.end();) {
      if (std::find(keep.begin(), keep.end(), it->first) == keep.end()) {
        (void)cudaIpcCloseMemHandle(it->second);
        it = mapped_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Copies each output into its snapshot, on `stream`, right after the call's stream is done.
  static cudaError_t take_snapshots(const s::CallRequest& request, void* const* pointers,
                                    void* const* snapshots, cudaStream_t stream) {
    for (uint32_t k = 0; k < request.snapshot_count; ++k) {
      const uint32_t of = request.snapshot_of[k];
      if (const cudaError_t error = cudaMemcpyAsync(snapshots[k], pointers[of], request.bytes[of],
                                                    cudaMemcpyDeviceToDevice, stream);
          error != cudaSuccess)
        return error;
    }
    return cudaStreamSynchronize(stream);
  }

  void call(const s::CallRequest& request, s::Reply& reply) {
    if (request.pointer_count > s::kMaxPointers || request.int_count > s::kMaxInts ||
        request.float_count > s::kMaxFloats || request.snapshot_count > s::kMaxSnapshots)
      return fail(reply, s::Phase::harness, cudaSuccess, "malformed call request");
    for (uint32_t k = 0; k < request.snapshot_count; ++k)
      if (request.snapshot_of[k] >= request.pointer_count)
        return fail(reply, s::Phase::harness, cudaSuccess, "malformed call request");
    CallArguments arguments;
    void** pointers = arguments.pointers;
    void* snapshots[s::kMaxSnapshots] = {};
    std::vector<std::string> keep;
    const auto key = [](const cudaIpcMemHandle_t& handle) {
      return std::string(handle.reserved, sizeof(handle.reserved));
    };
    try {
      for (uint32_t k = 0; k < request.pointer_count; ++k) {
        if (void* mapped = map(request.handles[k]); mapped != nullptr)
          pointers[k] = static_cast<char*>(mapped) + request.offsets[k];
        keep.push_back(key(request.handles[k]));
      }
      for (uint32_t k = 0; k < request.snapshot_count; ++k) {
        snapshots[k] = map(request.snapshots[k]);
        keep.push_back(key(request.snapshots[k]));
      }
    } catch (cudaError_t error) {
      return fail(reply, s::Phase::harness, error,
                  "could not map the runner's buffers (cudaIpcOpenMemHandle)");
    }
    unmap_all_but(keep);

    cudaStream_t stream = stream_;
    if ((request.flags & s::kFreshStream) != 0) {
      if (const cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
          error != cudaSuccess)
        return fail(reply, s::Phase::harness, error, "cudaStreamCreate failed");
    }
    arguments.pointer_count = request.pointer_count;
    std::copy_n(request.bytes, request.pointer_count, arguments.bytes);
    std::copy_n(request.dtypes, request.pointer_count, arguments.dtypes);
    for (uint32_t k = 0; k < request.pointer_count; ++k) {
      arguments.ranks[k] = std::min<uint8_t>(request.ranks[k], s::kMaxRank);
      std::copy_n(request.extents[k], arguments.ranks[k], arguments.extents[k]);
    }
    arguments.int_count = request.int_count;
    std::copy_n(request.ints, request.int_count, arguments.ints);
    arguments.float_count = request.float_count;
    std::copy_n(request.floats, request.float_count, arguments.floats);
    arguments.stream = stream;
    const bool timed = (request.flags & s::kTimed) != 0, profiled = (request.flags & s::kProfiled) != 0;
    const bool behind_spin = timed && (request.flags & s::kBehindSpin) != 0;
    unsigned long long stream_id = 0;
    (void)cudaStreamGetId(stream, &stream_id);
    reply.value = stream_id;
    reply.stream_handle = reinterpret_cast<uintptr_t>(stream);

    if (request.op == s::Op::call) {
      if (const auto error = binding_.prepare(arguments)) {
        if (stream != stream_) (void)cudaStreamDestroy(stream);
        return fail(reply, s::Phase::harness, cudaSuccess, "could not prepare the call: " + *error);
      }
    }
    // An empty kernel first: the GPU switches to this process's context (from the runner's, which just
    // flushed the L2) before the clocks start, so the switch is in neither clock. (The judge asks for it in a
    // request of its own before a timed call, Op::switch_in, so that it is not in the judge's clock either.)
    if (switch_in(stream, reply); reply.failed != s::Phase::none) return;
    (void)cudaGetLastError();  // start clean, so the error read below is one the call caused
    // Read for a calibration too, so that the request's overhead it measures includes these reads.
    const StreamState stream_before = read_stream_state(stream);
    const bool counted = (request.flags & s::kCounted) != 0;
    const bool range_open = counted && counter_->available() && counter_->begin();
    reply.call_index = recorder_->begin();
    if (profiled) (void)cudaProfilerStart();
    if (behind_spin) launch_spin_kernel(s::kDispatchSpinUs, stream);
    const auto start = std::chrono::steady_clock::now();
    reply.before_us = std::chrono::duration<double, std::micro>(start - received_).count();
    if (timed) (void)cudaEventRecord(start_, stream);
    Returned returned;
    if (request.op == s::Op::calibrate)
      launch_spin_kernel(request.calibration_us, stream);
    else
      returned = binding_.invoke(arguments);
    reply.return_code = returned.code;
    if (behind_spin)
      reply.dispatch_us =
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (timed) (void)cudaEventRecord(stop_, stream);
    cudaError_t error = cudaSuccess;
    if (returned.raised) {
      fail(reply, s::Phase::call, cudaSuccess, "the solution raised " + *returned.raised);
    } else if (reply.return_code != 0) {
      fail(reply, s::Phase::call, cudaSuccess,
           "the solution returned " + std::to_string(reply.return_code) + " (0 means success)");
    } else if ((error = cudaGetLastError()) != cudaSuccess) {
      fail(reply, s::Phase::launch, error, "a CUDA call or kernel launch of the solution failed");
    } else if ((error = cudaStreamSynchronize(stream)) != cudaSuccess) {
      fail(reply, s::Phase::stream, error, "the solution's work on the stream failed");
    } else if ((request.flags & s::kSnapshotPoint) != 0 &&
               (error = take_snapshots(request, pointers, snapshots, stream)) != cudaSuccess) {
      fail(reply, s::Phase::stream, error, "the solution's work on the stream failed (seen at the snapshot)");
    } else if ((error = cudaDeviceSynchronize()) != cudaSuccess) {
      // Work the solution left on other streams ends, and its faults show, before the runner looks.
      fail(reply, s::Phase::device, error, "the solution's work failed (seen at cudaDeviceSynchronize)");
    }
    call_ended_ = std::chrono::steady_clock::now();
    reply.wall_us = std::chrono::duration<double, std::micro>(call_ended_ - start).count();
    if (reply.failed == s::Phase::none) {
      if (const std::string changed = changes(stream_before, read_stream_state(stream)); !changed.empty())
        fail(reply, s::Phase::state, cudaSuccess, "state kept between calls: the call changed " + changed);
      else
        check_device_state(reply, "the call");
    }
    recorder_->end();
    if (counted) counts_[reply.call_index] = count(range_open);
    if (profiled) (void)cudaProfilerStop();
    if (timed && reply.failed == s::Phase::none) {
      float ms = 0;
      (void)cudaEventElapsedTime(&ms, start_, stop_);
      reply.event_us = static_cast<double>(ms) * 1e3;
    }
    if (stream != stream_) (void)cudaStreamDestroy(stream);
  }

  static void switch_in(cudaStream_t stream, s::Reply& reply) {
    launch_empty_kernel(stream);
    if (const cudaError_t error = cudaStreamSynchronize(stream); error != cudaSuccess)
      fail(reply, s::Phase::harness, error, "the worker's empty kernel failed");
  }

  // The counts of a kCounted call, closing its range, or why there are none.
  s::Reply count(bool range_open) {
    s::Reply counts;
    const std::optional<TensorCounts> counted = range_open ? counter_->end() : std::nullopt;
    if (!counted) {
      std::snprintf(counts.tool_problem, sizeof(counts.tool_problem), "tensor counter: %s",
                    counter_->problem().c_str());
      return counts;
    }
    counts.counter = s::Tool::recorded;
    counts.mma_instructions = counted->mma;
    counts.tensor_instructions = counted->tensor;
    return counts;
  }

  // What the recorders saw of call `index`: its launches and, if it was counted, its tensor counts.
  void recorded(uint32_t index, s::Reply& reply) {
    recorder_->launches_of(index, reply);
    const auto counted = counts_.find(index);
    if (counted == counts_.end()) return;
    reply.counter = counted->second.counter;
    reply.mma_instructions = counted->second.mma_instructions;
    reply.tensor_instructions = counted->second.tensor_instructions;
    if (reply.counter != s::Tool::recorded)
      std::snprintf(reply.tool_problem, sizeof(reply.tool_problem), "%s", counted->second.tool_problem);
  }

  static double microseconds_since(std::chrono::steady_clock::time_point then) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - then).count();
  }

  int socket_;
  Confinement confinement_;
  std::chrono::steady_clock::time_point received_, call_ended_;
  std::unique_ptr<LaunchRecorder> recorder_;
  std::unique_ptr<TensorCounter> counter_;
  std::map<uint32_t, s::Reply> counts_;  // of the kCounted calls, by index (only the count fields are set)
  SolutionBinding& binding_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::map<std::string, void*> mapped_;
  DeviceState device_state_{};
};

}  // namespace

int serve_solution(int socket, Confinement confinement, SolutionBinding& binding) {
  Worker worker(socket, confinement, binding);
  return worker.serve();
}

int refuse_to_serve(int socket, const std::string& reason) {
  s::OpenRequest open;
  if (recv(socket, &open, sizeof(open), 0) != static_cast<ssize_t>(sizeof(open)) || open.op != s::Op::open)
    return 2;
  s::Reply reply{.nonce = open.nonce, .failed = s::Phase::harness};
  set_message(reply, reason);
  (void)::send(socket, &reply, sizeof(reply), MSG_NOSIGNAL);
  return 1;
}

int solution_worker_main(int socket) {
  const Confinement confinement = confine_solution_process(nullptr, started_for_debugger());
  LibraryBinding library;
  return serve_solution(socket, confinement, library);
}

}  // namespace ptxbench::runner
