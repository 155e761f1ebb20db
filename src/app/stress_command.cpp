// `gpucheck stress`: sustained load on every selected device at once, each in its own child,
// every result checked, telemetry and the kernel log watched, one verdict per device.
#include "app/bench_devices.h"
#include "app/cli_common.h"
#include "app/stress_run.h"
#include "app/stress_status.h"
#include "core/backend_descriptors.h"
#include "core/document.h"
#include "core/duration.h"
#include "core/graceful_stop.h"
#include "core/json_keys.h"
#include "core/stop_signals.h"
#include "host/cpu_info.h"
#include "host/host_info.h"
#include "host/kernel_log.h"
#include "host/memory_info.h"
#include "probe/backend_probes.h"
#include "qualify/judge.h"
#include "qualify/limits.h"
#include "stress/kill_reason.h"
#include "stress/plan.h"
#include "stress/test_units.h"
#include "stress/verdict.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <sstream>

namespace gpucheck::app {

namespace k = keys;

namespace {

struct StressOptions {
  OutputOptions out;
  LibraryOptions libraries;
  std::string devices = "all";
  std::string duration = "60s";
  std::string tests = stress::test_names(",");
  std::string dtypes;
  std::uint64_t gemm = 0;
  std::optional<double> memory_fraction;
  std::uint64_t check_every = 0;
  bool no_check = false;
  double window_s = stress::kDefaultWindowS;
  double clock_floor = 0.5;
  double hang_timeout_s = 60;
  std::uint64_t seed = 20240601;
  int threads = 0;
  std::string sysroot = "/";
  double probe_timeout_s = 60;
  std::vector<std::string> argv;
};

// A plan for every device, before anything runs: a bad value is exit 2 at once.
stress::StressPlan base_plan(const StressOptions& o) {
  stress::StressPlan p;
  std::string why;
  auto d = parse_duration_s(o.duration, &why);
  if (!d) throw UsageError("--duration: " + why);
  p.duration_s = *d;
  for (const auto& t : split_list(o.tests)) {
    auto v = stress::test_from_string(t);
    if (!v)
      throw UsageError(
          fmt::format("--tests: unknown test '{}' (valid: {})", t, stress::test_names(", ")));
    if (std::find(p.tests.begin(), p.tests.end(), *v) == p.tests.end()) p.tests.push_back(*v);
  }
  if (p.tests.empty())
    throw UsageError(fmt::format("--tests: empty list (valid: {})", stress::test_names(", ")));
  for (const auto& t : split_list(o.dtypes)) {
    auto v = dtype_from_string(t);
    if (!v)
      throw UsageError(
          fmt::format("--dtype: unknown value '{}' (valid: f32, tf32, f16, bf16, f64, fp8)", t));
    p.dtypes.push_back(*v);
  }
  if (o.memory_fraction && !(*o.memory_fraction > 0 && *o.memory_fraction <= 0.95))
    throw UsageError(fmt::format("--memory-fraction: {} is outside (0, 0.95]", *o.memory_fraction));
  if (!(o.window_s >= 1)) throw UsageError("--window: at least 1 second");
  if (!(o.clock_floor >= 0 && o.clock_floor <= 1))
    throw UsageError(fmt::format("--clock-floor: {} is outside [0, 1]", o.clock_floor));
  p.gemm_size = o.gemm;
  p.memory_fraction = o.memory_fraction;
  p.check_every = o.check_every;
  p.no_check = o.no_check;
  p.window_s = o.window_s;
  p.seed = o.seed;
  p.threads = clamp_cpu_threads(o.threads, "--threads");
  return p;
}

// A device's memory: MemTotal for the CPU, the probe's global memory size for a GPU; 0 when
// not known.
std::uint64_t memory_bytes(const stress::StressPlan& p, const nlohmann::json& backends) {
  if (backend_is_host_cpu(p.backend)) return host::read_memory_facts("/").total_bytes.value_or(0);
  for (const auto& b : backends) {
    if (!b.is_object() || b.value(std::string(k::kName), "") != p.backend ||
        !b.contains(k::kDevices) || !b[k::kDevices].is_array())
      continue;
    for (const auto& d : b[k::kDevices]) {
      if (!d.is_object() || d.value(std::string(k::kDevice), "") != p.device) continue;
      const auto props = d.value(std::string(k::kProperties), nlohmann::json::object());
      for (const char* key : {"global_memory_bytes", "cl_device_global_mem_size"})
        if (props.contains(key) && props[key].is_number_unsigned())
          return props[key].get<std::uint64_t>();
    }
  }
  return 0;
}

// A child killed by SIGKILL that gpucheck did not send (its timeouts say so themselves): most
// often the out-of-memory killer, which the failure then names instead of leaving the device
// blamed.
void explain_sigkill(StressChildReport& r, const stress::StressPlan& p, const std::string& log,
                     bool log_readable, std::uint64_t available) {
  if (!r.failure || r.failure->find("killed by signal 9 ") == std::string::npos) return;
  std::uint64_t asked = 0;
  if (backend_is_host_cpu(p.backend) && available != 0) {
    asked = static_cast<std::uint64_t>(stress::memory_fraction_for(p, true) *
                                       static_cast<double>(available));
    if (std::find(p.tests.begin(), p.tests.end(), stress::Test::kGemm) != p.tests.end()) {
      const std::uint64_t n = p.gemm_size != 0 ? p.gemm_size : stress::kHostGemmSize;
      asked += 3 * n * n * element_size(p.dtypes.empty() ? DType::kF32 : p.dtypes.front());
    }
  }
  const std::string why = stress::sigkill_explanation(log, log_readable, asked, available);
  spdlog::error("{}: {}", p.device, why);
  *r.failure += "; " + why;
}

// `all`: every GPU once, or the CPU where there is none.
std::vector<std::string> expand_all(const std::vector<std::string>& names,
                                    const nlohmann::json& backends) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (n != "all") {
      out.push_back(n);
      continue;
    }
    auto gpus = gpu_targets(backends);
    if (gpus.empty()) out.emplace_back("cpu");
    for (const auto& g : gpus) out.push_back(g.device);
  }
  return out;
}

