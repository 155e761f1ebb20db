// gpucheck's --help layout: option names in a left column, descriptions wrapped beside them so
// that no help line is longer than 100 columns (CLI11 2.1 does not wrap).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpucheck::app {

class HelpFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kWidth = 100;
  HelpFormatter();
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
};

}  // namespace gpucheck::app
