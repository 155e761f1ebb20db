// gpucheck's --help layout: option names in a left column, descriptions wrapped beside them to
// the terminal's width (at most 100 columns; CLI11 2.1 does not wrap), and value names as the
// help writes them: "--blas FILE", not CLI11's "FILE:FILE" or "N:NONNEGATIVE=0".
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpucheck::app {

// What goes in an option's value as the help names it ("FILE"), without the validators'
// descriptions CLI11 appends to its type name ("FILE:FILE", "N:NONNEGATIVE").
std::string value_name(const CLI::Option* opt);

class HelpFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kMaxWidth = 100;  // longer help lines are hard to read
  // width: the terminal's (app/cli_common.h's output_width), capped at kMaxWidth.
  explicit HelpFormatter(std::size_t width);
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_option_usage(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;

 private:
  std::string two_columns(const std::string& name, const std::string& description) const;
  std::size_t width_;
  std::size_t column_;
};

}  // namespace gpucheck::app
