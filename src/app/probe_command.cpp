// `gpucheck probe`: host, CPU, memory and every backend's platforms and devices.
#include "app/cli_common.h"
#include "core/document.h"
#include "probe/backend_probes.h"

namespace gpucheck::app {

namespace {

struct ProbeOptions {
  OutputOptions out;
  LibraryOptions libraries;
  double probe_timeout_s = 60;
  std::string sysroot = "/";
  std::vector<std::string> argv;
};

ExitCode run_probe(const ProbeOptions& opts) {
  Output output(opts.out);
  apply_library_options(opts.libraries);
  EnvMap env = current_environment();
  nlohmann::json doc = make_document("probe", opts.argv, env);
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(opts.probe_timeout_s);
  doc.update(probe::probe_sections(opts.sysroot, env, limits));
  output.write(doc);
  // A missing or broken driver is a finding, never an exit code.
  return ExitCode::kOk;
}

}  // namespace

Command add_probe_command(CLI::App& root, const std::vector<std::string>& argv) {
  auto opts = std::make_shared<ProbeOptions>();
  opts->argv = argv;
  auto* cmd = root.add_subcommand(
      "probe",
      "Host, CPU, memory and every backend's platforms and devices (like clinfo, "
      "deviceQuery and nvidia-smi -q)");
  add_output_options(*cmd, opts->out);
  add_probe_view_options(*cmd, opts->out);
  add_library_options(*cmd, opts->libraries);
  add_probe_timeout_option(*cmd, opts->probe_timeout_s);
  cmd->add_option("--sysroot", opts->sysroot,
                  "Read /proc, /sys and /etc under this directory (for fixtures)")
      ->check(CLI::ExistingDirectory)
      ->type_name("DIR")
      ->capture_default_str();
  return {cmd, [opts]() { return run_probe(*opts); }};
}

}  // namespace gpucheck::app
