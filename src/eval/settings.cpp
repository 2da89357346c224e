#include "eval/settings.h"

#include <charconv>
#include <cstdlib>

#include "eval/gpu_stages.h"
#include "util/errors.h"

namespace ptxbench {
namespace {

// A whole number of `unit`s, below the point where shifting it by `shift` bits would overflow.
std::uintmax_t whole_number(const char* name, const std::string& text, int shift, const char* unit) {
  std::uintmax_t value = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, value);
  if (parsed.ec != std::errc() || parsed.ptr != end || value > (UINTMAX_MAX >> shift))
    throw ConfigError(std::string(name) + " must be a whole number of " + unit + ", not '" + text + "'");
  return value << shift;
}

}  // namespace

Environment process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (!value || !*value) return std::nullopt;
    return std::string(value);
  };
}

HostSettings host_settings(const Environment& environment) {
  HostSettings s;
  if (auto v = environment("PTXBENCH_NVCC")) s.nvcc = *v;
  if (auto v = environment("PTXBENCH_RUNNER"))
    s.runner = *v;
  else
    s.runner = runner_beside_executable();
  if (auto v = environment("PTXBENCH_PYTHON")) s.python = *v;
  if (auto v = environment("CUDA_VISIBLE_DEVICES")) s.visible_devices = *v;
  if (auto v = environment("PTXBENCH_SANDBOX_DATA_GB"))
    s.sandbox_data_bytes = whole_number("PTXBENCH_SANDBOX_DATA_GB", *v, 30, "gigabytes");
  if (auto v = environment("PTXBENCH_CACHE_LIMIT_MB"))
    s.compile_cache_limit = whole_number("PTXBENCH_CACHE_LIMIT_MB", *v, 20, "megabytes");
  if (auto v = environment("PTXBENCH_COMPILE_MIN_FREE_MB"))
    s.compile_min_free_bytes = whole_number("PTXBENCH_COMPILE_MIN_FREE_MB", *v, 20, "megabytes");
  if (auto v = environment("PTXBENCH_SANDBOX")) s.sandbox.enabled = !(*v == "off" || *v == "0" || *v == "no");
  if (auto v = environment("PTXBENCH_BWRAP")) s.sandbox.bwrap = *v;
  s.sandbox.search_path = environment("PATH").value_or("");
  s.sandbox.home = environment("HOME").value_or("");
  for (const char* name : kSandboxInherited)
    if (auto v = environment(name)) s.sandbox.inherited[name] = *v;
  return s;
}

}  // namespace ptxbench
