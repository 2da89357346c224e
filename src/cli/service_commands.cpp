// `ptxbench serve` and `ptxbench worker`: the evaluation service's two processes (docs/service.md).
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cli/commands.h"
#include "cli/helpers.h"
#include "compile/compile.h"
#include "eval/evaluator.h"
#include "service/remote_evaluator.h"
#include "service/server.h"
#include "service/worker.h"
#include "arch/profile.h"
#include "util/files.h"
#include "util/subprocess.h"

namespace ptxbench {
namespace {

// SIGINT and SIGTERM, taken by a thread of their own (sigwait) rather than a handler, so that what they do
// (stop the server, let the worker finish its job) runs as ordinary code. Blocked before any other thread
// starts, so every thread inherits the mask.
class StopSignals {
 public:
  explicit StopSignals(std::function<void()> on_stop) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    waiter_ = std::thread([this, on_stop = std::move(on_stop)] {
      int signal = 0;
      sigwait(&set_, &signal);
      if (!done_) on_stop();
    });
  }
  ~StopSignals() {
    done_ = true;
    pthread_kill(waiter_.native_handle(), SIGTERM);  // wakes the waiter, which then does nothing
    waiter_.join();
  }

 private:
  sigset_t set_;
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

service::RedisAddress redis_address(const std::string& option) {
  std::string text = option;
  if (text.empty())
    if (const char* value = std::getenv("PTXBENCH_REDIS"); value && *value) text = value;
  return service::parse_redis_address(text.empty() ? "redis://127.0.0.1:6379" : text);
}

void log_line(const std::string& line) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::cerr << fmt::format("{} {}\n", utc_now_iso8601(), line) << std::flush;
}

}  // namespace

std::string service_token(const std::string& token_file) {
  std::string token;
  if (!token_file.empty()) {
    try {
      token = read_regular_file(token_file, 4096);
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("the service token: ") + e.what());
    }
    token = token.substr(0, token.find_first_of("\r\n"));
  } else if (const char* value = std::getenv("PTXBENCH_SERVICE_TOKEN"); value && *value) {
    token = value;
  }
  if (token.empty())
    throw std::invalid_argument(
        "the evaluation service needs a token: --token-file FILE or $PTXBENCH_SERVICE_TOKEN");
  if (token.size() < 16 || token.find_first_of(" \t") != std::string::npos)
    throw std::invalid_argument("the service token must be at least 16 characters, without spaces");
  return token;
}

std::unique_ptr<Evaluator> run_evaluator(std::unique_ptr<LocalEvaluator> local, const RemoteChoice& remote,
                                         const ProjectPaths& paths, const HostSettings& host) {
  if (remote.url.empty()) return local;
  if (!remote.url.starts_with("http://") && !remote.url.starts_with("https://"))
    throw std::invalid_argument("--evaluator takes the service's URL, http://HOST:PORT, not '" + remote.url +
                                "'");
  service::RemoteSettings settings{.url = remote.url,
                                   .token = service_token(remote.token_file),
                                   .stages = remote.stages,
                                   .cpu_only = remote.cpu_only,
                                   .stage_time_limit_s = remote.stage_time_limit_s,
                                   .queue_wait_s = remote.queue_wait_s,
                                   .profile = remote.profile};
  std::unique_ptr<Evaluator> precheck;
  if (!nvcc_version(host.nvcc).empty()) {
    const GpuInfo none{.absent_reason = "the CPU stages are judged here, the rest by the service"};
    precheck = std::make_unique<LocalEvaluator>(
        [&paths, &host, none](const Task& task) { return eval_options(paths, host, task, false, none, 0); });
  }
  return std::make_unique<service::RemoteEvaluator>(std::move(settings), std::move(precheck));
}

int serve_command(const CommonOptions& common, const ServeCommandOptions& options) {
  const ProjectPaths paths = find_project(common.root, common.data);
  const TaskRegistry registry = TaskRegistry::load(paths.tasks());
  service::ServerSettings settings;
  try {
    settings.token = service_token(options.token_file);
    settings.redis = redis_address(options.redis);
    const size_t colon = options.listen.rfind(':');
    if (colon == std::string::npos) throw std::invalid_argument("--listen takes HOST:PORT");
    settings.host = options.listen.substr(0, colon);
    const std::string port = options.listen.substr(colon + 1);
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), settings.port);
    if (error != std::errc() || end != port.data() + port.size() || port.empty() || settings.port < 0 ||
        settings.port > 65535)
      throw std::invalid_argument("--listen takes HOST:PORT, PORT a number from 0 to 65535, not '" + port +
                                  "'");
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  settings.max_body_bytes = static_cast<size_t>(options.max_body_mb * (1 << 20));
  settings.bounds = {.request_read_s = options.request_read_s,
                     .connections_per_peer = options.max_peer_connections};
  service::Server server(settings, registry);
  int port = 0;
  try {
    port = server.bind();
  } catch (const std::runtime_error& e) {  // the address asked for: the user's to change
    std::fprintf(stderr, "ptxbench: --listen %s: %s\n", options.listen.c_str(), e.what());
    return kExitUsage;
  }
  if (!options.port_file.empty()) write_output_file(options.port_file, fmt::format("{}\n", port));
  log_line(fmt::format("ptxbench serve: http://{}:{}/v1 ({} tasks), jobs in Redis at {}", settings.host, port,
                       registry.all().size(), settings.redis.describe()));
  {
    StopSignals signals([&] { server.stop(); });
    server.listen();
  }
  log_line("ptxbench serve: stopped");
  return kExitOk;
}

