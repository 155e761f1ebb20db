// `gpucheck doctor`: checks of the GPU environment, each PASS/INFO/WARN/FAIL/SKIP with the fix.
// The facts come from the same isolated probe children as `gpucheck probe` (or a saved probe
// document with the hidden --facts), so a crashing driver costs a finding, never the report.
#include "app/cli_common.h"
#include "app/doctor_facts.h"
#include "core/document.h"
#include "core/files.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/json_keys_infiniband.h"
#include "core/json_keys_inject.h"
#include "core/output_file.h"
#include "core/stopwatch.h"
#include "doctor/framework_query.h"
#include "doctor/health.h"
#include "doctor/health_state.h"
#include "doctor/inject.h"
#include "doctor/registry.h"
#include "doctor/suggest.h"
#include "doctor/system_view.h"
#include "doctor/under_load.h"
#include "probe/backend_probes.h"
#include "report/nfd_features.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace gpucheck::app {

namespace {

struct DoctorOptions {
  OutputOptions out;
  bool list = false;
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::string fail_on = "fail";
  double probe_timeout_s = 60;
  std::string sysroot = "/";
  std::string facts_path;  // hidden: a saved `probe --json` document instead of probing
  std::optional<std::uint32_t> uid;
  std::vector<std::uint32_t> gids;
  bool ci = false;
  bool no_load = false;
  double load_seconds = 2;
  bool no_frameworks = false;
  double framework_timeout_s = doctor::kDefaultFrameworkBudgetS;
  // Health use: doctor --quick as a node health check
  bool quick = false;
  std::optional<double> timeout_s;
  std::string state_path;
  bool no_state = false;
  std::vector<std::string> ack;
  bool ok_line = false;
  std::optional<double> nfd_expiry_s;  // --nfd-expiry; kNfdExpiryS when not given
  std::string suggest;                 // --suggest FRAMEWORK
  std::vector<std::string> inject;     // --inject FAULTS
  std::vector<std::string> argv;
};

// Three times the interval of a typical health-check loop (5 minutes): one missed run keeps the
// labels, a checker dead for three drops them.
constexpr double kNfdExpiryS = 15 * 60;

// The probe document's facts sections: what the checks read and the report repeats.
constexpr std::string_view kFactSections[] = {keys::kHost,     keys::kCpu,
                                              keys::kMemory,   keys::kInfiniband,
                                              keys::kBackends, doctor::kFrameworkQueriesKey};

nlohmann::json load_facts(const std::string& path) {
  nlohmann::json doc =
      parse_json_input(read_input_file(path, kMaxDocumentBytes, "--facts"), "--facts: " + path);
  if (!doc.is_object() || !doc.contains(keys::kBackends))
    throw UsageError("--facts: '" + path + "' is not a gpucheck probe document (no backends)");
  return doc;
}

bool wants_frameworks(const std::vector<const doctor::CheckDef*>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const doctor::CheckDef* c) { return c->id == "framework_query"; });
}

bool under_sysroot(const std::string& sysroot) {
  std::error_code ec;
  return !std::filesystem::equivalent(sysroot, "/", ec) || ec;
}

// Each framework found, asked in a child of its environment's interpreter (framework_query
// judges the answers). Never under --sysroot: those interpreters belong to another system.
nlohmann::json ask_frameworks(const DoctorOptions& opts, const EnvMap& env, double budget_s) {
  if (opts.quick) return doctor::framework_queries_not_run("--quick asks no framework");
  if (opts.no_frameworks)
    return doctor::framework_queries_not_run("--no-frameworks: the frameworks were not asked");
  if (under_sysroot(opts.sysroot))
    return doctor::framework_queries_not_run(
        "under --sysroot the interpreters are another system's: the frameworks were not asked");
  doctor::SystemView view;
  view.env = env;
  // Stricter only: --uid 0 judges as root even when not run as root, never the reverse.
  const bool as_root = ::geteuid() == 0 || opts.uid == 0u;
  const auto plan = doctor::plan_framework_queries(view, as_root);
  if (plan.empty()) return doctor::run_framework_queries(plan, env, budget_s);
  spdlog::info("doctor: asking {} framework{} in their own interpreters (at most {:g} s)",
               plan.size(), plan.size() == 1 ? "" : "s", budget_s);
  Stopwatch asking;
  nlohmann::json answers = doctor::run_framework_queries(plan, env, budget_s);
  spdlog::info("doctor: framework children: {:.2f} s", asking.seconds());
  return answers;
}

