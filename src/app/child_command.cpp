// The hidden "__child" subcommand: what gpucheck runs in its isolated children.
#include "app/bench_ranks.h"
#include "app/cli_common.h"
#include "app/cpu_blas_selection.h"
#include "backends/registry.h"
#include "bench/engine.h"
#include "bench/group_engine.h"
#include "core/child_process.h"
#include "core/files.h"
#include "core/graceful_stop.h"
#include "core/json_input.h"
#include "core/rendezvous.h"
#include "probe/backend_probes.h"
#include "stress/events.h"
#include "stress/faults.h"
#include "stress/runner.h"

#include <fmt/format.h>

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <string_view>

namespace gpucheck::app {

namespace {

// The plan: from stdin for "-" (the parent passes it there: a plan of 2,000 sizes is beyond
// what argv may hold), else the JSON text itself.
std::string plan_text_of(const std::string& arg) {
  if (arg != "-") return arg;
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("read(stdin)", __FILE__, __LINE__);
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxDocumentBytes) throw UsageError("__child bench: the plan is too large");
  }
  return text;
}

// The device a stress child works on, and the backend that opened it (which opens its peers
// too); a backend or device that is not there is a usage error naming it (the parent reports
// the child's last stderr line).
struct ChildDevice {
  std::shared_ptr<Backend> backend;
  std::unique_ptr<Device> device;
};
ChildDevice open_child_device(const char* child, const std::string& backend_name,
                              const std::string& device_id, int threads) {
  const EnvMap env = current_environment();
  std::shared_ptr<Backend> backend = make_backend(backend_name, env);
  if (!backend) throw UsageError(fmt::format("__child {}: no backend '{}'", child, backend_name));
  DeviceOptions options;
  options.threads = threads;
  if (backend_name == "cpu") learn_library_blas_kernel(env, options);
  auto device = backend->open_device(device_id, options);
  if (!device)
    throw UsageError(fmt::format("no device '{}' in the {} backend", device_id, backend_name));
  return {std::move(backend), std::move(device)};
}

// Writes one JSON event a line to the child's result fd.
std::function<void(const nlohmann::json&)> line_writer(int fd) {
  return [fd](const nlohmann::json& line) {
    write_all(fd, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  };
}

// Opens the plan's device and streams one JSON line per event to the reserved stdout:
// {"event":"cell",...} before each cell's round, {"event":"record",...} after each record.
int run_bench_child(const std::string& plan_arg) {
  const std::string plan_text = plan_text_of(plan_arg);
  int result_fd = reserve_stdout_for_result();
  auto plan = bench::plan_from_json(parse_json_input(plan_text, "__child bench: the plan"));
  EnvMap env = current_environment();
  auto backend = make_backend(plan.backend, env);
  if (!backend) throw UsageError(fmt::format("__child bench: no backend '{}'", plan.backend));
  auto emit = line_writer(result_fd);
  bench::EngineCallbacks cb;
  cb.planned = [&](std::size_t units, const std::vector<bool>& runs) {
    nlohmann::json run = nlohmann::json::array();
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i]) run.push_back(i);
    emit({{"event", "plan"}, {"cells", units}, {"runs", run}});
  };
  cb.cell_started = [&](std::size_t i, std::size_t ordinal, const bench::Cell& c, int round,
                        int rounds) {
    emit({{"event", "cell"},
          {"index", i},
          {"ordinal", ordinal},
          {"round", round},
          {"rounds", rounds},
          {"label", bench::describe(c)}});
  };
  cb.record = [&](std::size_t i, const nlohmann::json& r) {
    // A kernel gpucheck selected that computes wrong results: the library's own choice instead.
    if (plan.backend == "cpu" && selected_blas_kernel_failed(r))
      emit({{"event", "record"}, {"index", i}, {"record", rerun_with_library_kernel(plan, i, r)}});
    else
      emit({{"event", "record"}, {"index", i}, {"record", r}});
  };
  cb.tuning_progress = [&](const std::string& what, double budget_s) {
    emit({{"event", "tune"}, {"label", what}, {"budget_s", budget_s}});
  };
  cb.tuning_log = [&](TuningLog level, const std::string& message) {
    emit({{"event", "log"},
          {"level", level == TuningLog::kWarn ? "warn" : "info"},
          {"message", message}});
  };
  bench::EngineOptions engine;
  engine.plant = bench::planted_error_from_env(std::getenv("GPUCHECK_TEST_PLANT"));
  engine.slowdown =
      bench::planted_slowdown_from_env(std::getenv("GPUCHECK_TEST_SLOWDOWN")).value_or(1);
  if (!plan.group.empty()) {
    // Several devices in this one process: peer copies and all-reduce.
    auto group = backend->open_group(plan.group);
    if (!group)
      throw UsageError(fmt::format("the {} backend runs no work between devices", plan.backend));
    bench::run_group_plan(plan, *group, cb, engine.plant);
    return 0;
  }
  const char* plant_tune = std::getenv("GPUCHECK_TEST_PLANT_TUNE");
  engine.plant_bad_tuning_candidate =
      plant_tune != nullptr && std::string_view(plant_tune) == "wrong";
  if (auto dir = user_cache_dir(env)) engine.tuning_cache_dir = dir->string();
  if (const char* forced = std::getenv("GPUCHECK_TEST_GEMM_PARAMS"))
    engine.forced_gemm_parameters = forced;
  DeviceOptions options;
  options.threads = plan.threads;
  if (plan.backend == "cpu") learn_library_blas_kernel(env, options);
  auto device = backend->open_device(plan.device, options);
  if (!device)
    throw UsageError(fmt::format("no device '{}' in the {} backend", plan.device, plan.backend));
  bench::run_plan(plan, *device, cb, engine);
  return 0;
}

