// The command line as data (the hidden `gpucheck __cli-spec`): every subcommand path --help
// shows, with its options. The build generates the man page and the shell completions from it,
// so they cannot drift from the code.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace gpucheck::app {

// {"commands": [{"path": "", "description": ..., "subcommands": ["probe", ...],
//   "options": [{"names": ["-o", "--output"], "value": "FILE"}, ...],
//   "positionals": [{"name": "FILES", "value": "TEXT"}]}, {"path": "report show", ...}]}
// in --help's order; an option's "value" is its value's type name, absent for a flag. Hidden
// subcommands and options (CLI11's empty group) are left out, as --help leaves them out.
nlohmann::json cli_spec(const CLI::App& app);

}  // namespace gpucheck::app
