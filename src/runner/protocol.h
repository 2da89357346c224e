// clang-format off
// The protocol between `ptxbench eval` (the parent) and `ptxbench-runner` (the GPU child process): the field
// names of the one JSON request the runner reads on stdin and of the one JSON result it writes on stdout.
// Shared by both sides; header-only and free of CUDA, so the parent can include it without the toolkit.
//
// Invocation: `ptxbench-runner < request.json > result.json`. The runner reads stdin up to a NUL byte (or its
// end) as the request and puts /dev/null on fd 0; it never loads the solution library itself but starts a
// solution process for it (`ptxbench-runner --solution-worker FD`, solution_protocol.h). Everything the
// solution prints goes to stderr: the runner keeps a private copy of its original stdout for the result and
// points fd 1 at stderr, which the solution process inherits. Exit code 0 means the result was written, whatever its status; any other exit (code,
// signal, timeout) means it was not, and the parent judges that itself. The runner hangs when the solution
// never ends: the parent enforces time limits. Under ncu or compute-sanitizer the tools also print on stdout:
// give them --log-file (and ncu --export) so that stdout holds the result alone.
//
// ---- Result channel (authenticated) -----------------------------------------------------------------------
// The parent writes `<request JSON> NUL <key>` on stdin, the key being 64 fresh random hex digits per process.
// The runner leaves the key unread in the pipe and reads it only after the mode is over and the solution
// process is gone; then stdout is
//   <result JSON>\n
//   ptxbench-mac <HMAC-SHA256(key, result JSON + "\n") in hex>\n
// and nothing else. Without a key (a person piping a request file) the tag line is left out. The parent
// (src/eval/gpu_stages.cpp) accepts only exactly that shape with a valid tag: any other byte on the channel
// (a forged or extra document, a write to a guessed descriptor) or a missing tag (the key was read by someone
// else) makes the stage fail as tampering. result_mac.h has the HMAC; docs/anti-cheat.md the threat model.
//
// ---- Request ----------------------------------------------------------------------------------------------
// {
//   "mode": "check" | "time" | "profile" | "sanitize" | "check_then_time",
//   "library": "/abs/path/solution.so",         // built with nvcc -shared -cudart shared -lcuda
//   "family": "gemm",
//   "entry_point": "ptxbench_gemm_bf16",
//   "shapes": [{"label": "main", "M": 8192, "N": 4096, "K": 4096}, {"label": "odd-m", "M": 1999, ...}],
//                                               // shapes[0] is the main shape; every key but "label" is a
//                                               // dimension, kept in the given order
//   "tolerance": {"rtol": 0.01, "atol": 0.01},  // optional, default 0.01 / 0.01: every output's unless...
//   "tolerances": {"LSE": {"rtol": 0, "atol": 0.001}},  // optional: per-output overrides, by output name
//                                               // (names the family does not have are a request error)
//   "parameters": {"causal": true},             // the family's parameters: required by the attention
//                                               // families (booleans, all of them given); gemm has none
//   "trials": 3,                                // optional (check), default 3: fresh inputs per trial
//   "seed": 1234567,                            // required, the parent's secret: all inputs derive from it
//   "warmup": 10,                               // optional (time), default 10
//   "repetitions": 50,                          // optional (time), default 50, at least 30; a solution
//                                               // whose first call takes over 0.2 s gets as many as fit
//                                               // 10 s, at least 5 (the timing reports the counts used)
//   "device": 0,                                // optional, default 0
//   "dense_flops_per_sm_per_clock": 4096,       // optional (time): the task's architecture's dense bf16
//                                               // tensor rate (arch/profile.h); without it no physics floor
//                                               // is applied (the timing's "roofline" says so)
//   "track": "cuda",                            // optional, default "cuda"; "triton": "library" is the
//                                               // solution's Python file, run by the python below
//   "python": "/usr/bin/python3",               // triton, or a baseline module: the python with torch
//                                               // and triton
//   "kernels_dir": "/abs/scratch/kernels",      // triton, optional: where the runner copies the kernels
//                                               // Triton compiled (its cache's cubins), once the
//                                               // solution process is gone; the result's
//                                               // "compiled_kernels" lists them
//   "solution_wrapper": ["/usr/bin/compute-sanitizer", "--tool", "racecheck", ...]
//                                               // optional: a tool's command line, which starts the
//                                               // solution process (and follows it alone): the
//                                               // runner's own kernels are not the tool's to check,
//                                               // and instrumented they cost more than the solution's
//                                               // (racecheck on the H200: 6 s of 8 for the reference
//                                               // GEMM, 17 s of 20 for the attention backward, whose
//                                               // inputs come from the runner's reference forward).
//                                               // The runner ends the process by closing its socket,
//                                               // so that the tool finishes its report.
//   "baseline_module": "/abs/baselines/attention_cudnn.py"
//                                               // optional (time): the family's baseline as Python entry
//                                               // points (docs/triton-abi.md), run by `python` in a process
//                                               // of its own as a Triton solution is, and timed
//                                               // alternating with the solution; a family without a
//                                               // baseline in the runner (attention) has none without it
//   "check_limit_s": 120, "time_limit_s": 120   // optional (check_then_time): each part's limit, the
//                                               // check's from the runner's start, the time's from its
//                                               // own; a solution that has not answered by then is killed
//                                               // and its part's status is "timeout"
//   "debugger": "cuda-gdb"                      // optional (check_then_time): when a part's limit
//                                               // runs out, the runner runs the call again in a fresh,
//                                               // unrecorded solution process, attaches this debugger to
//                                               // it after 3 s (-batch -p PID, "info cuda kernels",
//                                               // "info cuda threads", at most 20 s) and puts what it
//                                               // printed, up to 64 KiB, in runtime_error.debugger_output,
//                                               // or why it printed nothing in .debugger_failure
// }
// Families: a request's "family" and "entry_point" are one of src/family's descriptors, which say everything
//   else: the dimensions a shape gives, the parameters, the tensors (inputs, outputs compared with the
//   tolerances, a workspace the solution sizes), the scalars (the attention families' scale = 1/sqrt(D) and
//   causal), the argument order, the FLOPs and bytes. What a descriptor cannot say is the family's Reference
//   (references.h): the fp32 reference, the inputs it computes (the backward's O and LSE: the reference forward
//   of the trial's Q, K, V, O rounded to bf16) and a baseline timed in this process (GEMM's cuBLASLt).
//   The attention families' baseline is the request's baseline_module (the vendor attention), checked once against the
//   reference before the timed calls (a wrong one is a harness_error) and timed by its own process's clocks,
//   its event times the op alone; without one, "baseline", "speedup" and "speedup_wall" are null in "time"
//   mode. The hidden-work test compares the solution's wall - event gap with the calibrated one alone.
// Modes:
//   check    every shape, `trials` trials each, each on a fresh non-blocking stream of the runner's.
//   time     main shape: solution and baseline alternate, each call with fresh inputs and a cold L2; every
//            timed output is checked. Failed when one is wrong or hidden_work_suspected; harness_error
//            when otherwise passed but the solution's fastest call beats the task's roofline (Roofline).
//   profile  main shape: one warm-up call, then one call between cudaProfilerStart/Stop (for
//            ncu --profile-from-start off), then checked.
//   sanitize the smallest shape (fewest elements over its dimensions), one call, checked (for
//            compute-sanitizer).
//   check_then_time  check, then, if every trial passed, time, in one process with one solution process:
//            what the two stages of the judge would otherwise start twice (the runner, the solution's
//            process and context, its library and Triton's kernels) is started once. Each part's result is
//            under "check" and "time" ("time" absent when the check did not pass), with its own "status",
//            "message", "runtime_error", "launches" and "wall_s" (its seconds, the check's from the runner's
//            start); the top level keeps what they share (protocol, mode, device, solution_process,
//            phases_s, compiled_kernels), and its status and message are the last part's. The time part
//            calibrates before the library loads, as the time mode does: before the check.
//
// ---- Result -----------------------------------------------------------------------------------------------
// {
//   "protocol": 1,
//   "mode": "check",
//   "status": "passed" | "failed" | "runtime_error" | "harness_error" | "timeout",
//   "message": "one line a person or a model can act on",
//   "device": {"name", "compute_capability", "sm_count", "l2_bytes", "driver_version", "runtime_version",
//              "cublaslt_version"},
//   "shapes": [{"label", "dims": {"M": .., ...}, "passed", "trials": [Trial, ...]}],  // check, sanitize
//   "timing": Timing,                                                                // time
//   "profile": {"stream_handle": "0x..", "stream_id": n, "trial": Trial},            // profile
//   "runtime_error": {"shape", "trial", "where", "return_code", "cuda_error",        // runtime_error only
//                     "cuda_error_string"}
// }
// status:
//   passed         every check held.
//   failed         wrong output, changed inputs, or work outside `stream`.
//   runtime_error  the solution returned non-zero, a CUDA error followed its call, or its library did not
//                  load or lacks the entry point.
//   harness_error  the runner could not judge (bad request, no GPU, cuBLASLt failed, a time faster than the
//                  roofline): says nothing about the solution.
//   timeout        (check_then_time's parts) the solution did not answer within its part's limit and was
//                  killed; "runtime_error" says which call.
// runtime_error: "where" names the call and what happened ("trial 0: the solution returned 7", "timed call 3:
//   the solution's work on the stream failed"); "return_code", "cuda_error" (e.g. "cudaErrorIllegalAddress")
//   and "cuda_error_string" are null where they do not apply; "shape" is null when the library did not load;
//   "device_fault": the CUDA error is one a kernel's fault leaves (cuda_check.h, is_sticky_kernel_error).
//   Shapes and trials finished before the fault stay in "shapes".
// Trial: {"trial", "key" (hex of the input key derived from the seed, not the seed), "stream_handle",
//   "return_code", "passed", "inputs_unchanged", "changed_inputs": {"A": n, "B": n} (elements that differ
//   from the pristine copies), "output_stable" (false when an output changed after `stream` was
//   synchronised, i.e. work hidden on another stream), "written_past_end": {"C": n} (bytes changed in the
//   2 MiB checked after each buffer the solution sees; only buffers with changes), "outputs": [Output, ...]}
// Output: {"name", "rows", "cols", "elements", "passed", "mismatches", "non_finite", "max_abs_error",
//   "max_rel_error" (over elements with |expected| > atol), "max_error_ratio" (max of |actual - expected| /
//   (atol + rtol |expected|): at most 1 passes), "first_mismatches": [{"row", "col", "expected", "actual"}]
//   (up to 10, in index order; a non-finite value is written as the string "nan", "inf" or "-inf")}
//   An element passes when it is finite and |actual - expected| <= atol + rtol |expected|; the expected
//   values are cuBLASLt's fp32 result (bf16 inputs, fp32 compute) on pristine copies of the inputs.
// Timing: {"shape": {"label", "dims"}, "flops", "warmup", "repetitions", "l2_flush_bytes", "stream_handle",
//   "solution": Series, "baseline": null (no baseline for the family) or Series + {"name": "cublaslt", "compute", "workspace_limit_bytes",
//   "algo": {"algo_id", "tile_id", "stages_id", "splitk", "workspace_bytes"}},
//   "speedup" (baseline event median / solution event median), "speedup_wall" (the same over wall medians),
//   "hidden_work_suspected" (the solution's wall - event gap exceeds the larger of the baseline's and the
//   calibrated one by more than max(20 us, 2% of the solution's event median)), "calibration": {"calls",
//   "rungs": [{"call_us", "round_trip_us", "gap_us"}] (medians over requests to the solution process, before
//   its library loaded, for a kernel of its own that runs call_us), "round_trip_us", "gap_us" (those applied
//   to the solution's event median: the larger of the two rungs around it)}, "times_verified" (every call's
//   events within its wall time within the runner's clock around the request, and the median round trip at
//   most the applied one + max(50 us, 2% of the event median)), "recheck": Trial (the first timed call whose output was wrong, else the last one),
//   "checked_calls" (every timed call is checked), "failed_calls", "roofline": Roofline}
// Roofline: the physics floor of the main shape's call on this GPU (timing_rules.h): {"peak_tflops" (sm_count
//   x the maximum SM clock x dense_flops_per_sm_per_clock; null when the request did not give the rate),
//   "dense_flops_per_sm_per_clock" (null likewise), "sm_count", "sm_clock_mhz", "bandwidth_gbs" (the device's
//   read bandwidth, 1e9 bytes/s, measured by this process before the solution's library loaded: the best of
//   5 passes over 1 GiB after a warm-up), "input_bytes" (what one call must read: the family's inputs),
//   "flops_floor_us" (flops at the peak; null without it), "bytes_floor_us" (input_bytes at the bandwidth),
//   "floor_us" (the larger; null when not applied), "fastest_us" (the solution's fastest timed call, events),
//   "margin" (0.8), "applied" (both the peak and the bandwidth known), "impossible" (applied and fastest_us <
//   margin x floor_us: the status is then harness_error and the message gives the figures)}
// Series: {"event_us": Stats, "wall_us": Stats, "tflops" (flops / event median), "tflops_wall"}; the
//   solution's also "round_trip_us": the runner's clock around each request less the reported wall time, and
//   "worker_before_us", "worker_after_us": the worker's own time in the request before and after its wall
//   clock (its claims, for diagnosis only). A baseline process's (the attention tasks' vendor baseline): its
//   calls queued behind a spin (solution::kBehindSpin), so "wall_us", "tflops_wall" and "speedup_wall" are
//   null, and "dispatch_us": Stats of its host time up to the op's return, "dispatch_outran_spin": how many
//   calls' dispatch outlasted the spin (their events may then hold part of it).
// Stats: {"median", "min", "max", "p10", "p90", "mean"}, microseconds. event_us: CUDA events on the stream
//   around the call (the GPU is idle before it, so the call's launch latency counts; a baseline process's
//   call alone is queued behind a spin, so its dispatch does not); wall_us: host clock around the call plus
//   cudaDeviceSynchronize, so that work on other streams counts too. The solution's are
//   measured in the solution process (after an empty kernel of its own, so that the switch from the runner's
//   CUDA context to its own is in neither), the baseline's in the runner.
// clang-format on
#pragma once

