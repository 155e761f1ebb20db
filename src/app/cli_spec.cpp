#include "app/cli_spec.h"

#include <string>

namespace gpucheck::app {

namespace {

bool shown(const CLI::Option* opt) {
  return !opt->get_group().empty();
}

nlohmann::json option_entry(const CLI::Option* opt) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  nlohmann::json entry = {{"names", names}};
  // A flag's type name is empty (its type size is not 0 in CLI11 2.1).
  if (const std::string type = opt->get_type_name(); !type.empty()) entry["value"] = type;
  return entry;
}

void add_command(const CLI::App& app, const std::string& path, nlohmann::json& commands) {
  nlohmann::json options = nlohmann::json::array(), positionals = nlohmann::json::array();
  for (const CLI::Option* opt : app.get_options(shown)) {
    if (opt->nonpositional())
      options.push_back(option_entry(opt));
    else
      positionals.push_back({{"name", opt->get_name(true)}, {"value", opt->get_type_name()}});
  }
  const auto subs = app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
  nlohmann::json names = nlohmann::json::array();
  for (const CLI::App* s : subs) names.push_back(s->get_name());
  commands.push_back({{"path", path},
                      {"description", app.get_description()},
                      {"subcommands", names},
                      {"options", options},
                      {"positionals", positionals}});
  for (const CLI::App* s : subs)
    add_command(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), commands);
}

}  // namespace

nlohmann::json cli_spec(const CLI::App& app) {
  nlohmann::json commands = nlohmann::json::array();
  add_command(app, "", commands);
  return {{"commands", commands}};
}

}  // namespace gpucheck::app
