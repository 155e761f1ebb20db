// gpucheck's entry point: parses the command line and holds the program's only catch-all.
#include "app/cli_common.h"
#include "app/cli_spec.h"
#include "app/help_format.h"
#include "app/usage_hint.h"
#include "backends/registry.h"
#include "core/errors.h"
#include "core/output_file.h"
#include "core/stop_signals.h"
#include "core/version.h"
#include "probe/backend_probes.h"
#include "report/stack_versions.h"
#include "report/text_layout.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <sstream>
#include <vector>

namespace {

constexpr const char* kExitCodes =
    "Exit codes:\n"
    "  0  ok\n"
    "  1  a check failed, a result failed or mismatched, a requirement is unmet,\n"
    "     or a stress verdict is FAIL\n"
    "  2  usage or configuration error (bad flag or value, unknown device, bad\n"
    "     profile, output file not writable)\n"
    "  3  bench only: a named device is not there, or its benchmark child died\n"
    "     before writing any record\n"
    "  128+N  stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP): its\n"
    "     children are stopped and no output is written (an existing -o FILE\n"
    "     stays as it was)\n"
    "When several apply: 2 over 3 over 1 over 0.\n"
    "stress stopped early by SIGINT/SIGTERM/SIGHUP with no device failed: 128 +\n"
    "the signal (130, 143, 129), its document written with what ran.\n"
    "doctor --quick (health check): 0 healthy, 1 unhealthy (a FAIL outranks a\n"
    "check that did not answer), 2 could not decide (no answer within --timeout).";

std::string version_text() {
  std::string backends;
  for (const auto& b : gpucheck::built_backend_names())
    backends += (backends.empty() ? "" : ",") + b;
  return fmt::format("gpucheck {} (commit {}; backends: {})", gpucheck::kVersion,
                     gpucheck::kGitCommit, backends);
}

// `--version -v`: the stack's versions as the probe children find them, one line each.
std::string stack_version_lines() {
  gpucheck::ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(60.0);
  auto backends = gpucheck::probe::probe_backends(gpucheck::current_environment(), limits);
  std::string out;
  for (const auto& v : gpucheck::report::stack_versions(backends)) {
    std::string text = v.version.empty() ? "not found: " + v.missing : v.version;
    if (!v.version.empty() && !v.path.empty()) text += " (" + v.path + ")";
    out += fmt::format("{:<16} {}\n", v.label, gpucheck::report::shorten(text, 200));
  }
  return out;
}

// "probe, bench, doctor, qualify, stress or report": the commands --help lists, read from the app
// itself so the message cannot drift from them (hidden ones, in the empty group, left out).
std::string command_list(CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); }))
    names.push_back(sub->get_name());
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// --help's text through the checked writer: a full disk or closed stdout is exit 2 with the
// reason, not a silent 0.
int print_help(CLI::App& app, const CLI::Error& e) {
  std::ostringstream out, err;
  const int rc = app.exit(e, out, err);
  gpucheck::write_stdout(out.str());
  std::cerr << err.str();
  return rc;
}

int run(int argc, char** argv) {
  using gpucheck::ExitCode;
  CLI::App app{"gpucheck: is this machine's GPU stack set up right, and how fast is it really?",
               "gpucheck"};
  app.formatter(std::make_shared<gpucheck::app::HelpFormatter>(gpucheck::app::output_width()));
  bool version = false;
  int verbose = 0;
  app.add_flag("-V,--version", version, "Print gpucheck's version and exit");
  app.add_flag("-v,--verbose", verbose,
               "With --version: also the NVIDIA driver, CUDA driver and runtime, cuBLAS, cuDNN, "
               "NVML and OpenCL loader versions found here");
  app.require_subcommand(0, 1);
  const std::vector<std::string> args(argv, argv + argc);
  std::vector<gpucheck::app::Command> commands{
      gpucheck::app::add_probe_command(app, args),  gpucheck::app::add_bench_command(app, args),
      gpucheck::app::add_doctor_command(app, args), gpucheck::app::add_qualify_command(app, args),
      gpucheck::app::add_stress_command(app, args), gpucheck::app::add_report_command(app, args),
      gpucheck::app::add_child_command(app),        gpucheck::app::add_checks_table_command(app)};
  // Set after the subcommands exist: CLI11 copies a parent's footer into each new subcommand,
  // and the table belongs under the top-level help only.
  app.footer(kExitCodes);
  // The command line as JSON, for the build's man page and completions (app/cli_spec.h).
  auto* spec = app.add_subcommand("__cli-spec", "internal: the command line as JSON")->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return print_help(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return print_help(app, e);
  } catch (const CLI::ParseError& e) {
    // CLI11 2.1's own codes are not ours: every parse error is a usage error. Its message names
    // a mistyped word last, or not at all ("A subcommand is required"): the word comes first.
    const auto unknown = gpucheck::app::unknown_word(app, {args.begin() + 1, args.end()});
    std::cerr << "gpucheck: " << unknown.value_or(e.what()) << "\n"
              << "Run 'gpucheck --help' or 'gpucheck COMMAND --help' for usage.\n";
    return static_cast<int>(ExitCode::kUsage);
  }
  if (version) {
    gpucheck::write_stdout(version_text() + "\n" + (verbose > 0 ? stack_version_lines() : ""));
    return static_cast<int>(ExitCode::kOk);
  }
  if (spec->parsed()) {
    std::cout << gpucheck::app::cli_spec(app).dump(2) << "\n";
    return static_cast<int>(ExitCode::kOk);
  }
  for (auto& c : commands)
    if (c.app->parsed()) return static_cast<int>(c.run());
  std::cerr << "gpucheck: a command is required: " << command_list(app) << "\n"
            << "Run 'gpucheck --help' for usage.\n";
  return static_cast<int>(ExitCode::kUsage);
}

}  // namespace

int main(int argc, char** argv) {
  gpucheck::reserve_standard_fds();
  gpucheck::install_stop_handlers();
  try {
    return run(argc, argv);
  } catch (const gpucheck::UsageError& e) {
    std::cerr << "gpucheck: " << e.what() << "\n";
    return static_cast<int>(gpucheck::ExitCode::kUsage);
  } catch (const std::exception& e) {
    std::cerr << "gpucheck: internal error: " << e.what() << "\n";
    return 70;  // EX_SOFTWARE: a bug in gpucheck, never a finding about the machine
  } catch (...) {
    std::cerr << "gpucheck: internal error: unknown exception\n";
    return 70;
  }
}
