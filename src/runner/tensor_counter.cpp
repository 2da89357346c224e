// The tensor-pipe counter (tensor_counter.h) on CUPTI's range profiler. Set up once per context: the profiler
// host builds the config image for the two metrics on the context's chip, the range profiler is enabled on
// the context and its counter data image sized for one range. Each begin()/end() pair is then one session of
// one user range: the image is reset and the config set, the session started and the range pushed; at end()
// the range is popped, the session stopped, the hardware's data decoded into the image and the metrics
// evaluated.
#include "runner/tensor_counter.h"

#include <array>
#include <cmath>
#include <new>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

namespace ptxbench::runner {
namespace {

constexpr const char* kRangeName = "ptxbench";

// CUPTI's parameter structs, zeroed (pPriv null, every option off) with the size CUPTI checks for.
template <typename Params>
Params params(size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

// The first failure of an operation is kept: the calls that clean up after it would only hide its cause.
bool record(std::string& problem, std::string what) {
  if (problem.empty()) problem = std::move(what);
  return false;
}

bool cupti_ok(std::string& problem, const char* call, CUptiResult result) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI error";
  return record(problem, std::string(call) + " failed: " + text + " (CUptiResult " +
                             std::to_string(static_cast<int>(result)) + ")");
}

// The calling thread's context. Through the runtime's entry-point lookup rather than a link to libcuda, so
// that the runner still starts, and says why it cannot judge, on a machine without the driver.
bool current_context(CUcontext& context, std::string& problem) {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || function == nullptr)
    return record(problem, "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent) failed");
  if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS || context == nullptr)
    return record(problem, "cuCtxGetCurrent: the calling thread has no CUDA context");
  return true;
}

// The profiler is initialised once per process and never deinitialised: another counter of the process, on
// another context, may still be using it.
CUptiResult initialize_profiler() {
  static const CUptiResult result = [] {
    auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    return cuptiProfilerInitialize(&p);
  }();
  return result;
}

// A metric's value is a double; the counts are integers, so anything else is a decoding failure.
std::optional<uint64_t> to_count(double value) {
  if (!std::isfinite(value) || value < 0 || value >= 9.0e18) return std::nullopt;
  return static_cast<uint64_t>(std::llround(value));
}

struct HostDeleter {
  void operator()(CUpti_Profiler_Host_Object* host) const {
    auto p =
        params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = host;
    (void)cuptiProfilerHostDeinitialize(&p);
  }
};

struct RangeProfilerDeleter {
  void operator()(CUpti_RangeProfiler_Object* range_profiler) const {
    auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = range_profiler;
    (void)cuptiRangeProfilerDisable(&p);
  }
};

}  // namespace

struct TensorCounter::Profiler {
  // Declared in this order so that they are released in the reverse: the range profiler is disabled first,
  // while the host object and the images it was configured with still exist.
  // The profile's mma and tensor metrics, in the order cuptiProfilerHostEvaluateToGpuValues returns them
  // (CUPTI takes the names through a non-const pointer).
  std::array<const char*, 2> metrics;
  std::vector<uint8_t> config_image;  // SetConfig keeps pointers to both images
  std::vector<uint8_t> counter_data;
  std::unique_ptr<CUpti_Profiler_Host_Object, HostDeleter> host;
  std::unique_ptr<CUpti_RangeProfiler_Object, RangeProfilerDeleter> range_profiler;

  bool set_up(std::string& problem) {
    if (!cupti_ok(problem, "cuptiProfilerInitialize", initialize_profiler())) return false;
    CUcontext context = nullptr;
    if (!current_context(context, problem)) return false;
    std::string chip;
    std::vector<uint8_t> availability;
    return chip_name(chip, problem) && counter_availability(context, availability, problem) &&
           create_host(chip, availability, problem) && build_config(problem) && enable(context, problem) &&
           size_counter_data(problem);
  }

  bool begin(std::string& problem) {
    if (!reset_counter_data(problem) || !set_config(problem)) return false;
    auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = range_profiler.get();
    if (!cupti_ok(problem, "cuptiRangeProfilerStart", cuptiRangeProfilerStart(&start))) return false;
    auto push =
        params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = range_profiler.get();
    push.pRangeName = kRangeName;
    if (cupti_ok(problem, "cuptiRangeProfilerPushRange", cuptiRangeProfilerPushRange(&push))) return true;
    (void)stop(problem);  // so that the next begin() finds no session open
    return false;
  }

  std::optional<TensorCounts> end(std::string& problem) {
    if (!close(problem) || !decode(problem) || !holds_one_range(problem)) return std::nullopt;
    return evaluate(problem);
  }

