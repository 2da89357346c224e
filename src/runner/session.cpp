#include "runner/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <vector>

#include "runner/cuda_check.h"
#include "runner/device_buffer.h"
#include "runner/kernels.h"
#include "runner/launch_log.h"
#include "runner/protocol.h"
#include "runner/statistics.h"

namespace ptxbench::runner {
namespace {

namespace p = ptxbench::protocol;

// ---- small helpers ----------------------------------------------------------------------------------------

// Inputs are derived from the secret seed per mode, shape and trial, so no two calls ever see the same data
// unless the runner means them to.
enum class Purpose : uint64_t { check = 1, time = 2, profile = 3, sanitize = 4 };

uint64_t input_key(uint64_t seed, Purpose purpose, size_t shape_index, uint64_t trial) {
  return derive_key(derive_key(derive_key(seed, static_cast<uint64_t>(purpose)), shape_index), trial);
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// JSON has no NaN or infinity: such values are written as strings.
Json number_or_name(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return static_cast<double>(value);
}

// Where in the run the solution is, for the runtime_error report.
struct Where {
  std::string shape;
  int trial = 0;      // the trial, or the index of the warm-up or timed call
  std::string phase;  // "trial 2", "warm-up call 3", "timed call 7", "profiled call"
};

Where trial_where(const std::string& shape, int trial) {
  return {shape, trial, "trial " + std::to_string(trial)};
}

[[noreturn]] void fault(const Where& where, const std::string& what, std::optional<int> return_code,
                        std::optional<cudaError_t> error, bool broke_rule = false) {
  std::string message = "shape " + where.shape + ", " + where.phase + ": " + what;
  if (error) message += ": " + std::string(cudaGetErrorName(*error)) + ": " + cudaGetErrorString(*error);
  throw SolutionFault(message, where.shape, where.trial, where.phase + ": " + what, return_code, error,
                      broke_rule);
}

// ---- one call of the solution -----------------------------------------------------------------------------

// Where the threads of a call that ran out of time wait, from the debugger: the call is run again in a fresh
// solution process opened unrecorded, and the debugger attaches to it if it has not answered within
// kRerunGrace. Not the hung process itself: cuda-gdb cannot attach to a process that records its launches
// with CUPTI ("Could not find CUDA Debugger back-end", then no kernel), and the recorder cannot let go while
// the kernel runs (cuptiFinalize waits for it). The verdict is the timeout whatever the rerun does (the
// solution could tell the rerun apart, and so only hide where it waits). Sets `late`'s debugger output, or
// why there is none.
void debug_rerun(Session& session, uint32_t flags, SolutionFault& late) {
  constexpr auto kStartLimit = std::chrono::seconds(15);  // its start and its library's load
  constexpr auto kRerunGrace = std::chrono::seconds(3);
  const Request& request = session.request;
  const std::string failed = "the call run again for the debugger failed: ";
  try {
    SolutionProcess rerun(session.rerun->command);
    rerun.set_deadline(std::chrono::steady_clock::now() + kStartLimit, "the debugger's rerun's start");
    rerun.open(request.device, /*recorded=*/false);
    (void)rerun.load(request.library, session.rerun->entry);
    rerun.set_debugger(request.debugger);
    rerun.set_deadline(std::chrono::steady_clock::now() + kRerunGrace, "the debugger's rerun's 3 s");
    (void)rerun.call(session.family.solution_call(), flags);
    late.debugger_failure =
        "the call run again for the debugger answered within " + std::to_string(kRerunGrace.count()) + " s";
  } catch (const SolutionFault& fault) {
    late.debugger_output = fault.debugger_output;
    late.debugger_failure = fault.timed_out ? fault.debugger_failure : failed + fault.what();
  } catch (const std::exception& error) {
    late.debugger_failure = failed + error.what();
  }
}

// Asks the solution process for one call (solution_protocol.h flags); a non-zero return, or an error from its
// launches, its stream or the device, is a fault. The process has synchronised its stream and its device
// before it answers.
CallOutcome call_solution(Session& session, const Where& where, uint32_t flags) {
  CallOutcome outcome;
  try {
    outcome = session.solution.call(session.family.solution_call(), flags);
  } catch (const SolutionFault& lost) {
    if (!lost.timed_out) throw;
    // Where the time ran out.
    SolutionFault late("shape " + where.shape + ", " + where.phase + ": " + lost.what(), where.shape,
                       where.trial, where.phase + ": " + lost.what(), std::nullopt, std::nullopt);
    late.timed_out = true;
    if (session.rerun != nullptr) debug_rerun(session, flags, late);
    throw late;
  }
  const solution::Reply& reply = outcome.reply;
  if (reply.failed == solution::Phase::none) return outcome;
  std::optional<cudaError_t> error;
  if (reply.cuda_error != 0) error = static_cast<cudaError_t>(reply.cuda_error);
  std::optional<int> return_code;
  if (reply.failed == solution::Phase::call) return_code = reply.return_code;
  fault(where, reply.message, return_code, error, reply.failed == solution::Phase::state);
}

// Fills the guards around each buffer the solution sees (DeviceBuffer::head and tail) with kGuardPattern;
// judge() counts the bytes that changed.
constexpr uint8_t kGuardPattern = 0xA5;

void fill_guards(TaskFamily& family, cudaStream_t stream) {
  for (const auto& [name, buffer] : family.shared_buffers())
    for (const DeviceBuffer::Span guard : {buffer->head(), buffer->tail()})
      if (guard.bytes > 0) PTXBENCH_CUDA(cudaMemsetAsync(guard.start, kGuardPattern, guard.bytes, stream));
}

// 64 random bits, from a source the solution cannot predict.
uint64_t random_key() {
  std::random_device device;
  return (uint64_t{device()} << 32) | device();
}

// A uniformly random index in [0, n), from a source the solution cannot predict: which calls are counted.
int pick(int n) {
  std::random_device device;
  return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(device));
}

// Uniform in [0, 1), from a source the solution cannot predict.
double draw() {
  std::random_device device;
  return std::uniform_real_distribution<double>(0, 1)(device);
}

// Moves every buffer the solution sees to its other place (DeviceBuffer::move), so that no call finds its
// arguments where the previous one had them.
void move_buffers(TaskFamily& family) {
  for (const auto& [name, buffer] : family.shared_buffers()) buffer->move(random_key());
}

// Where a call finds its buffers: moved (every checked call, and the first call of the time stage), or
// where the previous call had them (the timed calls: their inputs are fresh and their outputs poisoned, so
// nothing the last call left is of use; a cache keyed by pointer, as Triton's launcher and many host
// wrappers keep, hits as it does in a model whose allocator reuses its blocks; and a kept pointer has failed
// the correct stage, where every call moves).
enum class Placement { moved, kept };

// The buffers placed, fresh inputs from `key`, poisoned outputs, filled guards; done when this returns.
void prepare_call(TaskFamily& family, uint64_t key, cudaStream_t harness,
                  Placement placement = Placement::moved) {
  if (placement == Placement::moved) move_buffers(family);
  family.fill_inputs(key, harness);
  family.poison_outputs(harness);
  fill_guards(family, harness);
  PTXBENCH_CUDA(cudaStreamSynchronize(harness));
}

// The checks after a call, on the snapshot taken when `stream` was done: inputs unchanged, outputs not
// written after the snapshot, nothing written outside the buffers, outputs within tolerance of the reference.
// The sanitize stage compares no outputs: the correct stage does, and the sanitize stage's call is there to
// be watched by its tool. With a `sample` (the time stage's checks), a family whose reference samples
// (TaskFamily::compute_reference_sample) compares the rows drawn; the trial records the draw.
Json judge(Session& session, cudaStream_t harness, Json trial,
           std::optional<SampleDraw> sample = std::nullopt) {
  TaskFamily& family = session.family;
  const uint64_t late_writes = family.outputs_changed_since_snapshot(harness);
  Json changed = Json::object();
  bool inputs_unchanged = true;
  for (const auto& [name, count] : family.changed_inputs(harness)) {
    changed[name] = count;
    inputs_unchanged = inputs_unchanged && count == 0;
  }
  Json past_end = Json::object();
  bool within_bounds = true;
  for (const auto& [name, buffer] : family.shared_buffers()) {
    uint64_t count = 0;
    for (const DeviceBuffer::Span guard : {buffer->head(), buffer->tail()})
      count += count_bytes_other_than(guard.start, guard.bytes, kGuardPattern, harness);
    if (count != 0) past_end[name] = count;
    within_bounds = within_bounds && count == 0;
  }
  Json outputs = Json::array();
  bool outputs_pass = true;
  const bool compares = session.request.mode != Mode::sanitize;
  if (compares && sample.has_value()) {
    if (family.compute_reference_sample(*sample, harness)) {
      trial[p::kSampleKey] = hex(sample->key);
      trial[p::kSampleShare] = sample->share;
    }
  } else if (compares) {
    family.compute_reference(harness);
  }
  for (const OutputCheck& check :
       compares ? family.compare(session.request.tolerance, harness) : std::vector<OutputCheck>{}) {
    const Comparison& c = check.comparison;
    Json first = Json::array();
    for (const Mismatch& m : c.first_mismatches) {
      first.push_back({{p::kRow, m.index / check.cols},
                       {p::kCol, m.index % check.cols},
                       {p::kExpected, number_or_name(m.expected)},
                       {p::kActual, number_or_name(m.actual)}});
    }
    outputs.push_back({{p::kName, check.name},
                       {p::kRows, check.rows},
                       {p::kCols, check.cols},
                       {p::kElements, c.compared},
                       {p::kPassedField, check.passed()},
                       {p::kMismatches, c.mismatches},
                       {p::kNonFinite, c.non_finite},
                       {p::kUnwrittenOutsideSample, c.unwritten_outside_sample},
                       {p::kMaxAbsError, number_or_name(c.max_abs_error)},
                       {p::kMaxRelError, number_or_name(c.max_rel_error)},
                       {p::kMaxErrorRatio, number_or_name(c.max_error_ratio)},
                       {p::kFirstMismatches, first}});
    outputs_pass = outputs_pass && check.passed();
  }
  trial[p::kPassedField] = outputs_pass && inputs_unchanged && within_bounds && late_writes == 0;
  trial[p::kInputsUnchanged] = inputs_unchanged;
  trial[p::kChangedInputs] = changed;
  trial[p::kWrittenPastEnd] = past_end;
  trial[p::kOutputStable] = late_writes == 0;
  trial[p::kOutputs] = outputs;
  return trial;
}

Json trial_header(int trial, uint64_t key, const solution::Reply& reply) {
  return {{p::kTrial, trial},
          {p::kKey, hex(key)},
          {p::kStreamHandle, hex(reply.stream_handle)},
          {p::kReturnCode, reply.return_code}};
}

// One trial: fresh inputs, poisoned outputs, one call on a fresh stream of the solution process's (which
// snapshots the outputs as soon as that stream is done), then the checks.
Json run_trial(Session& session, const Where& where, uint64_t key, cudaStream_t harness, LaunchLog* log,
               bool counted) {
  prepare_call(session.family, key, harness);
  const CallOutcome outcome = call_solution(
      session, where, solution::kFreshStream | solution::kSnapshotPoint | (counted ? solution::kCounted : 0));
  if (log != nullptr) log->note(outcome.reply, where.phase, counted);
  return judge(session, harness, trial_header(where.trial, key, outcome.reply));
}

// One line saying why a trial failed, for the result's message.
std::string describe_failure(const std::string& shape, const Json& trial) {
  std::string text = "shape " + shape + " trial " + std::to_string(trial[p::kTrial].get<int>()) + ": ";
  if (!trial[p::kInputsUnchanged].get<bool>()) {
    std::string names;
    for (const auto& [name, count] : trial[p::kChangedInputs].items()) {
      if (count.get<uint64_t>() != 0) names += (names.empty() ? "" : ", ") + name;
    }
    return text + "the solution wrote to its input(s) " + names;
  }
  if (!trial[p::kWrittenPastEnd].empty()) {
    std::string names;
    for (const auto& [name, count] : trial[p::kWrittenPastEnd].items())
      names += (names.empty() ? "" : ", ") + name + " (" + std::to_string(count.get<uint64_t>()) + " bytes)";
    return text + "the solution wrote outside " + names +
           ", in the guard bytes the runner checks before and after each buffer";
  }
  for (const Json& output : trial[p::kOutputs]) {
    if (output[p::kPassedField].get<bool>()) continue;
    if (output[p::kMismatches].get<uint64_t>() == 0) {
      // Every sampled element was right, but elements outside the sample were never written.
      return text + std::to_string(output.value(p::kUnwrittenOutsideSample, uint64_t{0})) + " elements of " +
             output[p::kName].get<std::string>() +
             " outside the sample drawn after the call still hold the judge's poison (NaN): the call never "
             "wrote them";
    }
    text += std::to_string(output[p::kMismatches].get<uint64_t>()) + " of " +
            std::to_string(output[p::kElements].get<int64_t>()) + " elements of " +
            output[p::kName].get<std::string>() +
            (trial.contains(p::kSampleKey) ? " (a sample of its rows, drawn after the call)" : "") +
            " are wrong";
    if (!output[p::kFirstMismatches].empty()) {
      const Json& first = output[p::kFirstMismatches][0];
      text += "; first at row " + std::to_string(first[p::kRow].get<int64_t>()) + ", col " +
              std::to_string(first[p::kCol].get<int64_t>()) + ": expected " + first[p::kExpected].dump() +
              ", got " + first[p::kActual].dump();
    }
    if (!trial[p::kOutputStable].get<bool>()) {
      text += " (the output was still changing after the stream was synchronised: work outside `stream`)";
    }
    return text;
  }
  return text + "the output was still changing after the stream was synchronised: work outside `stream`";
}

void allocate(Session& session, const ShapeSpec& shape) {
  try {
    session.family.allocate(shape);
  } catch (const std::invalid_argument& error) {
    throw RequestError(std::string("request: ") + error.what());
  }
}

void set_status(Session& session, bool passed, const std::string& message) {
  session.result[p::kStatus] = passed ? p::kPassed : p::kFailed;
  session.result[p::kMessage] = message;
}

// ---- modes ------------------------------------------------------------------------------------------------

// Runs `trials` trials of each listed shape and reports them under "shapes". The main shape's calls (index 0,
// the one the instruction stage profiles) are logged under "launches", and one of them, at random, counted;
// but for the first, the process's first call, which may do one-time work (loading, tuning) that the profiled
// call, after a warm-up, does not.
void run_trials(Session& session, const std::vector<size_t>& shape_indices, int trials, Purpose purpose) {
  const Request& request = session.request;
  const Stream harness;
  LaunchLog main_calls;
  const int counted_trial = trials > 1 ? 1 + pick(trials - 1) : -1;
  Json& shapes = session.result[p::kShapeResults] = Json::array();
  std::string first_failure;
  int trial_count = 0;
  for (const size_t index : shape_indices) {
    const ShapeSpec& shape = request.shapes[index];
    allocate(session, shape);
    shapes.push_back({{p::kLabel, shape.label},
                      {p::kDims, shape.dims_json()},
                      {p::kPassedField, true},
                      {p::kTrialList, Json::array()}});
    Json& shape_result = shapes.back();
    for (int trial = 0; trial < trials; ++trial) {
      const uint64_t key = input_key(request.seed, purpose, index, static_cast<uint64_t>(trial));
      const bool logged = index == 0 && trial > 0;
      Json result = run_trial(session, trial_where(shape.label, trial), key, harness.get(),
                              logged ? &main_calls : nullptr, logged && trial == counted_trial);
      if (!result[p::kPassedField].get<bool>()) {
        shape_result[p::kPassedField] = false;
        if (first_failure.empty()) first_failure = describe_failure(shape.to_string(), result);
      }
      shape_result[p::kTrialList].push_back(std::move(result));
      ++trial_count;
    }
  }
  session.result[p::kLaunches] = main_calls.collect(session.solution);
  set_status(session, first_failure.empty(),
             first_failure.empty() ? "all " + std::to_string(trial_count) + " trials over " +
                                         std::to_string(shape_indices.size()) + " shape(s) passed"
                                   : first_failure);
}

void run_check(Session& session) {
  std::vector<size_t> all(session.request.shapes.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  run_trials(session, all, session.request.trials, Purpose::check);
}

void run_sanitize(Session& session) {
  const auto& shapes = session.request.shapes;
  const auto smallest =
      std::min_element(shapes.begin(), shapes.end(),
                       [](const ShapeSpec& a, const ShapeSpec& b) { return a.volume() < b.volume(); });
  run_trials(session, {static_cast<size_t>(smallest - shapes.begin())}, 1, Purpose::sanitize);
}

// Exactly the kernels of one call between cudaProfilerStart and cudaProfilerStop (the solution process
// brackets the call with them), for ncu --profile-from-start off; the runner's own kernels (inputs, poison,
// reference, comparison) run in its own process, which never starts the profiler.
void run_profile(Session& session) {
  const Request& request = session.request;
  const ShapeSpec& shape = request.shapes[0];
  const Where warmup{shape.label, 0, "warm-up call"}, where{shape.label, 0, "profiled call"};
  TaskFamily& family = session.family;
  allocate(session, shape);
  const Stream harness;
  const uint64_t key = input_key(request.seed, Purpose::profile, 0, 0);

  prepare_call(family, input_key(request.seed, Purpose::profile, 0, 1), harness.get());
  call_solution(session, warmup, 0);  // module load and first-launch costs stay outside the window
  // Fresh inputs and a poisoned output for the profiled call too: its output is checked like a trial's, so
  // that the code the proof is made on must compute the right answer.
  prepare_call(family, key, harness.get());
  const CallOutcome outcome = call_solution(session, where, solution::kProfiled | solution::kSnapshotPoint);
  LaunchLog profiled;
  profiled.note(outcome.reply, where.phase, false);
  session.result[p::kLaunches] = profiled.collect(session.solution);

  Json trial = judge(session, harness.get(), trial_header(0, key, outcome.reply));
  const bool passed = trial[p::kPassedField].get<bool>();
  const std::string failure = passed ? "" : describe_failure(shape.to_string(), trial);
  session.result[p::kProfile] = {{p::kStreamHandle, hex(outcome.reply.stream_handle)},
                                 {p::kStreamId, outcome.reply.value},
                                 {p::kTrial, std::move(trial)}};
  set_status(session, passed, passed ? "profiled one call of " + shape.to_string() : failure);
}

// ---- timing -----------------------------------------------------------------------------------------------

struct Samples {
  std::vector<double> event_us;
  std::vector<double> wall_us;
  std::vector<double> round_trip_us;  // the solution's: this process's clock around the request, less wall_us
  std::vector<double> before_us, after_us;  // the solution's: the worker's own time within the request
  std::vector<double> dispatch_us;          // a baseline process's, behind a spin (solution::kBehindSpin)
};

// The calibration's call lengths (timing_rules.h), each timed kCalibrationRounds times: about 0.15 s in all.
constexpr double kCalibrationCallsUs[] = {0, 100, 1000, 10000};
constexpr int kCalibrationRounds = 10;

Json summarize(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (const double v : values) sum += v;
  return {{p::kMedian, percentile(values, 0.5)},
          {p::kMin, values.front()},
          {p::kMax, values.back()},
          {p::kP10, percentile(values, 0.1)},
          {p::kP90, percentile(values, 0.9)},
          {p::kMean, sum / static_cast<double>(values.size())}};
}

// A series without wall times (a baseline process's, whose wall clock holds its spin) has null wall fields.
Json series(const Samples& samples, double flops) {
  const auto tflops = [&](const Json& stats) {
    return stats.is_null() ? Json(nullptr) : Json(flops / (stats[p::kMedian].get<double>() * 1e-6) / 1e12);
  };
  Json result = {{p::kEventUs, summarize(samples.event_us)},
                 {p::kWallUs, samples.wall_us.empty() ? Json(nullptr) : summarize(samples.wall_us)}};
  if (!samples.round_trip_us.empty()) {
    result[p::kRoundTripUs] = summarize(samples.round_trip_us);
    result[p::kWorkerBeforeUs] = summarize(samples.before_us);
    result[p::kWorkerAfterUs] = summarize(samples.after_us);
  }
  if (!samples.dispatch_us.empty()) {
    result[p::kDispatchUs] = summarize(samples.dispatch_us);
    result[p::kDispatchOutranSpin] = std::count_if(samples.dispatch_us.begin(), samples.dispatch_us.end(),
                                                   [](double us) { return us > solution::kDispatchSpinUs; });
  }
  result[p::kTflops] = tflops(result[p::kEventUs]);
  result[p::kTflopsWall] = tflops(result[p::kWallUs]);
  return result;
}

size_t l2_flush_bytes(int device) {
  int l2_bytes = 0;
  PTXBENCH_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  return std::max<size_t>(size_t{2} * static_cast<size_t>(l2_bytes), size_t{64} << 20) / 16 * 16;
}

// Times the baseline, in this process, with a cold L2 (persisting lines demoted, then flushed): the flush
// ends before the clocks start, the events bracket the call on the stream, the host clock brackets the call
// and a device-wide synchronisation.
void time_baseline(TaskFamily& family, cudaStream_t stream, const DeviceBuffer& flush, uint32_t salt,
                   Samples& samples) {
  const Event start, stop;
  flush_l2(flush.get(), flush.bytes(), salt, stream);
  PTXBENCH_CUDA(cudaStreamSynchronize(stream));
  const auto t0 = std::chrono::steady_clock::now();
  PTXBENCH_CUDA(cudaEventRecord(start.get(), stream));
  family.call_baseline(stream);
  PTXBENCH_CUDA(cudaEventRecord(stop.get(), stream));
  PTXBENCH_CUDA(cudaDeviceSynchronize());
  const auto t1 = std::chrono::steady_clock::now();
  float event_ms = 0;
  PTXBENCH_CUDA(cudaEventElapsedTime(&event_ms, start.get(), stop.get()));
  samples.event_us.push_back(static_cast<double>(event_ms) * 1e3);
  samples.wall_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
}

// Asks the baseline's process for one call of the request's baseline module (the harness's own code: its
// failure is the harness's, never the solution's).
CallOutcome call_baseline_process(SolutionProcess& baseline, const SolutionCall& call, uint32_t flags) {
  CallOutcome outcome;
  try {
    outcome = baseline.call(call, flags);
  } catch (const SolutionFault& fault) {
    throw std::runtime_error(std::string("the baseline's process failed: ") + fault.what());
  }
  const solution::Reply& reply = outcome.reply;
  if (reply.failed != solution::Phase::none) {
    std::string message = std::string("the baseline failed: ") + reply.message;
    if (reply.cuda_error != 0)
      message += std::string(": ") + cudaGetErrorName(static_cast<cudaError_t>(reply.cuda_error));
    throw std::runtime_error(message);
  }
  return outcome;
}

// Times the baseline in its own process as the solution is timed (time_solution): a cold L2, the flush
// ended before the request, the GPU switched to that process's context; its times are its process's clocks,
// which are the harness's own code. Its call is queued behind a spin (solution::kBehindSpin), so that the
// Python dispatch of the vendor's op is not in its events; its wall clock then holds the spin, so no wall
// time is kept.
void time_baseline_process(SolutionProcess& baseline, const SolutionCall& call, cudaStream_t stream,
                           const DeviceBuffer& flush, uint32_t salt, Samples& samples) {
  flush_l2(flush.get(), flush.bytes(), salt, stream);
  PTXBENCH_CUDA(cudaStreamSynchronize(stream));
  try {
    baseline.switch_in();
  } catch (const SolutionFault& fault) {
    throw std::runtime_error(std::string("the baseline's process failed: ") + fault.what());
  }
  const solution::Reply reply =
      call_baseline_process(baseline, call, solution::kTimed | solution::kBehindSpin).reply;
  samples.event_us.push_back(reply.event_us);
  samples.dispatch_us.push_back(reply.dispatch_us);
}

// Times one call of the solution with a cold L2 (the flush, from this process, ends before the request is
// sent: the L2 is the GPU's, not a process's). The event and wall times are the solution process's claims,
// measured as time_baseline measures; this process's own clock around the request bounds them. Returns
// whether the claims nest: events within the wall time, the wall time within the request.
bool time_solution(Session& session, cudaStream_t stream, const DeviceBuffer& flush, uint32_t salt,
                   const Where& where, bool counted, Samples& samples, CallOutcome* outcome) {
  flush_l2(flush.get(), flush.bytes(), salt, stream);
  PTXBENCH_CUDA(cudaStreamSynchronize(stream));
  session.solution.switch_in();
  *outcome = call_solution(session, where, solution::kTimed | (counted ? solution::kCounted : 0));
  const solution::Reply& reply = outcome->reply;
  const CallTimes call{.event_us = reply.event_us, .wall_us = reply.wall_us, .judge_us = outcome->judge_us};
  if (counted) return claims_nest(call);  // checked, not timed: the counters stay out of the statistics
  samples.event_us.push_back(call.event_us);
  samples.wall_us.push_back(call.wall_us);
  samples.round_trip_us.push_back(call.judge_us - call.wall_us);
  samples.before_us.push_back(reply.before_us);
  samples.after_us.push_back(reply.after_us);
  return claims_nest(call);
}

// What the physics floor of the solution's timed calls rests on (timing_rules.h): the family's work, this
// GPU's peak and measured bandwidth, and the fastest call.
RooflineInputs roofline_inputs(const Session& session, const Samples& solution) {
  const int device = session.request.device;
  int sm_count = 0, clock_khz = 0;
  PTXBENCH_CUDA(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  PTXBENCH_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  return {.flops = session.family.flops(),
          .input_bytes = session.family.input_bytes(),
          .sm_count = sm_count,
          .sm_clock_khz = static_cast<double>(clock_khz),
          .flops_per_sm_per_clock = static_cast<double>(session.request.dense_flops_per_sm_per_clock),
          .read_bandwidth_bytes_per_s = session.read_bandwidth_bytes_per_s,
          .fastest_us = *std::min_element(solution.event_us.begin(), solution.event_us.end())};
}

// The SM clock in MHz after each of the first `calls` calls, from the probes' cycles and nanoseconds in
// `clocks`.
std::vector<double> clock_series(const DeviceBuffer& clocks, int calls) {
  std::vector<unsigned long long> figures(2 * static_cast<size_t>(calls));
  PTXBENCH_CUDA(cudaMemcpy(figures.data(), clocks.get(), figures.size() * sizeof(unsigned long long),
                           cudaMemcpyDeviceToHost));
  std::vector<double> mhz;
  for (int i = 0; i < calls; ++i)
    if (figures[2 * i + 1] > 0)
      mhz.push_back(1e3 * static_cast<double>(figures[2 * i]) / static_cast<double>(figures[2 * i + 1]));
  return mhz;
}

// The timing's "roofline" (protocol.h); a figure that is not known is null.
Json roofline_json(const RooflineInputs& in, const Roofline& floor) {
  const auto known = [](double value) { return value > 0 ? Json(value) : Json(nullptr); };
  return {{p::kPeakTflops, known(floor.peak_flops_per_s / 1e12)},
          {p::kDenseFlopsPerSmPerClock, known(in.flops_per_sm_per_clock)},
          {p::kSmCount, in.sm_count},
          {p::kSmClockMhz, in.sm_clock_khz / 1e3},
          {p::kBandwidthGbs, known(in.read_bandwidth_bytes_per_s / 1e9)},
          {p::kInputBytes, static_cast<uint64_t>(in.input_bytes)},
          {p::kFlopsFloorUs, known(floor.flops_floor_us)},
          {p::kBytesFloorUs, known(floor.bytes_floor_us)},
          {p::kFloorUs, floor.applied ? Json(floor.floor_us) : Json(nullptr)},
          {p::kFastestUs, in.fastest_us},
          {p::kMargin, kRooflineMargin},
          {p::kApplied, floor.applied},
          {p::kImpossible, floor.impossible}};
}

// The message of an impossible time: the fastest call, the floor and its two parts.
std::string impossible_time(const RooflineInputs& in, const Roofline& floor) {
  char text[512];
  std::snprintf(text, sizeof(text),
                "impossible time: the fastest timed call took %.1f us, below %.1f x this task's roofline on "
                "this GPU, %.1f us (%.1f GFLOP at the dense peak of %.4g TFLOP/s: %.1f us; %.1f MB of "
                "inputs at the measured read bandwidth of %.4g GB/s: %.1f us): the timing cannot be trusted",
                in.fastest_us, kRooflineMargin, floor.floor_us, in.flops / 1e9, floor.peak_flops_per_s / 1e12,
                floor.flops_floor_us, in.input_bytes / 1e6, in.read_bandwidth_bytes_per_s / 1e9,
                floor.bytes_floor_us);
  return text;
}

// The baseline module as the timing names it.
Json describe_baseline_module(const Request& request) {
  return {{p::kName, std::filesystem::path(request.baseline_module).stem().string()},
          {p::kBaselineModule, request.baseline_module}};
}

// Seconds by step, each step's summed over its laps: a lap ends a step and begins the next.
class StepSeconds {
 public:
  explicit StepSeconds(std::initializer_list<const char*> steps) {
    for (const char* step : steps) seconds_[step] = 0.0;
  }
  void restart() { start_ = std::chrono::steady_clock::now(); }
  void lap(const char* step) {
    const auto now = std::chrono::steady_clock::now();
    seconds_[step] = seconds_[step].get<double>() + std::chrono::duration<double>(now - start_).count();
    start_ = now;
  }
  Json take() { return std::move(seconds_); }

 private:
  Json seconds_ = Json::object();
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Solution and baseline alternate, each call with fresh inputs and a poisoned output before its flush, so
// that drift of clocks or temperature hits both alike and a solution that skips work on repeated calls is
// caught by the check of every timed call's output. Fails when that re-check fails, when the call's work
// runs outside `stream`, or when the solution process claims an event time its own wall time cannot hold.
void run_time(Session& session) {
  const Request& request = session.request;
  const ShapeSpec& shape = request.shapes[0];
  TaskFamily& family = session.family;
  allocate(session, shape);
  const Stream harness;
  const DeviceBuffer flush(l2_flush_bytes(request.device));
  const auto key = [&](int iteration) {
    return input_key(request.seed, Purpose::time, 0, static_cast<uint64_t>(iteration));
  };

  const auto seconds_since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Where the seconds before the timed calls go (the time result's setup_s): the judge's own work measured,
  // the solution's warm-up calls, the baseline's checked call and its warm-up calls.
  StepSeconds setup({"judge", "warm_up", "baseline_check", "baseline_warm_up"});
  // The judge's own work for one timed call, measured on the warm-up call's inputs: making them, and the
  // reference its output would be checked against (time_stage_calls).
  const auto judge_start = std::chrono::steady_clock::now();
  prepare_call(family, key(0), harness.get());
  family.compute_reference_sample({.key = random_key()}, harness.get());
  PTXBENCH_CUDA(cudaStreamSynchronize(harness.get()));
  const double judge_s = seconds_since(judge_start);
  setup.lap("judge");
  // Where the timed calls find each buffer in its allocation (they keep the place this call's moved them to;
  // the allocations start on whole pages): the offsets differ between evaluations, and with them, perhaps,
  // a kernel's speed.
  Json placement = Json::object();
  for (const auto& [name, buffer] : family.shared_buffers()) placement[name] = buffer->offset();
  // The baseline: the request's baseline module in a process of its own, or the family's in this process. A
  // family without one in the runner (attention) describes it as null: then, without a module, the solution
  // is timed alone.
  SolutionProcess* const baseline_process = session.baseline;
  const bool has_baseline = baseline_process != nullptr || !family.describe_baseline().is_null();
  // The process's first call may do one-time work (loading a module, Triton compiling the solution's
  // kernels): the second call's length is what the budgets count.
  call_solution(session, {shape.label, 0, "warm-up call 0"}, 0);
  const auto second_call_start = std::chrono::steady_clock::now();
  call_solution(session, {shape.label, 1, "warm-up call 1"}, 0);
  const double call_s = seconds_since(second_call_start);
  const auto [warmup_calls, repetitions, sample_share] =
      time_stage_calls(request.warmup, request.repetitions, call_s, judge_s);
  for (int i = 2; i < warmup_calls; ++i)
    call_solution(session, {shape.label, i, "warm-up call " + std::to_string(i)}, 0);
  setup.lap("warm_up");
  if (baseline_process != nullptr) {
    // One call checked against the reference, on inputs of its own and the buffers where the solution's calls
    // find them: a baseline that computes something else than the task gives no speedup.
    const uint64_t check_key = input_key(request.seed, Purpose::time, 1, 0);
    prepare_call(family, check_key, harness.get(), Placement::kept);
    const CallOutcome checked = call_baseline_process(*baseline_process, family.solution_call(), 0);
    family.snapshot_outputs(harness.get());
    const Json trial = judge(session, harness.get(), trial_header(0, check_key, checked.reply));
    if (!trial[p::kPassedField].get<bool>())
      throw std::runtime_error("the baseline's output is wrong: " +
                               describe_failure(shape.to_string(), trial));
    setup.lap("baseline_check");
    for (int i = 0; i < warmup_calls; ++i)
      call_baseline_process(*baseline_process, family.solution_call(), 0);
  } else if (has_baseline) {
    for (int i = 0; i < warmup_calls + 1; ++i)
      family.call_baseline(harness.get());  // +1: plans the algorithm
    PTXBENCH_CUDA(cudaDeviceSynchronize());
  }
  setup.lap("baseline_warm_up");

  // Every timed call's output is checked, outside the clocks: a solution that counts its calls and does the
  // work only on the last one (the one a single re-check would see) fails here.
  // The calls go on until `repetitions` of them are timed, or fewer once the solution's and the baseline's
  // medians are settled (timing_rules.h, median_settled), and until kCountedTimeCalls are counted
  // (next_time_call), within the loop's bound (TimeStageLoop). Every one is checked.
  Samples solution, baseline;
  Json recheck;
  int failed_calls = 0;
  bool claims_hold = true;
  uint64_t stream_handle_value = 0;
  LaunchLog log;
  TimeStageLoop loop(repetitions);
  // The SM clock after each call (timing_rules.h), measured once its outputs are snapshot: two figures a
  // call.
  const DeviceBuffer clocks(sizeof(unsigned long long) * 2 * static_cast<size_t>(loop.bound()));
  // The timed calls' window on the host's clock, for the judge's samples of the GPU's power (gpu_monitor.h).
  const auto unix_s = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  const double window_begin = unix_s();
  // Where the loop's seconds go (the time result's loop_s), each step's seconds summed over the calls: the
  // inputs and poisoned outputs, the solution's calls (flush, call, snapshot), their checks, the baseline's
  // calls.
  StepSeconds loop_s({"inputs", "solution", "check", "baseline"});
  for (int i = 0;; ++i) {
    const bool settled =
        median_settled(solution.event_us) && (!has_baseline || median_settled(baseline.event_us));
    const NextTimeCall next = loop.next(settled, draw());
    if (next == NextTimeCall::done) break;
    const Where where{shape.label, i, "timed call " + std::to_string(i)};
    const bool counted = next == NextTimeCall::counted;
    loop_s.restart();
    prepare_call(family, key(i + 1), harness.get(), Placement::kept);
    loop_s.lap("inputs");
    CallOutcome outcome;
    claims_hold = time_solution(session, harness.get(), flush, static_cast<uint32_t>(2 * i), where, counted,
                                solution, &outcome) &&
                  claims_hold;
    const solution::Reply& reply = outcome.reply;
    log.note(outcome.reply, where.phase, counted);
    stream_handle_value = reply.stream_handle;
    family.snapshot_outputs(harness.get());
    launch_clock_probe(kClockProbeNs, static_cast<unsigned long long*>(clocks.get()) + 2 * i, harness.get());
    PTXBENCH_CUDA(cudaStreamSynchronize(harness.get()));
    loop_s.lap("solution");
    // Each timed call's check compares the rows of a sample drawn after the call, where the family's
    // reference samples (the dense attention families: the whole reference costs many times the call), from a
    // source the solution cannot predict.
    Json checked = judge(session, harness.get(), trial_header(i, key(i + 1), reply),
                         SampleDraw{.key = random_key(), .share = sample_share});
    // The first wrong call's check, or the last call's when none was wrong.
    if (!checked[p::kPassedField].get<bool>() && failed_calls++ == 0)
      recheck = std::move(checked);
    else if (failed_calls == 0)
      recheck = std::move(checked);
    loop_s.lap("check");
    if (has_baseline && !counted) {
      const uint32_t salt = static_cast<uint32_t>(2 * i + 1);
      if (baseline_process != nullptr)
        time_baseline_process(*baseline_process, family.solution_call(), harness.get(), flush, salt,
                              baseline);
      else
        time_baseline(family, harness.get(), flush, salt, baseline);
      loop_s.lap("baseline");
    }
  }
  const int made = loop.made();
  const double window_end = unix_s();
  session.result[p::kLaunches] = log.collect(session.solution);

  const double flops = family.flops();
  Json timing = {{p::kShape, {{p::kLabel, shape.label}, {p::kDims, shape.dims_json()}}},
                 {p::kFlops, flops},
                 {p::kWarmup, std::max(2, warmup_calls)},
                 {p::kRepetitions, static_cast<int>(solution.event_us.size())},
                 {p::kJudgeCallS, judge_s},
                 {p::kSetupS, setup.take()},
                 {p::kPlacement, std::move(placement)},
                 {p::kLoopS, loop_s.take()},
                 {p::kSampleShare, family.samples() ? Json(sample_share) : Json(nullptr)},
                 {p::kTimedWindowUnixS, {window_begin, window_end}},
                 {p::kL2FlushBytes, flush.bytes()},
                 {p::kStreamHandle, hex(stream_handle_value)},
                 {p::kSolution, series(solution, flops)},
                 {p::kBaseline, baseline_process != nullptr ? describe_baseline_module(request)
                                                            : family.describe_baseline()}};
  if (has_baseline) timing[p::kBaseline].update(series(baseline, flops));
  const auto median = [&](const char* who, const char* clock) {
    return timing.at(who).at(clock).at(p::kMedian).get<double>();
  };
  // Without a baseline the launch-and-sync overhead it would show is taken as 0: the margin below alone.
  double baseline_gap = 0;
  char summary[256];
  if (has_baseline) {
    timing[p::kSpeedup] = median(p::kBaseline, p::kEventUs) / median(p::kSolution, p::kEventUs);
    timing[p::kSpeedupWall] = timing[p::kBaseline][p::kWallUs].is_null()
                                  ? Json(nullptr)
                                  : Json(median(p::kBaseline, p::kWallUs) / median(p::kSolution, p::kWallUs));
    // The launch and synchronisation overhead of a baseline in this process, as the judge sees it. A baseline
    // module's wall time also holds the copies of its outputs, outside its events by design: no overhead a
    // solution may claim (its own calibrated gap applies).
    if (baseline_process == nullptr)
      baseline_gap = median(p::kBaseline, p::kWallUs) - median(p::kBaseline, p::kEventUs);
    std::snprintf(summary, sizeof(summary),
                  "%s: solution %.1f us (%.1f TFLOP/s), baseline %.1f us, speedup %.3f",
                  shape.to_string().c_str(), median(p::kSolution, p::kEventUs),
                  timing[p::kSolution][p::kTflops].get<double>(), median(p::kBaseline, p::kEventUs),
                  timing[p::kSpeedup].get<double>());
  } else {
    timing[p::kSpeedup] = nullptr;
    timing[p::kSpeedupWall] = nullptr;
    std::snprintf(
        summary, sizeof(summary),
        "%s: solution %.1f us (%.1f TFLOP/s); no baseline in the runner for this family (speedup null)",
        shape.to_string().c_str(), median(p::kSolution, p::kEventUs),
        timing[p::kSolution][p::kTflops].get<double>());
  }
  const Calibration& calibration = session.calibration;
  const double event_median = median(p::kSolution, p::kEventUs);
  const CalibrationRung applied = calibration.at(event_median);
  Json rungs = Json::array();
  for (const CalibrationRung& rung : calibration.rungs)
    rungs.push_back({{p::kCallUs, rung.call_us},
                     {p::kRoundTripUs, rung.round_trip_us},
                     {p::kGapUs, rung.gap_us},
                     {p::kWorkerUs, rung.worker_us}});
  timing[p::kCalibration] = {{p::kCalls, calibration.calls},
                             {p::kRoundTripUs, applied.round_trip_us},
                             {p::kGapUs, applied.gap_us},
                             {p::kRungs, std::move(rungs)}};
  timing[p::kHiddenWorkSuspected] =
      hidden_work_suspected(median(p::kSolution, p::kWallUs), event_median, baseline_gap, calibration);
  const double round_trip = median(p::kSolution, p::kRoundTripUs);
  const double allowed_round_trip = allowed_round_trip_us(calibration, event_median);
  claims_hold = times_verified(calibration, claims_hold, round_trip, event_median);
  timing[p::kTimesVerified] = claims_hold;
  // Work outside `stream` breaks the ABI and makes the event times meaningless: fail rather than report them.
  const bool hidden_work = timing[p::kHiddenWorkSuspected].get<bool>();
  const bool recheck_passed = recheck[p::kPassedField].get<bool>();
  const bool passed = recheck_passed && !hidden_work && claims_hold;
  char hidden[256];
  std::snprintf(hidden, sizeof(hidden),
                "work outside `stream`: the call plus cudaDeviceSynchronize took %.1f us (median) but the "
                "events on `stream` saw %.1f us",
                median(p::kSolution, p::kWallUs), median(p::kSolution, p::kEventUs));
  const std::string failure =
      !recheck_passed
          ? std::to_string(failed_calls) + " of " + std::to_string(made) +
                " timed calls gave a wrong output; the first: " + describe_failure(shape.to_string(), recheck)
      : !claims_hold
          ? "the solution process's reported times do not fit the runner's own clock (events within the "
            "call, the call within the request, the request's overhead at most " +
                std::to_string(static_cast<int>(allowed_round_trip)) + " us at the median; it was " +
                std::to_string(static_cast<int>(round_trip)) + " us): they cannot be trusted"
          : std::string(hidden);
  timing[p::kRecheck] = std::move(recheck);
  timing[p::kCheckedCalls] = made;
  timing[p::kFailedCalls] = failed_calls;
  // The physics floor, on the solution's calls: one faster than its task's roofline means the timing itself
  // is broken, which says nothing about the solution. A failure above is the solution's and stands.
  const RooflineInputs floor_inputs = roofline_inputs(session, solution);
  const Roofline floor = roofline(floor_inputs);
  timing[p::kRoofline] = roofline_json(floor_inputs, floor);
  const std::vector<double> clock_mhz = clock_series(clocks, made);
  timing[p::kSmClockDuringMhz] = clock_mhz.empty() ? Json(nullptr) : summarize(clock_mhz);
  timing[p::kSmClockBelowMax] =
      !clock_mhz.empty() && clock_below_max(runner::median(clock_mhz), floor_inputs.sm_clock_khz / 1e3);
  session.result[p::kTiming] = std::move(timing);  // `median` reads `timing`: no use of it past here
  if (passed && floor.impossible) {
    session.result[p::kStatus] = p::kHarnessError;
    session.result[p::kMessage] = impossible_time(floor_inputs, floor);
    return;
  }
  set_status(session, passed, passed ? summary : failure);
}

}  // namespace

Calibration calibrate(SolutionProcess& solution, int device) {
  const Stream stream;
  const DeviceBuffer flush(l2_flush_bytes(device));
  std::vector<std::vector<double>> round_trips(std::size(kCalibrationCallsUs)), gaps(round_trips.size()),
      worker(round_trips.size());
  // Round-robin over the lengths, so that drift of clocks or temperature hits every rung alike.
  for (int round = 0; round < kCalibrationRounds; ++round) {
    for (size_t rung = 0; rung < std::size(kCalibrationCallsUs); ++rung) {
      flush_l2(flush.get(), flush.bytes(), static_cast<uint32_t>(round), stream.get());
      PTXBENCH_CUDA(cudaStreamSynchronize(stream.get()));
      solution.switch_in();  // as before a timed call (time_solution)
      const CallOutcome outcome = solution.calibrate(kCalibrationCallsUs[rung]);
      round_trips[rung].push_back(outcome.judge_us - outcome.reply.wall_us);
      gaps[rung].push_back(outcome.reply.wall_us - outcome.reply.event_us);
      worker[rung].push_back(outcome.reply.before_us + outcome.reply.after_us);
    }
  }
  Calibration calibration{.calls = kCalibrationRounds * static_cast<int>(std::size(kCalibrationCallsUs))};
  for (size_t rung = 0; rung < std::size(kCalibrationCallsUs); ++rung) {
    calibration.rungs.push_back({.call_us = kCalibrationCallsUs[rung],
                                 .round_trip_us = median(round_trips[rung]),
                                 .gap_us = median(gaps[rung]),
                                 .worker_us = median(worker[rung])});
  }
  return calibration;
}

double measure_read_bandwidth() {
  constexpr size_t kBytes = size_t{1} << 30;  // 17 times the H200's L2: the passes read the DRAM
  constexpr int kPasses = 5;
  const Stream stream;
  const DeviceBuffer buffer(kBytes), sink(sizeof(uint32_t));
  PTXBENCH_CUDA(cudaMemsetAsync(buffer.get(), 0x5A, kBytes, stream.get()));
  PTXBENCH_CUDA(cudaMemsetAsync(sink.get(), 0, sink.bytes(), stream.get()));
  read_all(buffer.get(), kBytes, sink.as<uint32_t>(), stream.get());  // the warm-up
  const Event start, stop;
  float best_ms = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    // The GPU spins while the host launches, so that the launch's host work is not between the events.
    launch_spin_kernel(100, stream.get());
    PTXBENCH_CUDA(cudaEventRecord(start.get(), stream.get()));
    read_all(buffer.get(), kBytes, sink.as<uint32_t>(), stream.get());
    PTXBENCH_CUDA(cudaEventRecord(stop.get(), stream.get()));
    PTXBENCH_CUDA(cudaEventSynchronize(stop.get()));
    float ms = 0;
    PTXBENCH_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    if (pass == 0 || ms < best_ms) best_ms = ms;
  }
  return static_cast<double>(kBytes) / (static_cast<double>(best_ms) * 1e-3);
}

Json SolutionFault::details() const {
  Json details = {
      {p::kShape, shape.empty() ? Json(nullptr) : Json(shape)}, {p::kTrial, trial}, {p::kWhere, where}};
  details[p::kReturnCode] = code ? Json(*code) : Json(nullptr);
  details[p::kCudaError] = error ? Json(cudaGetErrorName(*error)) : Json(nullptr);
  details[p::kCudaErrorString] = error ? Json(cudaGetErrorString(*error)) : Json(nullptr);
  details[p::kDeviceFault] = error && is_sticky_kernel_error(*error);
  if (!debugger_output.empty()) details[p::kDebuggerOutput] = debugger_output;
  if (!debugger_failure.empty()) details[p::kDebuggerFailure] = debugger_failure;
  return details;
}

void run_mode(Session& session, Mode mode) {
  switch (mode) {
    case Mode::check:
      return run_check(session);
    case Mode::time:
      return run_time(session);
    case Mode::profile:
      return run_profile(session);
    case Mode::sanitize:
      return run_sanitize(session);
    case Mode::check_then_time:
      throw std::logic_error("check_then_time is two modes, run one after the other");
  }
}

}  // namespace ptxbench::runner
