// The first unknown word of a refused command line, with the nearest known one.
#include "app/usage_hint.h"

#include "app/cli_spec.h"
#include "core/closest_word.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace gpucheck::app {

namespace {

std::vector<std::string> visible_subcommands(CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* s : app.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); }))
    names.push_back(s->get_name());
  return names;
}

std::vector<std::string> option_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* o :
       app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); })) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

bool has_positionals(CLI::App& app) {
  return !app.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

}  // namespace

std::optional<std::string> unknown_word(CLI::App& root, const std::vector<std::string>& args) {
  CLI::App* app = &root;
  std::string path = "gpucheck";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return std::nullopt;
    if (word.size() > 1 && word[0] == '-') {
      // --name=value, -oFILE and -vv: the option's own name first.
      const bool long_name = word.rfind("--", 0) == 0;
      const std::size_t end = long_name ? word.find('=') : std::min<std::size_t>(2, word.size());
      const std::string name = word.substr(0, end);
      CLI::Option* opt = app->get_option_no_throw(name);
      if (opt == nullptr)
        return fmt::format("unknown option {} of '{}'{}", name, path,
                           did_you_mean(name, option_names(*app)));
      if (opt->get_items_expected_min() == 0) continue;  // a flag (-vv too)
      std::string value;
      if (end < word.size())
        value = word.substr(long_name ? end + 1 : end);
      else if (i + 1 < args.size())
        value = args[++i];
      else
        return std::nullopt;  // CLI11 says the value is missing
      const auto allowed = allowed_values(*opt);
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), value) == allowed.end())
        return fmt::format("{}: '{}' is not one of {}{}", name, value, fmt::join(allowed, ", "),
                           did_you_mean(value, allowed));
      continue;
    }
    const auto named = app->get_subcommands([&](CLI::App* s) { return s->check_name(word); });
    if (!named.empty()) {
      app = named.front();
      path += " " + word;
      continue;
    }
    const auto subs = visible_subcommands(*app);
    if (has_positionals(*app)) continue;
    if (!subs.empty())
      return fmt::format("unknown command '{}' for '{}'{}", word, path, did_you_mean(word, subs));
    return fmt::format("'{}' was not expected: '{}' takes no arguments", word, path);
  }
  return std::nullopt;
}

}  // namespace gpucheck::app