nlohmann::json probe_facts(const DoctorOptions& opts, const EnvMap& env,
                           const std::vector<const doctor::CheckDef*>& checks,
                           std::optional<double> frameworks_budget_s, double probe_timeout_s) {
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(probe_timeout_s);
  const auto first_reading = std::chrono::steady_clock::now();
  Stopwatch step;
  // Under --sysroot the backends are not probed: their children would describe this host's
  // drivers, judged against another system's files (this host's Mesa ICDs against a sysroot
  // without /etc/OpenCL/vendors). Their checks SKIP unless --facts gives that system's probe.
  nlohmann::json facts =
      probe::probe_sections(opts.sysroot, env, limits, !under_sysroot(opts.sysroot));
  spdlog::info("doctor: probe: {:.2f} s", step.lap());
  // The framework children run while the GPUs are loaded: the two overlap, and a framework found
  // nowhere costs nothing.
  std::future<nlohmann::json> asked;
  if (frameworks_budget_s)
    asked = std::async(std::launch::async, ask_frameworks, std::cref(opts), std::cref(env),
                       *frameworks_budget_s);
  std::vector<std::string_view> ids;
  for (const auto* c : checks) ids.emplace_back(c->id);
  if (const auto steps = doctor::load_steps(ids, opts.quick, opts.no_load); steps.devices) {
    add_cuda_load_readings(facts[keys::kBackends], opts.load_seconds, opts.out.quiet,
                           steps.peer_copies);
    spdlog::info("doctor: load step: {:.2f} s", step.lap());
  }
  // --quick judges the port counters against its state file, without waiting for growth.
  if (!opts.quick) add_infiniband_counters_after(facts, opts.sysroot, first_reading);
  if (asked.valid()) {
    facts[doctor::kFrameworkQueriesKey] = asked.get();
    spdlog::info("doctor: waited {:.2f} s more for the framework children", step.lap());
  }
  // --quick runs no benchmark: the BLAS kernel's cost is two CPU GEMM children (timed after the
  // framework children, which would share the CPU).
  if (!opts.no_load && !opts.quick) add_cpu_blas_cost(facts[keys::kBackends]);
  return facts;
}

// What the worker has done so far; the waiting thread reads it when the deadline passes.
struct DoctorWork {
  std::mutex mutex;
  std::condition_variable changed;
  bool facts_ready = false;
  nlohmann::json facts;
  std::vector<doctor::CheckResult> results;
  bool done = false;
  std::exception_ptr error;
};

// Probes (or takes the saved facts) and runs the checks, publishing each answer as it comes.
void run_checks_into(DoctorWork& p, const DoctorOptions& opts, const EnvMap& env,
                     const std::vector<const doctor::CheckDef*>& checks,
                     std::optional<nlohmann::json> saved_facts, const nlohmann::json& saved_state,
                     double probe_timeout_s, double frameworks_budget) {
  try {
    nlohmann::json facts = nlohmann::json::object();
    std::optional<double> frameworks_budget_s;
    if (wants_frameworks(checks)) frameworks_budget_s = frameworks_budget;
    if (saved_facts) {
      for (auto key : kFactSections)
        if (saved_facts->contains(key)) facts[key] = (*saved_facts)[key];
      if (frameworks_budget_s)
        facts[doctor::kFrameworkQueriesKey] = ask_frameworks(opts, env, *frameworks_budget_s);
    } else {
      facts = probe_facts(opts, env, checks, frameworks_budget_s, probe_timeout_s);
    }
    doctor::SystemView view;
    view.root = opts.sysroot;
    view.env = redacted_environment(env);  // its evidence quotes values
    view.facts = facts;
    view.identity = doctor::Identity::of_this_process();
    view.ci = opts.ci;
    view.saved_state = saved_state;
    if (opts.uid) view.identity.uid = *opts.uid;
    if (!opts.gids.empty()) view.identity.gids = opts.gids;
    {
      std::lock_guard lock(p.mutex);
      p.facts = std::move(facts);
      p.facts_ready = true;
    }
    // Test hook (GPUCHECK_TEST_HANG=ID): check ID blocks as a read of a wedged driver's /proc
    // file does, so tests reach --timeout (the file readers refuse a FIFO at once).
    const char* hang = std::getenv("GPUCHECK_TEST_HANG");
    Stopwatch judging;
    for (const auto* c : checks) {
      if (hang != nullptr && c->id == hang)
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      auto r = doctor::run_check(*c, view);
      std::lock_guard lock(p.mutex);
      p.results.push_back(std::move(r));
    }
    spdlog::info("doctor: {} check{} judged: {:.2f} s", checks.size(),
                 checks.size() == 1 ? "" : "s", judging.seconds());
  } catch (...) {
    std::lock_guard lock(p.mutex);
    p.error = std::current_exception();
  }
  std::lock_guard lock(p.mutex);
  p.done = true;
  p.changed.notify_all();
}

