// `gpucheck qualify --profile FILE`: probe, doctor and the benches a TOML profile needs, each
// requirement judged; exit 1 when one is unmet. The probe, the doctor checks and the bench
// children are the same code paths as `probe`, `doctor` and `bench`.
#include "app/bench_run.h"
#include "app/cli_common.h"
#include "app/doctor_facts.h"
#include "app/stress_run.h"
#include "core/document.h"
#include "core/files.h"
#include "core/install_dirs.h"
#include "core/json_keys.h"
#include "core/json_keys_infiniband.h"
#include "core/output_file.h"
#include "doctor/registry.h"
#include "doctor/system_view.h"
#include "probe/backend_probes.h"
#include "qualify/bench_plan.h"
#include "qualify/judge.h"
#include "qualify/limits.h"
#include "qualify/profile.h"
#include "qualify/profile_search.h"
#include "qualify/skus.h"
#include "report/junit.h"
#include "report/speedup.h"
#include "report/views.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>

namespace gpucheck::app {

namespace {

namespace k = keys;
namespace q = qualify;

// doctor's default --load-seconds.
constexpr double kDoctorLoadSeconds = 2;

struct QualifyOptions {
  OutputOptions out;
  LibraryOptions libraries;
  TuningOptions tuning;
  std::string profile;
  std::string junit;
  bool strict = false;
  double probe_timeout_s = 60;
  std::string sysroot = "/";  // hidden: doctor's files and sysfs PCI ids under a fixture
  std::string skus;           // hidden: a SKU table instead of the embedded configs/skus.toml
  std::vector<std::string> argv;
};

std::vector<q::Sku> custom_skus(const std::string& path) {
  if (path.empty()) return {};
  return q::parse_skus(read_input_file(path, kMaxConfigBytes, "--skus"), path);
}

bool needs(const q::Profile& p, q::Kind kind) {
  return std::any_of(p.requirements.begin(), p.requirements.end(),
                     [&](const auto& r) { return r.kind == kind; });
}

// Every doctor check on the facts just probed, as `gpucheck doctor` runs them.
nlohmann::json run_doctor_checks(const nlohmann::json& facts, const EnvMap& env,
                                 const std::string& sysroot) {
  doctor::SystemView view;
  view.root = sysroot;
  view.env = redacted_environment(env);  // its evidence quotes values
  view.facts = facts;
  view.identity = doctor::Identity::of_this_process();
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : doctor::run_checks(doctor::select_checks({}, {}), view))
    results.push_back(r.to_json());
  return results;
}

// The profile's stress requirement as `gpucheck stress` runs it: every selected device at once.
nlohmann::json run_profile_stress(const q::Profile& profile, const q::Observations& obs,
                                  const std::string& sysroot, bool quiet) {
  const auto req = std::find_if(profile.requirements.begin(), profile.requirements.end(),
                                [](const auto& r) { return r.kind == q::Kind::kStress; });
  stress::StressPlan base;
  base.duration_s = req->duration_s;
  for (const auto& t : req->tests) base.tests.push_back(*stress::test_from_string(t));
  if (!req->dtype.empty()) base.dtypes.push_back(*dtype_from_string(req->dtype));
  base.seed = profile.bench.seed;
  base.threads = profile.bench.threads;
  std::vector<stress::StressPlan> plans;
  std::vector<std::string> ids;
  for (const auto& d : q::select_devices(*req, q::list_devices(obs.backends))) {
    stress::StressPlan p = base;
    p.device = d.device;
    p.backend = d.backend;
    plans.push_back(p);
    ids.push_back(d.device);
  }
  host::KernelLogWatch watch(sysroot);
  StatusBoard board(ids, base.duration_s, ::isatty(STDERR_FILENO) != 0, !quiet);
  std::vector<StressChildReport> reports;
  if (!plans.empty()) reports = run_stress_children(plans, {}, board);
  return stress_section(base, plans, reports, watch, watch.read_new(), {}, {}, 0);
}

// The benches, one child per device as `gpucheck bench` runs them, with speedups.
nlohmann::json run_benches(const std::vector<bench::BenchPlan>& plans, bool quiet) {
  Progress progress = Progress::for_stderr("qualify", quiet);
  BenchProgress bench_progress(progress, plans);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& plan : plans) {
    DeviceRun run = run_device({plan.device, plan.backend}, plan, bench_progress);
    for (auto& r : run.records) results.push_back(std::move(r));
  }
  progress.clear();
  report::add_speedups(results);
  return results;
}

