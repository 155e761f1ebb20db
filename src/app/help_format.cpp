// Help text wrapped to 100 columns.
#include "app/help_format.h"

#include "report/text_layout.h"

namespace gpucheck::app {

namespace {

constexpr std::size_t kColumn = 34;

// "  name      description..." with the description wrapped in its column; a name too long for
// the column puts the description on the lines below it.
std::string two_columns(const std::string& name, const std::string& description) {
  std::string out = "  " + name;
  if (description.empty()) return out + "\n";
  const auto lines = report::wrap(description, HelpFormatter::kWidth - kColumn);
  if (out.size() >= kColumn) {
    out += "\n";
    out += std::string(kColumn, ' ');
  } else {
    out += std::string(kColumn - out.size(), ' ');
  }
  for (std::size_t i = 0; i < lines.size(); ++i)
    out += (i ? std::string(kColumn, ' ') : std::string()) + lines[i] + "\n";
  return out;
}

}  // namespace

HelpFormatter::HelpFormatter() {
  column_width(kColumn);
}

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  return two_columns(make_option_name(opt, is_positional) + make_option_opts(opt),
                     make_option_desc(opt));
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  return two_columns(sub->get_display_name(true), sub->get_description());
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  std::string desc = app->get_description();
  if (desc.empty()) return {};
  std::string out;
  for (const auto& l : report::wrap(desc, kWidth)) out += l + "\n";
  return out + "\n";
}

}  // namespace gpucheck::app
