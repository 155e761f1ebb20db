// A usage error in words: when CLI11 refuses a command line, the first word it did not know
// (a command, a flag, a value of a fixed set), named first, with the nearest known one.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

// Walks args (argv without the program) through the app's commands and options as CLI11 reads
// them and describes the first word that is no command, option or allowed value there:
// "unknown command 'benc' (did you mean 'bench'?)", "unknown option --sise of 'gpucheck bench'
// (did you mean '--size'?)", "--size: 'smal' is not one of small, medium, large (did you mean
// 'small'?)". nullopt when every word is known (CLI11's own message then says what is wrong).
std::optional<std::string> unknown_word(CLI::App& root, const std::vector<std::string>& args);

}  // namespace gpucheck::app