// The state file this run reads and writes: --state, else with --quick the default one.
std::optional<std::filesystem::path> state_path(const DoctorOptions& opts, const EnvMap& env) {
  if (opts.no_state) return std::nullopt;
  if (!opts.state_path.empty()) return std::filesystem::path(opts.state_path);
  if (!opts.quick && opts.ack.empty()) return std::nullopt;
  return doctor::default_state_path(env);
}

ExitCode acknowledge(const DoctorOptions& opts, const EnvMap& env) {
  for (const auto& id : opts.ack)
    if (doctor::find_check(id) == nullptr)
      throw UsageError(doctor::unknown_check_id("--ack", id) + " (gpucheck doctor --list)");
  const auto path = state_path(opts, env);
  if (!path) throw UsageError("--ack: no state file (give --state FILE)");
  auto state = doctor::HealthState::load(*path);
  // --ack sets up no logger: its lines go to stderr as the acknowledgements do.
  if (!state.damage().empty())
    std::cerr << fmt::format(
        "gpucheck: {}; what could be read of it is kept, and the next run rebuilds the rest\n",
        state.damage());
  const std::string now = utc_timestamp();
  for (const auto& id : opts.ack) {
    const std::size_t n = state.acknowledge(id, now);
    std::cerr << fmt::format("gpucheck: {}: {} event{} acknowledged in {}\n", id, n,
                             n == 1 ? "" : "s", path->string());
  }
  state.save(*path);
  return ExitCode::kOk;
}

// --suggest: the facts (probed, or --facts), then one install line per Python environment.
ExitCode suggest(const DoctorOptions& opts, const EnvMap& env) {
  if (chosen_format(opts.out) != "table")
    throw UsageError("--suggest prints text: leave out --json and --format");
  doctor::SystemView view;
  view.root = opts.sysroot;
  view.env = redacted_environment(env);
  if (!opts.facts_path.empty()) {
    const nlohmann::json saved = load_facts(opts.facts_path);
    for (auto key : kFactSections)
      if (saved.contains(key)) view.facts[key] = saved[key];
  } else {
    ChildLimits limits;
    limits.timeout = std::chrono::duration<double>(opts.probe_timeout_s);
    view.facts = probe::probe_sections(opts.sysroot, env, limits, !under_sysroot(opts.sysroot));
  }
  const doctor::Suggestion s = doctor::suggest_install(view, opts.suggest);
  Output output(opts.out);
  output.write_text(s.to_text(opts.suggest));
  return s.any_found() ? ExitCode::kOk : ExitCode::kFailed;
}

