#include "runner/request.h"

#include <optional>

#include "runner/protocol.h"

namespace ptxbench::runner {
namespace {

namespace p = ptxbench::protocol;

const Json& require(const Json& object, const char* field) {
  if (!object.contains(field)) throw RequestError(std::string("request: missing field \"") + field + "\"");
  return object.at(field);
}

std::string require_string(const Json& object, const char* field) {
  const Json& value = require(object, field);
  if (!value.is_string() || value.get<std::string>().empty()) {
    throw RequestError(std::string("request: \"") + field + "\" must be a non-empty string");
  }
  return value.get<std::string>();
}

int optional_int(const Json& object, const char* field, int fallback, int min_value) {
  if (!object.contains(field)) return fallback;
  const Json& value = object.at(field);
  if (!value.is_number_integer() || value.get<int64_t>() < min_value || value.get<int64_t>() > 1000000) {
    throw RequestError(std::string("request: \"") + field +
                       "\" must be an integer >= " + std::to_string(min_value));
  }
  return value.get<int>();
}

double optional_non_negative(const Json& object, const char* field, double fallback) {
  if (!object.contains(field)) return fallback;
  const Json& value = object.at(field);
  if (!value.is_number() || value.get<double>() < 0) {
    throw RequestError(std::string("request: \"") + field + "\" must be a number >= 0");
  }
  return value.get<double>();
}

Mode parse_mode(const std::string& name) {
  if (name == p::kModeCheck) return Mode::check;
  if (name == p::kModeTime) return Mode::time;
  if (name == p::kModeProfile) return Mode::profile;
  if (name == p::kModeSanitize) return Mode::sanitize;
  if (name == p::kModeCheckThenTime) return Mode::check_then_time;
  throw RequestError("request: unknown mode \"" + name +
                     "\" (check, time, profile, sanitize or check_then_time)");
}

Tolerance parse_tolerance(const Json& object, const std::string& where, const Tolerance& fallback) {
  if (!object.is_object()) throw RequestError("request: \"" + where + "\" must be an object");
  return {optional_non_negative(object, p::kRtol, fallback.rtol),
          optional_non_negative(object, p::kAtol, fallback.atol)};
}

ShapeSpec parse_shape(const Json& object, size_t index) {
  const std::string where = "request: shapes[" + std::to_string(index) + "]";
  if (!object.is_object()) throw RequestError(where + " must be an object");
  ShapeSpec shape;
  shape.label = require_string(object, p::kLabel);
  for (const auto& [name, value] : object.items()) {
    if (name == p::kLabel) continue;
    if (!value.is_number_integer()) throw RequestError(where + "." + name + " must be an integer");
    shape.dims.emplace_back(name, value.get<int64_t>());
  }
  if (shape.dims.empty()) throw RequestError(where + " has no dimensions");
  return shape;
}

}  // namespace

Request parse_request(const std::string& text) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& error) {
    throw RequestError(std::string("request: not JSON: ") + error.what());
  }
  if (!doc.is_object()) throw RequestError("request: must be a JSON object");

  Request request;
  request.mode_name = require_string(doc, p::kMode);
  request.mode = parse_mode(request.mode_name);
  request.library = require_string(doc, p::kLibrary);
  request.family = require_string(doc, p::kFamily);
  request.entry_point = require_string(doc, p::kEntryPoint);

  const Json& shapes = require(doc, p::kShapes);
  if (!shapes.is_array() || shapes.empty())
    throw RequestError("request: \"shapes\" must be a non-empty array");
  for (size_t i = 0; i < shapes.size(); ++i) request.shapes.push_back(parse_shape(shapes[i], i));

  // The seed is the parent's secret: a positive integer up to 2^64 - 1, never defaulted.
  const Json& seed = require(doc, p::kSeed);
  if (!seed.is_number_unsigned()) throw RequestError("request: \"seed\" must be a non-negative integer");
  request.seed = seed.get<uint64_t>();

  const Json no_tolerance = Json::object();
  const Json& tolerance = doc.contains(p::kTolerance) ? doc.at(p::kTolerance) : no_tolerance;
  if (!tolerance.is_object()) throw RequestError("request: \"tolerance\" must be an object");
  request.tolerance.rtol = optional_non_negative(tolerance, p::kRtol, p::kDefaultRtol);
  request.tolerance.atol = optional_non_negative(tolerance, p::kAtol, p::kDefaultAtol);
  // Which output names and parameters a family takes is the family's to check (make_family); here only types.
  if (doc.contains(p::kTolerances)) {
    const Json& tolerances = doc.at(p::kTolerances);
    if (!tolerances.is_object()) throw RequestError("request: \"tolerances\" must be an object");
    for (const auto& [output, value] : tolerances.items()) {
      request.tolerances[output] =
          parse_tolerance(value, std::string(p::kTolerances) + "." + output, request.tolerance);
    }
  }
  if (doc.contains(p::kParameters)) {
    const Json& parameters = doc.at(p::kParameters);
    if (!parameters.is_object()) throw RequestError("request: \"parameters\" must be an object");
    for (const auto& [name, value] : parameters.items()) {
      if (!value.is_boolean()) {
        throw RequestError("request: \"parameters." + name + "\" must be true or false");
      }
      request.parameters[name] = value.get<bool>();
    }
  }

  request.trials = optional_int(doc, p::kTrials, p::kDefaultTrials, 1);
  request.warmup = optional_int(doc, p::kWarmup, p::kDefaultWarmup, 0);
  request.repetitions = optional_int(doc, p::kRepetitions, p::kDefaultRepetitions, p::kMinRepetitions);
  request.device = optional_int(doc, p::kDevice, 0, 0);
  request.dense_flops_per_sm_per_clock = optional_int(doc, p::kDenseFlopsPerSmPerClock, 0, 1);
  for (const auto& [field, limit] : {std::pair{p::kCheckLimitS, &request.check_limit_s},
                                     std::pair{p::kTimeLimitS, &request.time_limit_s}}) {
    if (!doc.contains(field)) continue;
    if (request.mode != Mode::check_then_time)
      throw RequestError(std::string("request: \"") + field + "\" belongs to the check_then_time mode");
    *limit = optional_non_negative(doc, field, 0);
  }
  if (doc.contains(p::kDebugger)) {
    if (request.mode != Mode::check_then_time)
      throw RequestError("request: \"debugger\" belongs to the check_then_time mode");
    request.debugger = require_string(doc, p::kDebugger);
  }

  const std::string track = doc.contains(p::kTrack) ? require_string(doc, p::kTrack) : p::kTrackCuda;
  if (track != p::kTrackCuda && track != p::kTrackTriton)
    throw RequestError("request: \"track\" must be \"cuda\" or \"triton\"");
  request.triton = track == p::kTrackTriton;
  if (doc.contains(p::kBaselineModule)) request.baseline_module = require_string(doc, p::kBaselineModule);
  if (request.triton || !request.baseline_module.empty()) {
    request.python = require_string(doc, p::kPython);
  } else if (doc.contains(p::kPython)) {
    throw RequestError("request: \"python\" runs a Triton solution or a baseline module, and there is none");
  }
  for (const auto& [field, value] :
       {std::pair{p::kKernelsDir, &request.kernels_dir}, std::pair{p::kTritonCache, &request.triton_cache}}) {
    if (!doc.contains(field)) continue;
    if (!request.triton)
      throw RequestError(std::string("request: \"") + field + "\" belongs to the triton track");
    *value = require_string(doc, field);
  }
  if (doc.contains(p::kPythonBytecode)) {
    if (request.python.empty())
      throw RequestError("request: \"python_bytecode\" is for python, and the request runs none");
    request.python_bytecode = require_string(doc, p::kPythonBytecode);
  }
  if (doc.contains(p::kSolutionWrapper)) {
    const Json& wrapper = doc.at(p::kSolutionWrapper);
    if (!wrapper.is_array() || wrapper.empty())
      throw RequestError("request: \"solution_wrapper\" must be a non-empty array of strings");
    for (const Json& argument : wrapper) {
      if (!argument.is_string() || argument.get<std::string>().empty())
        throw RequestError("request: \"solution_wrapper\" must be a non-empty array of strings");
      request.solution_wrapper.push_back(argument.get<std::string>());
    }
  }
  return request;
}

}  // namespace ptxbench::runner
