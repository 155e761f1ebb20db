// `gpucheck doctor`: checks of the GPU environment, each PASS/INFO/WARN/FAIL/SKIP with the fix.
// The facts come from the same isolated probe children as `gpucheck probe` (or a saved probe
// document with the hidden --facts), so a crashing driver costs a finding, never the report.
#include "app/backend_probes.h"
#include "app/cli_common.h"
#include "app/doctor_facts.h"
#include "core/document.h"
#include "core/json_keys.h"
#include "doctor/registry.h"
#include "doctor/system_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>

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
  std::vector<std::string> argv;
};

// The probe document's facts sections: what the checks read and the report repeats.
constexpr std::string_view kFactSections[] = {keys::kHost, keys::kCpu, keys::kMemory,
                                              keys::kBackends};

nlohmann::json load_facts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--facts: cannot read '" + path + "'");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("--facts: '{}' is not JSON: {}", path, e.what()));
  }
  if (!doc.is_object() || !doc.contains(keys::kBackends))
    throw UsageError("--facts: '" + path + "' is not a gpucheck probe document (no backends)");
  return doc;
}

// Only the checks that judge readings under load are worth loading the GPUs for.
bool wants_load(const std::vector<const doctor::CheckDef*>& checks) {
  return std::any_of(checks.begin(), checks.end(), [](const doctor::CheckDef* c) {
    return c->id == "pcie_link_under_load" || c->id == "clocks_under_load";
  });
}

nlohmann::json probe_facts(const DoctorOptions& opts, const EnvMap& env, bool load) {
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(opts.probe_timeout_s);
  nlohmann::json facts = probe_sections(opts.sysroot, env, limits);
  if (load && !opts.no_load)
    add_cuda_load_readings(facts[keys::kBackends], opts.load_seconds, opts.out.quiet);
  if (!opts.no_load) add_cpu_blas_cost(facts[keys::kBackends]);
  return facts;
}

ExitCode run_doctor(const DoctorOptions& opts) {
  // Unknown ids are a usage error before any work.
  const auto checks = doctor::select_checks(opts.only, opts.skip);
  if (opts.list) {
    std::size_t width = 0;
    for (const auto& c : doctor::all_checks()) width = std::max(width, c.id.size());
    for (const auto& c : doctor::all_checks())
      std::cout << fmt::format("{:<{}}  {}\n", c.id, width, c.summary);
    return ExitCode::kOk;
  }
  Output output(opts.out);
  const EnvMap env = current_environment();
  nlohmann::json doc = make_document("doctor", opts.argv, env);

  nlohmann::json facts = nlohmann::json::object();
  if (!opts.facts_path.empty()) {
    const nlohmann::json saved = load_facts(opts.facts_path);
    for (auto key : kFactSections)
      if (saved.contains(key)) facts[key] = saved[key];
  } else {
    facts = probe_facts(opts, env, wants_load(checks));
  }
  for (auto key : kFactSections)
    if (facts.contains(key)) doc[key] = facts[key];

  doctor::SystemView view;
  view.root = opts.sysroot;
  view.env = env;
  view.facts = std::move(facts);
  view.identity = doctor::Identity::of_this_process();
  view.ci = opts.ci;
  if (opts.uid) view.identity.uid = *opts.uid;
  if (!opts.gids.empty()) view.identity.gids = opts.gids;

  nlohmann::json results = nlohmann::json::array();
  bool failed = false;
  for (const auto& r : doctor::run_checks(checks, view)) {
    failed = failed || r.status == doctor::CheckStatus::kFail ||
             (opts.fail_on == "warn" && r.status == doctor::CheckStatus::kWarn);
    results.push_back(r.to_json());
  }
  doc[keys::kChecks] = std::move(results);
  output.write(doc);
  // INFO and SKIP never change the exit code; doctor never exits 3 (a missing driver is a finding).
  return failed ? ExitCode::kFailed : ExitCode::kOk;
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
  add_output_options(*cmd, opts->out);
  add_details_option(*cmd, opts->out, "Every check's finding, fix and evidence (the table view)");
  cmd->add_flag("--list", opts->list, "Print every check id with one line, and exit");
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
  cmd->add_option("--probe-timeout", opts->probe_timeout_s,
                  "Seconds each backend's probe may take before it is killed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_flag("--ci", opts->ci,
                "Judge as a CI runner (as when CI is set): persistence mode off is WARN");
  cmd->add_flag("--no-load", opts->no_load,
                "Do not load the CUDA devices: PCIe link and clocks are then read idle");
  cmd->add_option("--load-seconds", opts->load_seconds,
                  "Seconds of copies and GEMM on each CUDA device while NVML is read")
      ->check(CLI::Range(0.2, 60.0))
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_option("--sysroot", opts->sysroot,
                  "Read files (/proc, /sys, /etc, /dev, site-packages) under this directory")
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