ExitCode run_doctor(const DoctorOptions& opts) {
  // Unknown ids are a usage error before any work.
  std::vector<std::string> only = opts.only;
  if (opts.quick && only.empty())
    for (auto id : doctor::quick_check_ids()) only.emplace_back(id);
  const auto checks = doctor::select_checks(only, opts.skip);
  if (opts.list) {
    std::size_t width = 0;
    for (const auto* c : checks) width = std::max(width, c->id.size());
    std::string list;
    for (const auto* c : checks) list += fmt::format("{:<{}}  {}\n", c->id, width, c->summary);
    write_stdout(list);
    return ExitCode::kOk;
  }
  const auto injected = doctor::parse_injected_faults(opts.inject);
  if (!injected.empty() && (!opts.ack.empty() || !opts.suggest.empty()))
    throw UsageError("--inject makes a run's findings: leave out --ack and --suggest");
  const EnvMap env = current_environment();
  if (!opts.ack.empty()) return acknowledge(opts, env);
  if (!opts.suggest.empty()) return suggest(opts, env);
  const std::string format = chosen_format(opts.out);
  const bool oneline = format == "oneline", nfd = format == "nfd";
  if (opts.nfd_expiry_s && !nfd)
    throw UsageError("--nfd-expiry sets the expiry of --format nfd's labels: add --format nfd");
  OutputOptions out_opts = opts.out;
  // The destination and logging; the line or the feature file is ours.
  if (oneline || nfd) out_opts.format = "table";
  Output output(out_opts);
  nlohmann::json doc = make_document("doctor", opts.argv, env);
  const Stopwatch run_time;

  std::optional<nlohmann::json> saved_facts;
  if (!opts.facts_path.empty()) saved_facts = load_facts(opts.facts_path);
  const auto state_file = state_path(opts, env);
  if (state_file)
    check_distinct_outputs(
        {{"-o/--output", opts.out.output_path}, {"--state", state_file->string()}});
  if (opts.quick && !opts.no_state && !state_file)
    spdlog::warn(
        "no writable place for a state file ($XDG_STATE_HOME, /var/lib/gpucheck, "
        "~/.local/state): counters are judged without deltas (give --state FILE)");
  std::optional<doctor::HealthState> state;
  if (state_file) state = doctor::HealthState::load(*state_file);
  if (state && !state->damage().empty())
    spdlog::warn("{}; this run judges without what was lost and rebuilds it", state->damage());
  // --timeout bounds the whole run; --quick has one unless told otherwise. A hung OpenCL probe
  // is re-run per ICD to name the culprit, so the probe can take two of its timeouts plus the
  // spawning (about a second on a loaded two-core machine): each stage gets under a third of
  // the budget, so the children are killed and reaped before the deadline and none outlives
  // gpucheck.
  const double timeout_s = opts.timeout_s.value_or(opts.quick ? 30.0 : 0.0);
  double probe_timeout_s = opts.probe_timeout_s;
  if (timeout_s > 0)
    probe_timeout_s = std::min(probe_timeout_s, (timeout_s - std::min(1.0, timeout_s / 4.0)) / 3.0);
  // The whole run's --timeout bounds the framework children as it bounds a probe.
  const double frameworks_budget_s = timeout_s > 0
                                         ? std::min(opts.framework_timeout_s, probe_timeout_s)
                                         : opts.framework_timeout_s;

  const auto start = std::chrono::steady_clock::now();
  auto progress = std::make_shared<DoctorWork>();
  std::thread worker(run_checks_into, std::ref(*progress), std::cref(opts), std::cref(env),
                     std::cref(checks), saved_facts,
                     state ? state->saved_checks() : nlohmann::json::object(), probe_timeout_s,
                     frameworks_budget_s);
  std::unique_lock lock(progress->mutex);
  bool in_time = true;
  if (timeout_s > 0)
    in_time = progress->changed.wait_until(
        lock,
        start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(timeout_s)),
        [&] { return progress->done; });
  else
    progress->changed.wait(lock, [&] { return progress->done; });
  if (in_time) {
    lock.unlock();
    worker.join();
    lock.lock();
    if (progress->error) std::rethrow_exception(progress->error);
  }
  // Past the deadline the worker may be stuck in a read that no signal ends (a wedged driver's
  // /proc file): its answers so far are taken under the lock and the rest named as unanswered.
  std::vector<doctor::CheckResult> results = progress->results;
  std::vector<std::string> not_run;
  for (std::size_t i = results.size(); i < checks.size(); ++i) not_run.emplace_back(checks[i]->id);
  if (progress->facts_ready)
    for (auto key : kFactSections)
      if (progress->facts.contains(key)) doc[key] = progress->facts[key];
  lock.unlock();

  std::vector<doctor::StateEvent> raised;
  bool state_saved = false;
  if (state) {
    raised = state->apply(results, utc_timestamp());
    // The checks still decide: a state that cannot be written costs the next run its deltas
    // (it judges these counters again), never this run's verdict.
    try {
      state->save(*state_file);
      state_saved = true;
    } catch (const UsageError& e) {
      spdlog::warn("the state was not saved ({}); the next run judges these counters again",
                   e.what());
    }
  }
  // Injected faults come after the state file judged the real results: they never raise an
  // event there, so a test of the alerting leaves nothing to acknowledge.
  doctor::apply_injected(results, not_run, injected);
  if (!injected.empty()) {
    nlohmann::json words = nlohmann::json::array();
    std::string named;
    for (const auto& f : injected) {
      words.push_back(f.word);
      named += (named.empty() ? "" : ",") + f.word;
    }
    doc[keys::kInjected] = std::move(words);
    spdlog::warn("doctor: injected faults ({}): these findings were not read from this machine",
                 named);
  }
  nlohmann::json results_json = nlohmann::json::array();
  for (const auto& r : results) results_json.push_back(r.to_json());
  doc[keys::kChecks] = std::move(results_json);

  // Health: any FAIL is unhealthy (1) even where other checks did not answer; else a check that
  // did not answer in time (or, with --quick, whose probe child timed out) is unknown (2).
  auto verdict = doctor::judge_health(results, not_run, opts.fail_on == "warn");
  if (!opts.quick && verdict.health == doctor::Health::kUnknown && not_run.empty()) {
    verdict.health = doctor::Health::kHealthy;
    verdict.unanswered.clear();
  }
  const std::string line = doctor::oneline(verdict, results.size(), timeout_s);
  if (opts.quick || state || timeout_s > 0) {
    nlohmann::json health{{keys::kVerdict, doctor::to_string(verdict.health)},
                          {keys::kExitCode, static_cast<int>(health_exit_code(verdict.health))},
                          {keys::kQuick, opts.quick},
                          {keys::kFailing, verdict.failing},
                          {keys::kUnanswered, verdict.unanswered},
                          {keys::kLine, line}};
    if (timeout_s > 0) health[keys::kTimeoutS] = timeout_s;
    if (state) {
      health[keys::kStateFile] = state_file->string();
      health[keys::kStateSaved] = state_saved;
      if (!state->damage().empty()) health[keys::kStateDamage] = state->damage();
      nlohmann::json now = nlohmann::json::array(), open = nlohmann::json::array();
      for (const auto& e : raised) now.push_back({{keys::kCheck, e.check}, {keys::kTime, e.time}});
      for (const auto& e : state->unacknowledged()) {
        open.push_back({{keys::kCheck, e.check}, {keys::kTime, e.time}});
        if (e.count > 1) open.back()[keys::kEventCount] = e.count;
      }
      health[keys::kEventsRaised] = std::move(now);
      health[keys::kUnacknowledged] = std::move(open);
    }
    doc[keys::kHealth] = std::move(health);
  }
  doc[keys::kProvenance][keys::kDurationS] = run_time.seconds();
  if (oneline) {
    // Silent when healthy (node-problem-detector's contract), yet an -o file is still replaced:
    // an old FAIL line left in it would read as this run's.
    const bool print = verdict.health != doctor::Health::kHealthy || opts.ok_line;
    output.write_text(print ? line + "\n" : "", line);
  } else if (nfd) {
    const auto expiry = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(opts.nfd_expiry_s.value_or(kNfdExpiryS)));
    output.write_text(report::render_nfd_features(doc, expiry), line);
  } else {
    output.write(doc);
  }
  const ExitCode code = health_exit_code(verdict.health);
  if (!in_time) {
    // The stuck worker cannot be joined, and exit() would run static destructors under it.
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(static_cast<int>(code));
  }
  // INFO and SKIP never change the exit code; doctor never exits 3 (a missing driver is a finding).
  return code;
}

}  // namespace

