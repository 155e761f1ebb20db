// The command line as JSON (app/cli_spec.h), with the values completion offers for each option.
#include "app/cli_spec.h"

#include "app/help_format.h"
#include "bench/config.h"
#include "bench/ops/op_unit.h"
#include "core/workload.h"
#include "doctor/check.h"
#include "doctor/registry.h"
#include "stress/test_units.h"

#include <sstream>
#include <string>

namespace gpucheck::app {

namespace {

bool shown(const CLI::Option* opt) {
  return !opt->get_group().empty();
}

template <typename Enum>
std::vector<std::string> enum_names(Enum last) {
  std::vector<std::string> out;
  for (int i = 0; i <= static_cast<int>(last); ++i)
    out.emplace_back(to_string(static_cast<Enum>(i)));
  return out;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct Values {
  std::vector<std::string> names;
  bool list = false;  // a comma-separated list: each item completes on its own
};

// Options whose values are checked in code rather than by a CLI11 set: what they accept, from
// the same lists the code checks against.
Values listed_values(const std::string& name) {
  if (name == "--ops") {
    // net is no Op (it runs between ranks, on no device: app/bench_net.h), but --ops takes it.
    Values v{{}, true};
    for (const auto& unit : bench::op_units()) v.names.emplace_back(to_string(unit.op));
    v.names.push_back("net");
    return v;
  }
  if (name == "--dtype") return {enum_names(DType::kFp8), true};
  if (name == "--layout") return {enum_names(Layout::kNhwc), true};
  if (name == "--sweep") {
    Values v;
    for (const auto& unit : bench::op_units())
      if (unit.sweep) v.names.emplace_back(to_string(unit.op));
    return v;
  }
  if (name == "--size") {
    Values v;
    for (const auto& preset : bench::default_presets()) v.names.push_back(preset.first);
    return v;
  }
  if (name == "--tests") return {words(stress::test_names(" ")), true};
  if (name == "--framework") return {{"torch", "jax", "cupy", "tensorflow", "all"}, true};
  if (name == "--only" || name == "--skip" || name == "--ack") {
    Values v{{}, true};
    for (const auto& c : doctor::all_checks()) v.names.emplace_back(c.id);
    return v;
  }
  return {};
}

nlohmann::json option_entry(const CLI::Option* opt) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  nlohmann::json entry = {{"names", names}};
  // A flag's type name is empty (its type size is not 0 in CLI11 2.1).
  if (const std::string type = value_name(opt); !type.empty()) entry["value"] = type;
  const std::string name = opt->get_lnames().empty() ? "" : "--" + opt->get_lnames().front();
  Values values{allowed_values(*opt), false};
  if (values.names.empty()) values = listed_values(name);
  if (!values.names.empty()) entry["values"] = values.names;
  if (values.list) entry["list"] = true;
  // Device names depend on the machine: the completion asks `gpucheck probe -L` when it runs.
  if (name == "--device") {
    entry["values_from"] = "devices";
    entry["list"] = true;  // bench and stress take several; one item completes the same
  }
  return entry;
}

void add_command(const CLI::App& app, const std::string& path, nlohmann::json& commands) {
  nlohmann::json options = nlohmann::json::array(), positionals = nlohmann::json::array();
  for (const CLI::Option* opt : app.get_options(shown)) {
    if (opt->nonpositional())
      options.push_back(option_entry(opt));
    else
      positionals.push_back({{"name", opt->get_name(true)}, {"value", value_name(opt)}});
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

std::vector<std::string> allowed_values(const CLI::Option& opt) {
  // CLI11 2.1 reaches an option's validators only through a non-const accessor, which throws
  // past the last one.
  auto& option = const_cast<CLI::Option&>(opt);
  for (int i = 0;; ++i) {
    const CLI::Validator* v = nullptr;
    try {
      v = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return {};
    }
    // CLI::IsMember describes itself as "{small,medium,large}".
    const std::string d = v->get_description();
    if (d.size() < 2 || d.front() != '{' || d.back() != '}') continue;
    std::vector<std::string> values;
    std::stringstream items(d.substr(1, d.size() - 2));
    for (std::string item; std::getline(items, item, ',');) values.push_back(item);
    return values;
  }
}

nlohmann::json cli_spec(const CLI::App& app) {
  nlohmann::json commands = nlohmann::json::array();
  add_command(app, "", commands);
  return {{"commands", commands}};
}

}  // namespace gpucheck::app