int worker_command(const CommonOptions& common, const WorkerCommandOptions& options) {
  const ProjectPaths paths = find_project(common.root, common.data);
  const TaskRegistry registry = TaskRegistry::load(paths.tasks());
  const HostSettings host = host_settings();
  keep_compile_cache_within_limit(paths, host);
  if (options.cpu_only == (options.gpu >= 0)) {
    std::fprintf(stderr,
                 "ptxbench: a worker judges on one GPU (--gpu N) or the CPU stages alone (--cpu-only)\n");
    return kExitUsage;
  }
  if (options.lease_s < 2 * options.heartbeat_s) {
    std::fprintf(stderr, "ptxbench: --lease must be at least twice --heartbeat (a beat may come late)\n");
    return kExitUsage;
  }
  service::WorkerSettings settings{
      .queue = {.lease_s = options.lease_s, .max_attempts = options.max_attempts},
      .heartbeat_s = options.heartbeat_s,
      .recheck_s = std::max(1.0, 4 * options.heartbeat_s)};
  service::RedisAddress redis;
  try {
    redis = redis_address(options.redis);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "ptxbench: %s\n", e.what());
    return kExitUsage;
  }
  char hostname[256] = "host";
  gethostname(hostname, sizeof hostname - 1);
  GpuInfo gpu{.absent_reason = "a CPU worker: the compile and static stages alone"};
  std::string device;
  if (options.cpu_only) {
    settings.queues = {"cpu"};
    settings.description = "cpu";
  } else {
    device = std::to_string(options.gpu);
    gpu = detect_gpu(device);
    const ArchProfile* arch = nullptr;
    for (const auto& a : all_archs())
      if (gpu.present && a.compute_capability == gpu.compute_capability) arch = &a;
    if (!arch) {
      std::fprintf(stderr, "ptxbench: worker --gpu %d: %s\n", options.gpu,
                   gpu.present ? fmt::format("{} is no task architecture's GPU", gpu.describe()).c_str()
                               : gpu.absent_reason.c_str());
      return kExitHarness;
    }
    settings.queues = {arch->name, "cpu"};
    settings.description = fmt::format("gpu {}: {}", device, gpu.describe());
    settings.gpu_problem = [device] {
      const ProcessResult r =
          run_process({.argv = {"nvidia-smi", "-i", device, "--query-gpu=name", "--format=csv,noheader"},
                       .time_limit = std::chrono::seconds(20)});
      return r.ok() ? std::string() : fmt::format("nvidia-smi -i {}: {}", device, r.describe());
    };
  }
  settings.name = !options.name.empty() ? options.name
                                        : fmt::format("{}-{}-{}", hostname,
                                                      options.cpu_only ? "cpu" : "gpu" + device, getpid());

  // One evaluation at a time; the sandbox is resolved once, by the first job that runs solution code.
  LocalEvaluator evaluator(
      [](const Task&) -> EvalOptions { throw std::logic_error("options come with each job"); }, {},
      host.sandbox);
  const GpuInfo no_gpu{.absent_reason = "cpu_only: the GPU stages were not requested"};
  const service::JudgeJob judge = [&](const service::JobRequest& request, const Task& task) {
    EvalOptions options_for_job = eval_options(paths, host, task, false, request.cpu_only ? no_gpu : gpu,
                                               request.stage_time_limit_s, request.stages);
    options_for_job.tools.visible_device = device;
    options_for_job.tools.profile_sections = request.profile;
    return evaluator.evaluate({request.source, request.name, find_track(request.track)}, task,
                              options_for_job);
  };
  std::atomic<bool> stop{false};
  StopSignals signals([&] {
    log_line("stopping after the job at hand");
    stop = true;
  });
  service::run_worker(redis, registry, settings, judge, stop, log_line);
  return kExitOk;
}

}  // namespace ptxbench