// Writes the backend's counters (Backend::read_counters) as one JSON object to the reserved stdout.
int run_counters_child(const std::string& name) {
  int result_fd = reserve_stdout_for_result();
  auto backend = make_backend(name, current_environment());
  if (!backend) throw UsageError(fmt::format("__child counters: no backend '{}'", name));
  write_all(result_fd, backend->read_counters().dump(-1, ' ', false,
                                                     nlohmann::json::error_handler_t::replace));
  return 0;
}

// A stress child: opens its device and streams stress/events.h lines to the reserved stdout. A
// device that does not open ends the child with the reason on stderr, which the parent reports.
int run_stress_child(const std::string& plan_text) {
  // SIGTERM from the parent (or the terminal's SIGINT) ends the tests early, not the child: the
  // records of what ran still reach the parent.
  GracefulStop stop;
  int result_fd = reserve_stdout_for_result();
  auto plan = stress::plan_from_json(parse_json_input(plan_text, "__child stress: the plan"));
  const char* fault_spec = std::getenv(stress::kFaultEnv);
  auto faults = stress::faults_for(fault_spec != nullptr ? fault_spec : "", plan.device);
  ChildDevice opened = open_child_device("stress", plan.backend, plan.device, plan.threads);
  stress::PeerOpener open_peers = [backend = opened.backend](const std::vector<std::string>& ids) {
    return backend->open_group(ids);
  };
  stress::run_stress(plan, *opened.device, std::move(faults), line_writer(result_fd), open_peers);
  return 0;
}

// The rendezvous of bench's multi-process all-reduce with a stand-in for NCCL's id, so the
// exchange between processes (its timeouts, stale files, refused peers) is exercised without a
// GPU: rank 0 answers with every identity, each rank prints the answer (and rank 0 the
// identities) as one JSON object.
int run_rendezvous_child(const RankOptions& options, const std::string& identity) {
  const auto setup = resolve_ranks(options, current_environment());
  if (!setup) throw UsageError("__child rendezvous: give --rendezvous");
  const RendezvousResult met =
      rendezvous(rendezvous_request(*setup, identity),
                 [](const std::vector<std::string>& ids) { return nlohmann::json(ids).dump(); });
  if (setup->rank == 0) retire_rendezvous(setup->place);
  write_all(STDOUT_FILENO,
            nlohmann::json{{"answer", met.answer}, {"identities", met.identities}}.dump() + "\n");
  return 0;
}

}  // namespace

Command add_child_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("__child", "internal: isolated worker")->group("");
  auto* probe = cmd->add_subcommand("probe", "probe one backend");
  auto backend = std::make_shared<std::string>();
  probe->add_option("--backend", *backend)->required();
  auto* bench = cmd->add_subcommand("bench", "benchmark one device");
  auto plan = std::make_shared<std::string>();
  bench->add_option("--plan", *plan)->required();
  auto* stress = cmd->add_subcommand("stress", "stress one device");
  auto stress_plan = std::make_shared<std::string>();
  stress->add_option("--plan", *stress_plan)->required();
  auto* counters = cmd->add_subcommand("counters", "read a backend's growing counters");
  auto counters_backend = std::make_shared<std::string>();
  counters->add_option("--backend", *counters_backend)->required();
  auto* meet = cmd->add_subcommand("rendezvous", "meet other ranks (a stand-in id)");
  auto ranks = std::make_shared<RankOptions>();
  auto identity = std::make_shared<std::string>("{}");
  meet->add_option("--rank", ranks->rank);
  meet->add_option("--world-size", ranks->world_size);
  meet->add_option("--rendezvous", ranks->rendezvous);
  meet->add_option("--rendezvous-timeout", ranks->rendezvous_timeout_s)
      ->transform(duration_validator());
  meet->add_option("--identity", *identity);
  cmd->require_subcommand(1);
  return {cmd, [probe, bench, stress, counters, meet, backend, plan, stress_plan, counters_backend,
                ranks, identity]() {
            // A parent killed beyond its handlers (SIGKILL) takes its children with it.
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            configure_logging(0, false);
            if (probe->parsed())
              return static_cast<ExitCode>(probe::run_probe_child(*backend, current_environment()));
            if (bench->parsed()) return static_cast<ExitCode>(run_bench_child(*plan));
            if (stress->parsed()) return static_cast<ExitCode>(run_stress_child(*stress_plan));
            if (counters->parsed())
              return static_cast<ExitCode>(run_counters_child(*counters_backend));
            if (meet->parsed())
              return static_cast<ExitCode>(run_rendezvous_child(*ranks, *identity));
            return ExitCode::kUsage;
          }};
}

}  // namespace gpucheck::app
