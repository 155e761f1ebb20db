// The hidden "__child" subcommand: what gpucheck runs in its isolated children.
#include "app/backend_probes.h"
#include "app/cli_common.h"

namespace gpucheck::app {

Command add_child_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("__child", "internal: isolated worker")->group("");
  auto* probe = cmd->add_subcommand("probe", "probe one backend");
  auto backend = std::make_shared<std::string>();
  probe->add_option("--backend", *backend)->required();
  cmd->require_subcommand(1);
  return {cmd, [probe, backend]() {
            configure_logging(0, false);
            if (probe->parsed())
              return static_cast<ExitCode>(run_probe_child(*backend, current_environment()));
            return ExitCode::kUsage;
          }};
}

}  // namespace gpucheck::app