ExitCode run_stress(const StressOptions& o) {
  const double started_s = stress::monotonic_now_s();
  Output output(o.out);
  apply_library_options(o.libraries);
  const stress::StressPlan base = base_plan(o);
  auto names = split_list(o.devices);
  if (names.empty()) throw UsageError("--device: empty list");
  // Before "all" is expanded: bench refuses "all,all" in the same words.
  refuse_repeated_device_names(names);

  EnvMap env = current_environment();
  nlohmann::json backends = nlohmann::json::array();
  if (needs_probe(names)) {
    ChildLimits limits;
    limits.timeout = std::chrono::duration<double>(o.probe_timeout_s);
    backends = probe::probe_backends(env, limits);
  }
  const DeviceResolution res = resolve_devices(expand_all(names, backends), backends);
  std::vector<stress::StressPlan> plans;
  for (const auto& t : res.targets) {
    stress::StressPlan p = base;
    p.device = t.device;
    p.backend = t.backend;
    plans.push_back(std::move(p));
  }
  stress::assign_copy_peers(plans);
  // --duration is the whole command's: the tests end so that the probe above, each child's
  // device set-up and the verdict after them fit in it, less a reserve for the last checks and
  // the document (5 %, at most 2 s).
  const double reserve = std::min(0.05 * base.duration_s, 2.0);
  for (auto& p : plans) p.deadline_s = started_s + base.duration_s - reserve;
  for (const auto& p : plans)
    if (auto why = stress::gemm_refusal(p, memory_bytes(p, backends))) throw UsageError(*why);

  // The kernel log's position before any child starts: only what they cause counts.
  host::KernelLogWatch watch(o.sysroot);
  std::vector<std::string> ids;
  for (const auto& p : plans) ids.push_back(p.device);
  StatusBoard board(ids, base.duration_s, ::isatty(STDERR_FILENO) != 0,
                    !o.out.quiet && o.out.verbosity >= 0);
  // From here a stop signal ends the run early instead of killing gpucheck: the children stop
  // at their next batch end and the document holds what they did.
  GracefulStop stop;
  std::vector<StressChildReport> reports;
  const std::uint64_t available = host::read_memory_facts("/").available_bytes.value_or(0);
  if (!plans.empty()) {
    StressRunLimits limits;
    limits.hang_timeout_s = o.hang_timeout_s;
    limits.startup_timeout_s = std::max(o.hang_timeout_s, 180.0);
    reports = run_stress_children(plans, limits, board);
  }
  const std::string new_log = watch.read_new();
  for (std::size_t i = 0; i < reports.size(); ++i)
    explain_sigkill(reports[i], plans[i], new_log, watch.readable(), available);
  stress::VerdictLimits vl;
  vl.clock_floor = o.clock_floor;
  std::vector<std::pair<std::string, std::string>> missing;
  for (std::size_t m = 0; m < res.missing.size(); ++m)
    missing.emplace_back(res.missing_names[m], res.missing[m]);
  nlohmann::json section = stress_section(base, plans, reports, watch, new_log, missing, vl,
                                          GracefulStop::stop_signal());
  const nlohmann::json cpu = host::to_json(host::read_cpu_facts("/"));
  qualify::add_stress_limits(
      section, {backends, cpu, &qualify::builtin_skus(),
                [](const std::string& bus) { return qualify::read_pci_device_id("/", bus); }});
  for (const auto& d : section[k::kDevices])
    spdlog::info("{}: {}", d[k::kDevice].get<std::string>(), d[k::kVerdict].get<std::string>());

  nlohmann::json doc = make_document("stress", o.argv, env);
  doc[k::kHost] = host::to_json(host::read_host_facts("/"));
  doc[k::kCpu] = cpu;
  doc[k::kStress] = section;
  if (!res.missing.empty()) doc[k::kErrors] = res.missing;
  output.write(doc);
  // A fault found before a stop is still a fault (1); a stopped run that found none did not pass
  // either: 128 + the signal, as shells report it.
  if (section[k::kVerdict] == "fail") return ExitCode::kFailed;
  if (const int sig = GracefulStop::stop_signal(); sig != 0)
    return static_cast<ExitCode>(stopped_exit_status(sig));
  return ExitCode::kOk;
}

}  // namespace