  // Pops the range and stops the session, the second even when the first failed, so that the profiler is
  // left ready for the next begin().
  bool close(std::string& problem) {
    auto pop = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = range_profiler.get();
    const bool popped = cupti_ok(problem, "cuptiRangeProfilerPopRange", cuptiRangeProfilerPopRange(&pop));
    const bool stopped = stop(problem);
    return popped && stopped;
  }

 private:
  // The chip of the current device. The profiler names devices by ordinal.
  static bool chip_name(std::string& chip, std::string& problem) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return record(problem, "cudaGetDevice failed");
    auto p = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    p.deviceIndex = static_cast<size_t>(device);
    if (!cupti_ok(problem, "cuptiDeviceGetChipName", cuptiDeviceGetChipName(&p))) return false;
    if (p.pChipName == nullptr) return record(problem, "cuptiDeviceGetChipName: no chip name");
    chip = p.pChipName;
    return true;
  }

  // Which counters the context's device exposes: the host needs it to schedule metrics on chips newer than
  // its own tables.
  static bool counter_availability(CUcontext context, std::vector<uint8_t>& image, std::string& problem) {
    auto p = params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    p.ctx = context;
    if (!cupti_ok(problem, "cuptiProfilerGetCounterAvailability (size)",
                  cuptiProfilerGetCounterAvailability(&p)))
      return false;
    image.assign(p.counterAvailabilityImageSize, 0);
    p.pCounterAvailabilityImage = image.data();
    return cupti_ok(problem, "cuptiProfilerGetCounterAvailability", cuptiProfilerGetCounterAvailability(&p));
  }

  bool create_host(const std::string& chip, const std::vector<uint8_t>& availability, std::string& problem) {
    auto p = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.data();
    if (!cupti_ok(problem, "cuptiProfilerHostInitialize", cuptiProfilerHostInitialize(&p))) return false;
    host.reset(p.pHostObject);
    return true;
  }

  // One pass or none: a second pass would need the range's work replayed, which the caller cannot do.
  bool build_config(std::string& problem) {
    auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host.get();
    add.ppMetricNames = metrics.data();
    add.numMetrics = metrics.size();
    if (!cupti_ok(problem, "cuptiProfilerHostConfigAddMetrics", cuptiProfilerHostConfigAddMetrics(&add)))
      return false;
    auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host.get();
    if (!cupti_ok(problem, "cuptiProfilerHostGetConfigImageSize", cuptiProfilerHostGetConfigImageSize(&size)))
      return false;
    config_image.assign(size.configImageSize, 0);
    auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host.get();
    image.configImageSize = config_image.size();
    image.pConfigImage = config_image.data();
    if (!cupti_ok(problem, "cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage(&image)))
      return false;
    auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = config_image.size();
    passes.pConfigImage = config_image.data();
    if (!cupti_ok(problem, "cuptiProfilerHostGetNumOfPasses", cuptiProfilerHostGetNumOfPasses(&passes)))
      return false;
    if (passes.numOfPasses != 1)
      return record(problem, "cuptiProfilerHostGetNumOfPasses: the tensor metrics need " +
                                 std::to_string(passes.numOfPasses) + " passes, not one");
    return true;
  }

  bool enable(CUcontext context, std::string& problem) {
    auto p = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = context;
    if (!cupti_ok(problem, "cuptiRangeProfilerEnable", cuptiRangeProfilerEnable(&p))) return false;
    range_profiler.reset(p.pRangeProfilerObject);
    return true;
  }

  // Room for one range: a session that recorded more would report them dropped, never mix them in.
  bool size_counter_data(std::string& problem) {
    auto p = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = range_profiler.get();
    p.pMetricNames = metrics.data();
    p.numMetrics = metrics.size();
    p.maxNumOfRanges = 1;
    p.maxNumRangeTreeNodes = 1;
    if (!cupti_ok(problem, "cuptiRangeProfilerGetCounterDataSize", cuptiRangeProfilerGetCounterDataSize(&p)))
      return false;
    counter_data.assign(p.counterDataSize, 0);
    return reset_counter_data(problem);
  }

  // Empties the image, so that each session's decode writes its one range into a clean image.
  bool reset_counter_data(std::string& problem) {
    auto p = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = range_profiler.get();
    p.counterDataSize = counter_data.size();
    p.pCounterData = counter_data.data();
    return cupti_ok(problem, "cuptiRangeProfilerCounterDataImageInitialize",
                    cuptiRangeProfilerCounterDataImageInitialize(&p));
  }

  // Set before every session: the config binds the counter data image the session decodes into, and the
  // session always starts at pass 0.
  bool set_config(std::string& problem) {
    auto p = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = range_profiler.get();
    p.configSize = config_image.size();
    p.pConfig = config_image.data();
    p.counterDataImageSize = counter_data.size();
    p.pCounterDataImage = counter_data.data();
    p.range = CUPTI_UserRange;        // the range is ours, not one per kernel: launches are not serialised
    p.replayMode = CUPTI_UserReplay;  // nothing is replayed by CUPTI; one pass needs no replay at all
    p.maxRangesPerPass = 1;
    p.numNestingLevels = 1;
    p.minNestingLevel = 1;
    p.passIndex = 0;
    p.targetNestingLevel = 1;
    return cupti_ok(problem, "cuptiRangeProfilerSetConfig", cuptiRangeProfilerSetConfig(&p));
  }

  bool stop(std::string& problem) {
    auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = range_profiler.get();
    if (!cupti_ok(problem, "cuptiRangeProfilerStop", cuptiRangeProfilerStop(&p))) return false;
    if (p.isAllPassSubmitted == 0)
      return record(problem, "cuptiRangeProfilerStop: the session's one pass did not collect every metric");
    return true;
  }

  // Waits for the context's work (DecodeData synchronises it) and moves the hardware's data into the image.
  bool decode(std::string& problem) {
    auto p = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = range_profiler.get();
    if (!cupti_ok(problem, "cuptiRangeProfilerDecodeData", cuptiRangeProfilerDecodeData(&p))) return false;
    if (p.numOfRangeDropped != 0)
      return record(problem, "cuptiRangeProfilerDecodeData: " + std::to_string(p.numOfRangeDropped) +
                                 " range(s) dropped");
    return true;
  }

  bool holds_one_range(std::string& problem) {
    auto p = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    p.pCounterDataImage = counter_data.data();
    p.counterDataImageSize = counter_data.size();
    if (!cupti_ok(problem, "cuptiRangeProfilerGetCounterDataInfo", cuptiRangeProfilerGetCounterDataInfo(&p)))
      return false;
    if (p.numTotalRanges != 1)
      return record(problem, "cuptiRangeProfilerGetCounterDataInfo: " + std::to_string(p.numTotalRanges) +
                                 " ranges decoded, not one");
    return true;
  }

  std::optional<TensorCounts> evaluate(std::string& problem) {
    std::array<double, 2> values{};
    auto p = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    p.pHostObject = host.get();
    p.pCounterDataImage = counter_data.data();
    p.counterDataImageSize = counter_data.size();
    p.rangeIndex = 0;
    p.ppMetricNames = metrics.data();
    p.numMetrics = metrics.size();
    p.pMetricValues = values.data();
    if (!cupti_ok(problem, "cuptiProfilerHostEvaluateToGpuValues", cuptiProfilerHostEvaluateToGpuValues(&p)))
      return std::nullopt;
    const std::optional<uint64_t> mma = to_count(values[0]);
    const std::optional<uint64_t> tensor = to_count(values[1]);
    if (!mma || !tensor) {
      record(problem, "cuptiProfilerHostEvaluateToGpuValues: not counts: " + std::to_string(values[0]) +
                          ", " + std::to_string(values[1]));
      return std::nullopt;
    }
    return TensorCounts{.mma = *mma, .tensor = *tensor};
  }
};

TensorCounter::TensorCounter(const ArchProfile* arch) {
  if (arch == nullptr) {
    problem_ = "TensorCounter: no architecture profile is this GPU's";
    return;
  }
  if (!arch->counters) {
    problem_ = "TensorCounter: " + arch->counters_missing;
    return;
  }
  // The images are the only allocations that could fail; a counter that cannot hold them is just unavailable.
  try {
    auto profiler = std::make_unique<Profiler>();
    profiler->metrics = {arch->counters->mma.metric.c_str(), arch->counters->tensor.metric.c_str()};
    if (profiler->set_up(problem_)) profiler_ = std::move(profiler);
  } catch (const std::bad_alloc&) {
    problem_ = "TensorCounter: out of host memory for CUPTI's images";
  }
}

TensorCounter::TensorCounter(std::string why) : problem_(std::move(why)) {}

TensorCounter::~TensorCounter() {
  if (profiler_ == nullptr || !in_range_) return;
  std::string ignored;
  (void)profiler_->close(ignored);
}

bool TensorCounter::begin() {
  if (profiler_ == nullptr) return false;  // problem_ still says why
  if (in_range_) {
    problem_ = "TensorCounter::begin: a range is already open";
    return false;
  }
  problem_.clear();
  in_range_ = profiler_->begin(problem_);
  return in_range_;
}

std::optional<TensorCounts> TensorCounter::end() {
  if (profiler_ == nullptr) return std::nullopt;
  if (!in_range_) {
    problem_ = "TensorCounter::end: no range is open";
    return std::nullopt;
  }
  in_range_ = false;
  problem_.clear();
  return profiler_->end(problem_);
}

}  // namespace ptxbench::runner
