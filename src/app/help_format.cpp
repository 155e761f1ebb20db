// Help text wrapped to the terminal's width, with value names free of CLI11's type tokens.
#include "app/help_format.h"

#include "report/text_layout.h"

#include <algorithm>

namespace gpucheck::app {

std::string value_name(const CLI::Option* opt) {
  // CLI11 joins the type name and each validator's description with colons.
  const std::string type = opt->get_type_name();
  return type.substr(0, type.find(':'));
}

HelpFormatter::HelpFormatter(std::size_t width)
    : width_(std::min(width, kMaxWidth)), column_(std::min<std::size_t>(34, width_ * 2 / 5)) {
  column_width(column_);
}

// "  name      description..." with the description wrapped in its column; a name too long for
// the column puts the description on the lines below it.
std::string HelpFormatter::two_columns(const std::string& name,
                                       const std::string& description) const {
  std::string out = "  " + name;
  if (description.empty()) return out + "\n";
  const auto lines = report::wrap(description, width_ - column_);
  if (out.size() >= column_) {
    out += "\n";
    out += std::string(column_, ' ');
  } else {
    out += std::string(column_ - out.size(), ' ');
  }
  for (std::size_t i = 0; i < lines.size(); ++i)
    out += (i ? std::string(column_, ' ') : std::string()) + lines[i] + "\n";
  return out;
}

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  return two_columns(make_option_name(opt, is_positional) + make_option_opts(opt),
                     make_option_desc(opt));
}

// The value's name alone; a default and "required" go to the description, in words. A
// positional's name already says what goes there ("BASE... NEW").
std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (!opt->nonpositional() || opt->get_type_size() == 0 || opt->get_items_expected_min() == 0)
    return {};
  const std::string name = value_name(opt);
  if (name.empty()) return {};
  const bool many = opt->get_expected_max() == CLI::detail::expected_max_vector_size;
  return " " + name + (many && name.find("...") == std::string::npos ? " ..." : "");
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  std::string desc = opt->get_description();
  const std::string fallback = opt->get_default_str();
  if (!fallback.empty() && opt->get_items_expected_min() != 0 &&
      desc.find("default") == std::string::npos)
    desc += " (default " + fallback + ")";
  if (opt->get_required() && opt->nonpositional()) desc += " (required)";
  return desc;
}

// A positional in the usage line: its name, "..." when it repeats and the name does not say so.
std::string HelpFormatter::make_option_usage(const CLI::Option* opt) const {
  std::string name = make_option_name(opt, true);
  if (opt->get_expected_max() >= CLI::detail::expected_max_vector_size &&
      name.find("...") == std::string::npos)
    name += "...";
  return opt->get_required() ? name : "[" + name + "]";
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  return two_columns(sub->get_display_name(true), sub->get_description());
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  std::string desc = app->get_description();
  if (desc.empty()) return {};
  std::string out;
  for (const auto& l : report::wrap(desc, width_)) out += l + "\n";
  return out + "\n";
}

}  // namespace gpucheck::app