Command add_doctor_command(CLI::App& root, const std::vector<std::string>& argv) {
  auto opts = std::make_shared<DoctorOptions>();
  opts->argv = argv;
  auto* cmd = root.add_subcommand(
      "doctor",
      "Checks of the GPU environment (OpenCL loader and ICDs, CPU, containers and WSL, "
      "device permissions, environment, Python frameworks, the NVIDIA driver, CUDA libraries "
      "and NVML readings under load), each with the fix");
  add_output_options(*cmd, opts->out, {"oneline", "nfd"});
  add_details_option(*cmd, opts->out, "Every check's finding, fix and evidence (the table view)");
  cmd->add_flag("--list", opts->list, "Print every check id with one line, and exit");
  cmd->add_option("--suggest", opts->suggest,
                  "Print the pip install line that gives FRAMEWORK on this machine's GPUs, for "
                  "each Python environment found (configs/wheels.toml), and exit: 0 when one "
                  "exists, 1 when none does (the reason is printed)")
      ->check(CLI::IsMember(doctor::suggestable_frameworks()))
      ->type_name("FRAMEWORK");
  cmd->add_option("--only", opts->only, "Run only these checks (comma-separated ids)")
      ->delimiter(',')
      ->type_name("IDS");
  cmd->add_option("--skip", opts->skip, "Do not run these checks (comma-separated ids)")
      ->delimiter(',')
      ->type_name("IDS");
  cmd->add_option("--fail-on", opts->fail_on,
                  "Exit 1 when a check FAILs (fail), or WARNs or FAILs (warn)")
      ->check(CLI::IsMember({"fail", "warn"}))
      ->capture_default_str()
      ->type_name("LEVEL");
  add_probe_timeout_option(*cmd, opts->probe_timeout_s);
  cmd->add_flag("--ci", opts->ci,
                "Judge as a CI runner (as when CI is set): persistence mode off is WARN");
  cmd->add_flag("--no-load", opts->no_load,
                "Do not load the CUDA devices: PCIe link and clocks are then read idle");
  cmd->add_flag("--no-frameworks", opts->no_frameworks,
                "Do not ask the Python frameworks found (torch, JAX, CuPy, TensorFlow, Keras) "
                "themselves; their files are still read");
  {
    const DurationLimits limits{kMaxProbeTimeoutS, false};
    cmd->add_option("--framework-timeout", opts->framework_timeout_s,
                    "Time all framework children together may take (each imports its framework, "
                    "lists its GPUs and runs a small matmul, in its own interpreter, beside the "
                    "load run); one still running then is killed and reported: " +
                        duration_help(limits))
        ->transform(duration_validator(limits))
        ->capture_default_str()
        ->type_name("SECONDS");
  }
  cmd->add_option("--load-seconds", opts->load_seconds,
                  "Seconds of copies and GEMM on each CUDA device while NVML is read")
      ->check(CLI::Range(0.2, 60.0))
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_flag("--quick", opts->quick,
                "Health-check mode: only the checks that read (no GPU load, no benchmark); exit 0 "
                "healthy, 1 unhealthy (any FAIL), 2 could not decide (a check gave no answer "
                "within --timeout); counters judged against the state file");
  cmd->add_option("--timeout", opts->timeout_s,
                  "Seconds the whole run may take (default 30 with --quick, none otherwise); "
                  "checks that did not answer by then are named and the exit code is 2 (1 if a "
                  "check FAILed); " +
                      duration_help())
      ->transform(duration_validator())
      ->type_name("SECONDS");
  cmd->add_option("--state", opts->state_path,
                  "State file: Xid and other counters are judged as deltas against it, and an "
                  "event stays until acknowledged (default with --quick: "
                  "$XDG_STATE_HOME/gpucheck/state.json, else /var/lib/gpucheck/state.json when "
                  "writable, else ~/.local/state/gpucheck/state.json)")
      ->type_name("FILE");
  cmd->add_flag("--no-state", opts->no_state, "Read and write no state file");
  cmd->add_option("--ack", opts->ack,
                  "Acknowledge the state file's events of these checks (comma-separated ids), "
                  "so they no longer keep the node unhealthy, and exit")
      ->delimiter(',')
      ->type_name("IDS");
  cmd->add_flag("--ok-line", opts->ok_line,
                "With --format oneline: print \"OK <n> checks\" when healthy too (else "
                "nothing)");
  {
    // At most a day: labels that outlive their checker by more say nothing about the node.
    const DurationLimits limits{24 * 3600.0, false};
    cmd->add_option("--nfd-expiry", opts->nfd_expiry_s,
                    "With --format nfd (node-feature-discovery's features.d file: "
                    "gpucheck.health and gpucheck.check.ID labels, best with -o): how long NFD "
                    "keeps the labels if no later run rewrites the file (default 15m, three "
                    "5-minute intervals); " +
                        duration_help(limits))
        ->transform(duration_validator(limits))
        ->type_name("DURATION");
  }
  cmd->add_option("--inject", opts->inject,
                  "Make these faults appear as if read from this machine (comma-separated: " +
                      doctor::injectable_words() +
                      "), with the codes and actions real ones get, to test drain, taint and "
                      "alert wiring on a healthy node; every output says injected, and the state "
                      "file keeps none of them")
      ->delimiter(',')
      ->type_name("FAULTS");
  cmd->add_option("--sysroot", opts->sysroot,
                  "Read files (/proc, /sys, /etc, /dev, site-packages) under this directory; the "
                  "backends are then not probed (they would be this host's): their checks SKIP "
                  "unless that system's saved probe is given")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str()
      ->type_name("DIR");
  // Hidden test hooks: a saved probe document instead of probing, and the identity that
  // permission checks judge (root passes every access(), so tests need another one).
  cmd->add_option("--facts", opts->facts_path, "Saved `gpucheck probe --json` output")
      ->check(CLI::ExistingFile)
      ->group("");
  cmd->add_option("--uid", opts->uid, "User id the permission checks judge")->group("");
  cmd->add_option("--gids", opts->gids, "Group ids the permission checks judge")
      ->delimiter(',')
      ->group("");
  return {cmd, [opts]() { return run_doctor(*opts); }};
}

}  // namespace gpucheck::app