namespace ptxbench::protocol {

inline constexpr int kVersion = 1;

// Request fields.
inline constexpr const char* kMode = "mode";
inline constexpr const char* kLibrary = "library";
inline constexpr const char* kFamily = "family";
inline constexpr const char* kEntryPoint = "entry_point";
inline constexpr const char* kShapes = "shapes";
inline constexpr const char* kLabel = "label";
inline constexpr const char* kTolerance = "tolerance";
inline constexpr const char* kTolerances = "tolerances";
inline constexpr const char* kParameters = "parameters";
inline constexpr const char* kRtol = "rtol";
inline constexpr const char* kAtol = "atol";
inline constexpr const char* kTrials = "trials";
inline constexpr const char* kSeed = "seed";
inline constexpr const char* kWarmup = "warmup";
inline constexpr const char* kRepetitions = "repetitions";
inline constexpr const char* kJudgeCallS = "judge_call_s";  // the judge's work for one timed call
inline constexpr const char* kLoopS = "loop_s";  // the timed calls' loop's seconds by step (session.cpp)
inline constexpr const char* kSetupS = "setup_s";  // the seconds before that loop by step (session.cpp)
inline constexpr const char* kPlacement = "placement";  // each buffer's offset in its allocation, when timed
inline constexpr const char* kDevice = "device";
inline constexpr const char* kDenseFlopsPerSmPerClock = "dense_flops_per_sm_per_clock";
inline constexpr const char* kTrack = "track";
inline constexpr const char* kPython = "python";
inline constexpr const char* kKernelsDir = "kernels_dir";
inline constexpr const char* kPythonBytecode = "python_bytecode";  // python's -X pycache_prefix (read only)
inline constexpr const char* kTritonCache = "triton_cache";        // a Triton cache folder the runner keeps
inline constexpr const char* kSolutionWrapper = "solution_wrapper";
inline constexpr const char* kBaselineModule = "baseline_module";
inline constexpr const char* kCheckLimitS = "check_limit_s";
inline constexpr const char* kDebugger = "debugger";
inline constexpr const char* kTimeLimitS = "time_limit_s";

// Request values and defaults.
inline constexpr const char* kModeCheck = "check";
inline constexpr const char* kModeTime = "time";
inline constexpr const char* kModeProfile = "profile";
inline constexpr const char* kModeSanitize = "sanitize";
inline constexpr const char* kModeCheckThenTime = "check_then_time";
inline constexpr const char* kTrackCuda = "cuda";
inline constexpr const char* kTrackTriton = "triton";
inline constexpr double kDefaultRtol = 0.01;
inline constexpr double kDefaultAtol = 0.01;
inline constexpr int kDefaultTrials = 3;
inline constexpr int kDefaultWarmup = 10;
inline constexpr int kDefaultRepetitions = 50;
inline constexpr int kMinRepetitions = 30;
inline constexpr int kMaxReportedMismatches = 10;

// Result fields (top level).
inline constexpr const char* kProtocol = "protocol";
inline constexpr const char* kStatus = "status";
inline constexpr const char* kMessage = "message";
inline constexpr const char* kDeviceInfo = "device";
inline constexpr const char* kShapeResults = "shapes";
inline constexpr const char* kTiming = "timing";
inline constexpr const char* kProfile = "profile";
inline constexpr const char* kRuntimeError = "runtime_error";
inline constexpr const char* kCompiledKernels = "compiled_kernels";  // triton: the files in kernels_dir
inline constexpr const char* kCheckPart = "check";                   // check_then_time: each part's result
inline constexpr const char* kTimePart = "time";
inline constexpr const char* kWallS = "wall_s";  // a part's seconds

// Result status values.
inline constexpr const char* kPassed = "passed";
inline constexpr const char* kFailed = "failed";
inline constexpr const char* kRuntimeErrorStatus = "runtime_error";
inline constexpr const char* kHarnessError = "harness_error";
inline constexpr const char* kTimeoutStatus = "timeout";

// Shape, trial and output fields.
inline constexpr const char* kDims = "dims";
inline constexpr const char* kTrialList = "trials";
inline constexpr const char* kTrial = "trial";
inline constexpr const char* kKey = "key";
inline constexpr const char* kSampleKey = "sample_key";  // the rows a time-stage check sampled (Reference)
inline constexpr const char* kSampleShare = "sample_share";  // about one block in this many (layouts.h)
inline constexpr const char* kStreamHandle = "stream_handle";
inline constexpr const char* kStreamId = "stream_id";
inline constexpr const char* kReturnCode = "return_code";
inline constexpr const char* kPassedField = "passed";
inline constexpr const char* kInputsUnchanged = "inputs_unchanged";
inline constexpr const char* kChangedInputs = "changed_inputs";
inline constexpr const char* kOutputStable = "output_stable";
inline constexpr const char* kWrittenPastEnd = "written_past_end";
inline constexpr const char* kSolutionProcess = "solution_process";
inline constexpr const char* kRoundTripUs = "round_trip_us";
inline constexpr const char* kTimesVerified = "times_verified";
inline constexpr const char* kCalibration = "calibration";
inline constexpr const char* kCalls = "calls";
inline constexpr const char* kGapUs = "gap_us";
inline constexpr const char* kRungs = "rungs";
inline constexpr const char* kLaunches = "launches";
inline constexpr const char* kWorkerBeforeUs = "worker_before_us";
inline constexpr const char* kWorkerAfterUs = "worker_after_us";
inline constexpr const char* kWorkerUs = "worker_us";
inline constexpr const char* kCallUs = "call_us";
inline constexpr const char* kWritesConfined = "writes_confined";
inline constexpr const char* kThreadsWhenConfined = "threads_when_confined";
inline constexpr const char* kOutputs = "outputs";
inline constexpr const char* kName = "name";
inline constexpr const char* kRows = "rows";
inline constexpr const char* kCols = "cols";
inline constexpr const char* kElements = "elements";
inline constexpr const char* kMismatches = "mismatches";
inline constexpr const char* kNonFinite = "non_finite";
inline constexpr const char* kUnwrittenOutsideSample = "unwritten_outside_sample";
inline constexpr const char* kMaxAbsError = "max_abs_error";
inline constexpr const char* kMaxRelError = "max_rel_error";
inline constexpr const char* kMaxErrorRatio = "max_error_ratio";
inline constexpr const char* kFirstMismatches = "first_mismatches";
inline constexpr const char* kRow = "row";
inline constexpr const char* kCol = "col";
inline constexpr const char* kExpected = "expected";
inline constexpr const char* kActual = "actual";

// Runtime error fields.
inline constexpr const char* kShape = "shape";
inline constexpr const char* kWhere = "where";
inline constexpr const char* kCudaError = "cuda_error";
inline constexpr const char* kCudaErrorString = "cuda_error_string";
inline constexpr const char* kDeviceFault = "device_fault";
inline constexpr const char* kDebuggerOutput = "debugger_output";
inline constexpr const char* kDebuggerFailure = "debugger_failure";

// Timing fields.
inline constexpr const char* kFlops = "flops";
inline constexpr const char* kL2FlushBytes = "l2_flush_bytes";
inline constexpr const char* kSolution = "solution";
inline constexpr const char* kBaseline = "baseline";
inline constexpr const char* kEventUs = "event_us";
inline constexpr const char* kWallUs = "wall_us";
inline constexpr const char* kTflops = "tflops";
inline constexpr const char* kTflopsWall = "tflops_wall";
inline constexpr const char* kDispatchUs = "dispatch_us";
inline constexpr const char* kDispatchOutranSpin = "dispatch_outran_spin";
inline constexpr const char* kSpeedup = "speedup";
inline constexpr const char* kSpeedupWall = "speedup_wall";
inline constexpr const char* kHiddenWorkSuspected = "hidden_work_suspected";
inline constexpr const char* kRecheck = "recheck";
inline constexpr const char* kCheckedCalls = "checked_calls";
inline constexpr const char* kFailedCalls = "failed_calls";
inline constexpr const char* kRoofline = "roofline";
inline constexpr const char* kPeakTflops = "peak_tflops";
inline constexpr const char* kSmCount = "sm_count";
inline constexpr const char* kSmClockMhz = "sm_clock_mhz";
// A runner process's seconds by step (runner_context, solution_process, baseline_process, calibration, load,
// calls, end: each from the previous step's end), for the stage times.
inline constexpr const char* kPhasesS = "phases_s";
// The time stage's SM clock after each timed call of the solution (its series), and whether its median was
// below the maximum (timing_rules.h, clock_below_max).
inline constexpr const char* kSmClockDuringMhz = "sm_clock_during_mhz";
inline constexpr const char* kTimedWindowUnixS = "timed_window_unix_s";  // [begin, end] of the timed calls
inline constexpr const char* kPciBusId = "pci_bus_id";                   // device_info's
inline constexpr const char* kGpuDuring = "gpu_during";  // added by the judge: its samples of the GPU then
inline constexpr const char* kSmClockBelowMax = "sm_clock_below_max";
inline constexpr const char* kBandwidthGbs = "bandwidth_gbs";
inline constexpr const char* kInputBytes = "input_bytes";
inline constexpr const char* kFlopsFloorUs = "flops_floor_us";
inline constexpr const char* kBytesFloorUs = "bytes_floor_us";
inline constexpr const char* kFloorUs = "floor_us";
inline constexpr const char* kFastestUs = "fastest_us";
inline constexpr const char* kMargin = "margin";
inline constexpr const char* kApplied = "applied";
inline constexpr const char* kImpossible = "impossible";
inline constexpr const char* kAlgo = "algo";
inline constexpr const char* kMedian = "median";
inline constexpr const char* kMin = "min";
inline constexpr const char* kMax = "max";
inline constexpr const char* kP10 = "p10";
inline constexpr const char* kP90 = "p90";
inline constexpr const char* kMean = "mean";

}  // namespace ptxbench::protocol
