// The command line as data (the hidden `gpucheck __cli-spec`): every subcommand path --help
// shows, with its options. The build generates the man page and the shell completions from it,
// so they cannot drift from the code.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::app {

// {"commands": [{"path": "", "description": ..., "subcommands": ["probe", ...],
//   "options": [{"names": ["-o", "--output"], "value": "FILE"},
//               {"names": ["--ops"], "value": "OPS", "values": ["exp", ...], "list": true},
//               {"names": ["--device"], "value": "DEVICES", "values_from": "devices"}, ...],
//   "positionals": [{"name": "FILES", "value": "TEXT"}]}, {"path": "report show", ...}]}
// in --help's order; an option's "value" is its value's name, absent for a flag; "values" what
// it accepts where that is a fixed set ("list": comma-separated items of it); "values_from":
// "devices" where the machine decides. Hidden subcommands and options (CLI11's empty group) are
// left out, as --help leaves them out.
nlohmann::json cli_spec(const CLI::App& app);

// The values an option checked by CLI::IsMember accepts (read from the validator's description,
// "{small,medium,large}"); empty for any other option.
std::vector<std::string> allowed_values(const CLI::Option& opt);

}  // namespace gpucheck::app