ExitCode run_qualify(const QualifyOptions& o) {
  // A bad profile, SKU table or output path is exit 2 before any work.
  q::Profile profile = q::load_profile(q::find_profile(o.profile, data_dirs()));
  profile.bench.threads = clamp_cpu_threads(profile.bench.threads, "the profile's [bench] threads");
  const std::vector<q::Sku> skus = custom_skus(o.skus);
  Output output(o.out);
  if (!o.junit.empty()) check_output_path(o.junit, "--junit");
  check_distinct_outputs({{"-o/--output", o.out.output_path}, {"--junit", o.junit}});
  apply_library_options(o.libraries);
  const bench::TuningPlan tuning = tuning_plan(o.tuning);

  const EnvMap env = current_environment();
  nlohmann::json doc = make_document("qualify", o.argv, env);
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(o.probe_timeout_s);
  const auto first_reading = std::chrono::steady_clock::now();
  nlohmann::json facts = probe::probe_sections(o.sysroot, env, limits);
  doc.update(facts);

  q::Observations obs;
  obs.backends = facts[k::kBackends];
  obs.memory = facts[k::kMemory];
  obs.infiniband = facts[k::kInfiniband];
  obs.skus = o.skus.empty() ? &q::builtin_skus() : &skus;
  obs.pci_device_id = [&](const std::string& bus) { return q::read_pci_device_id(o.sysroot, bus); };
  if (needs(profile, q::Kind::kDoctor) || needs(profile, q::Kind::kSiblings)) {
    // As `gpucheck doctor` does: the PCIe link and clocks are judged on busy GPUs, and the
    // siblings on the figures of that same run.
    add_cuda_load_readings(facts[k::kBackends], kDoctorLoadSeconds, o.out.quiet);
    add_cpu_blas_cost(facts[k::kBackends]);
    doc[k::kBackends] = facts[k::kBackends];
    obs.backends = facts[k::kBackends];
  }
  if (needs(profile, q::Kind::kDoctor)) {
    add_infiniband_counters_after(facts, o.sysroot, first_reading);
    obs.checks = run_doctor_checks(facts, env, o.sysroot);
    doc[k::kChecks] = obs.checks;
  }
  if (q::needs_bench(profile)) {
    auto plans = q::plan_benches(profile, q::list_devices(obs.backends));
    // The work between GPUs last, in one group child over every CUDA device.
    for (bool network_only : {false, true})
      if (auto group = q::plan_group_bench(profile, q::list_devices(obs.backends), network_only))
        plans.push_back(std::move(*group));
    for (auto& plan : plans) plan.tuning = tuning;
    obs.results = run_benches(plans, o.out.quiet);
    q::add_limits(obs.results,
                  {obs.backends, facts.value(std::string(k::kCpu), nlohmann::json::object()),
                   obs.skus, obs.pci_device_id});
    doc[k::kResults] = obs.results;
  }

  if (needs(profile, q::Kind::kStress)) {
    obs.stress = run_profile_stress(profile, obs, o.sysroot, o.out.quiet);
    q::add_stress_limits(obs.stress,
                         {obs.backends, facts.value(std::string(k::kCpu), nlohmann::json::object()),
                          obs.skus, obs.pci_device_id});
    doc[k::kStress] = obs.stress;
  }

  std::vector<q::Verdict> verdicts;
  for (const auto& r : profile.requirements)
    for (auto& v : q::judge(r, obs)) verdicts.push_back(std::move(v));
  if (o.strict) q::apply_strict(verdicts);

  std::size_t met = 0, unmet = 0, skip = 0;
  nlohmann::json list = nlohmann::json::array();
  // One error line a reason, naming every requirement it left unmet: a backend that is not
  // there fails each of its requirements with the same words.
  std::vector<std::pair<std::string, std::vector<std::string>>> unmet_by_reason;
  for (const auto& v : verdicts) {
    met += v.outcome == q::Outcome::kMet;
    unmet += v.outcome == q::Outcome::kUnmet;
    skip += v.outcome == q::Outcome::kSkip;
    if (v.outcome == q::Outcome::kUnmet) {
      auto same = std::find_if(unmet_by_reason.begin(), unmet_by_reason.end(),
                               [&](const auto& e) { return e.first == v.reason; });
      if (same == unmet_by_reason.end())
        same = unmet_by_reason.insert(unmet_by_reason.end(), {v.reason, {}});
      same->second.push_back(v.id + (v.device.empty() ? "" : " [" + v.device + "]"));
    }
    list.push_back(v.to_json());
  }
  report::BackendReasonsOnce once(doc.value(std::string(k::kBackends), nlohmann::json::array()));
  for (const auto& [reason, ids] : unmet_by_reason) {
    std::string names;
    for (const auto& id : ids) names += (names.empty() ? "" : ", ") + id;
    spdlog::error("unmet: {}: {}", names, once(reason));
  }
  nlohmann::json p = {{k::kPath, profile.path}, {k::kName, profile.name}};
  if (!profile.description.empty()) p[k::kDescription] = profile.description;
  doc[k::kQualify] = {{k::kProfile, p},
                      {k::kStrict, o.strict},
                      {k::kVerdict, unmet == 0 ? "met" : "unmet"},
                      {k::kSummary, {{k::kMet, met}, {k::kUnmet, unmet}, {k::kSkip, skip}}},
                      {k::kVerdicts, list}};
  output.write(doc);
  if (!o.junit.empty()) write_output_file(o.junit, report::render_junit(doc), "--junit");
  // A missing device is an unmet requirement (1), never 3.
  return unmet == 0 ? ExitCode::kOk : ExitCode::kFailed;
}

}  // namespace

