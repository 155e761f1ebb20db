// The hidden "__child" subcommand: what gpucheck runs in its isolated children.
#include "app/backend_probes.h"
#include "app/cli_common.h"
#include "app/cpu_blas_selection.h"
#include "backends/registry.h"
#include "bench/engine.h"

#include <fmt/format.h>

#include <cstdlib>

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
  DeviceOptions options;
  options.threads = plan.threads;
  if (plan.backend == "cpu") learn_library_blas_kernel(env, options);
  auto device = backend->open_device(plan.device, options);
  if (!device)
    throw UsageError(fmt::format("no device '{}' in the {} backend", plan.device, plan.backend));
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
  bench::run_plan(plan, *device, cb,
                  bench::planted_error_from_env(std::getenv("GPUCHECK_TEST_PLANT")));
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
  cmd->require_subcommand(1);
  return {cmd, [probe, bench, backend, plan]() {
            configure_logging(0, false);
            if (probe->parsed())
              return static_cast<ExitCode>(run_probe_child(*backend, current_environment()));
            if (bench->parsed()) return static_cast<ExitCode>(run_bench_child(*plan));
            return ExitCode::kUsage;
          }};
}

}  // namespace gpucheck::app