Command add_stress_command(CLI::App& root, const std::vector<std::string>& argv) {
  auto o = std::make_shared<StressOptions>();
  o->argv = argv;
  auto* cmd = root.add_subcommand(
      "stress",
      "Sustained load on every selected device at once (GEMM, memory test, copies), every "
      "result checked, telemetry and the kernel log watched; one verdict per device");
  add_output_options(*cmd, o->out);
  add_library_options(*cmd, o->libraries);
  cmd->add_option("--device", o->devices,
                  "Devices, comma-separated: cpu, cuda0, opencl1, cuda:<uuid>, all (every GPU "
                  "once; the CPU where there is none)")
      ->capture_default_str();
  cmd->add_option(
         "--duration", o->duration,
         "Length of the whole command, set-up included; the tests share what is left equally: " +
             duration_help())
      ->capture_default_str()
      ->type_name("DURATION");
  cmd->add_option("--tests", o->tests, stress::test_names(",") + ", run one after another")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtypes,
                  "GEMM dtypes f32,tf32,f16,bf16,f64,fp8 (e4m3 in, bf16 out; CUDA 8.9+), sharing "
                  "the GEMM time (default: bf16 on CUDA, f32 elsewhere)");
  // CLI::PositiveNumber's message would name DBL_MAX in 309 digits.
  cmd->add_option("--gemm", o->gemm,
                  "GEMM size N (N×N×N; default 8192 on GPUs; on the CPU 1024, or 512 or 256 when "
                  "its share of --duration is under 15 s or 5 s)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--memory-fraction", o->memory_fraction,
                  "Share of free memory the memory test covers and the GEMM's result buffers "
                  "fill (default 0.9 on GPUs, 0.1 of MemAvailable on the CPU)");
  cmd->add_option("--check-every", o->check_every,
                  "Check every k-th GEMM result in full (element by element and by Freivalds' "
                  "test; default: chosen so the checks cost under 1 %)");
  cmd->add_flag("--no-check", o->no_check,
                "Skip the result checks, to measure what they cost; the verdict is then FAIL");
  cmd->add_option("--window", o->window_s, "Time per throughput window: " + duration_help())
      ->transform(duration_validator())
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_option("--clock-floor", o->clock_floor,
                  "FAIL when a GEMM window's mean SM clock is below this fraction of the maximum")
      ->capture_default_str();
  cmd->add_option("--hang-timeout", o->hang_timeout_s,
                  "Time without a status line after which a device's child counts as hung: " +
                      duration_help())
      ->transform(duration_validator())
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_option("--seed", o->seed, "Seed of the inputs and patterns")->capture_default_str();
  add_threads_option(*cmd, o->threads, "CPU threads (0: all)");
  cmd->add_option("--sysroot", o->sysroot,
                  "Root of the system whose kernel log (/dev/kmsg) is watched for Xid lines")
      ->capture_default_str();
  add_probe_timeout_option(*cmd, o->probe_timeout_s);
  return {cmd, [o]() { return run_stress(*o); }};
}

}  // namespace gpucheck::app