Command add_qualify_command(CLI::App& root, const std::vector<std::string>& argv) {
  auto o = std::make_shared<QualifyOptions>();
  o->argv = argv;
  auto* cmd = root.add_subcommand(
      "qualify",
      "Probe, doctor and benches against a TOML profile of requirements: a CI gate "
      "with JUnit output (exit 1 when a requirement is unmet)");
  cmd->add_option("--profile", o->profile,
                  "TOML profile: a file, or the name of one shipped in configs/qualify "
                  "(cpu-only, cuda-hopper, opencl, vulkan, vulkan-gpu, ...: a name that is "
                  "neither lists them all). A device's name_regex is matched in time linear "
                  "in the name (nested quantifiers cannot hang it): ECMAScript's literals, ., "
                  "classes, \\d \\w \\s \\b, groups, |, * + ? {n,m}, ^ $; back-references and "
                  "look-around are refused with their file:line:column. Times (bench.max_time_s, "
                  "a stress duration) are at most 604800 seconds (7 days)")
      ->required()
      ->type_name("FILE|NAME");
  add_tuning_options(*cmd, o->tuning);
  cmd->add_option("--junit", o->junit,
                  "Also write JUnit XML to FILE (not the file -o names: exit 2)")
      ->check(output_file_name())
      ->type_name("FILE");
  cmd->add_flag("--strict", o->strict,
                "Count a skipped requirement (no reference, not observable) as unmet");
  add_output_options(*cmd, o->out);
  add_details_option(*cmd, o->out,
                     "Every check, every verdict's reason and the system facts (table view)");
  add_library_options(*cmd, o->libraries);
  add_probe_timeout_option(*cmd, o->probe_timeout_s);
  // Hidden test hooks: a fixture root for doctor and sysfs, and another SKU table.
  cmd->add_option("--sysroot", o->sysroot)->check(CLI::ExistingDirectory)->group("");
  cmd->add_option("--skus", o->skus)->check(CLI::ExistingFile)->group("");
  return {cmd, [o]() { return run_qualify(*o); }};
}

}  // namespace gpucheck::app
