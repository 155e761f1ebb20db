// The hidden "__child" subcommand: what gpucheck runs in its isolated children.
#include "app/backend_probes.h"
#include "app/cli_common.h"
#include "app/cpu_blas_selection.h"
#include "backends/registry.h"
#include "bench/engine.h"
#include "bench/group_engine.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace gpucheck::app {

namespace {

// Opens the plan's device and streams one JSON line per event to the reserved stdout:
// {"event":"cell",...} before each cell, {"event":"record",...} after each record.
int run_bench_child(const std::string& plan_text) {
  int result_fd = reserve_stdout_for_result();
  auto plan = bench::plan_from_json(nlohmann::json::parse(plan_text));
  EnvMap env = current_environment();
  auto backend = make_backend(plan.backend, env);
  if (!backend) throw UsageError(fmt::format("__child bench: no backend '{}'", plan.backend));
  auto emit = [&](const nlohmann::json& line) {
    write_all(result_fd,
              line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  };
  bench::EngineCallbacks cb;
  std::size_t cell = 0;
  cb.planned = [&](std::size_t runnable) { emit({{"event", "plan"}, {"cells", runnable}}); };
  cb.cell_started = [&](std::size_t i, std::size_t ordinal, const bench::Cell& c) {
    cell = i;
    emit({{"event", "cell"}, {"index", i}, {"ordinal", ordinal}, {"label", bench::describe(c)}});
  };
  cb.record = [&](const nlohmann::json& r) {
    // A kernel gpucheck selected that computes wrong results: the library's own choice instead.
    if (plan.backend == "cpu" && selected_blas_kernel_failed(r))
      emit({{"event", "record"}, {"record", rerun_with_library_kernel(plan, cell, r)}});
    else
      emit({{"event", "record"}, {"record", r}});
  };
  cb.tuning_progress = [&](const std::string& what) { emit({{"event", "tune"}, {"label", what}}); };
  cb.tuning_log = [&](TuningLog level, const std::string& message) {
    emit({{"event", "log"},
          {"level", level == TuningLog::kWarn ? "warn" : "info"},
          {"message", message}});
  };
  bench::EngineOptions engine;
  engine.plant = bench::planted_error_from_env(std::getenv("GPUCHECK_TEST_PLANT"));
  if (!plan.group.empty()) {
    // Several devices in this one process: peer copies and all-reduce (issue 17).
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

}  // namespace

Command add_child_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("__child", "internal: isolated worker")->group("");
  auto* probe = cmd->add_subcommand("probe", "probe one backend");
  auto backend = std::make_shared<std::string>();
  probe->add_option("--backend", *backend)->required();
  auto* bench = cmd->add_subcommand("bench", "benchmark one device");
  auto plan = std::make_shared<std::string>();
  bench->add_option("--plan", *plan)->required();
  auto* counters = cmd->add_subcommand("counters", "read a backend's growing counters");
  auto counters_backend = std::make_shared<std::string>();
  counters->add_option("--backend", *counters_backend)->required();
  cmd->require_subcommand(1);
  return {cmd, [probe, bench, counters, backend, plan, counters_backend]() {
            configure_logging(0, false);
            if (probe->parsed())
              return static_cast<ExitCode>(run_probe_child(*backend, current_environment()));
            if (bench->parsed()) return static_cast<ExitCode>(run_bench_child(*plan));
            if (counters->parsed())
              return static_cast<ExitCode>(run_counters_child(*counters_backend));
            return ExitCode::kUsage;
          }};
}

}  // namespace gpucheck::app
