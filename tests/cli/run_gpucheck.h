// Runs the built gpucheck binary with arguments and environment changes, capturing its output.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::testing {

struct RunResult {
  int exit_code = -1;  // -signal when killed by a signal
  std::string out;
  std::string err;
};

// The gpucheck under test: $GPUCHECK_TEST_BINARY when set, else the build tree's.
std::string gpucheck_binary();

// env: value to set, nullopt to unset; everything else is inherited.
RunResult run_gpucheck(const std::vector<std::string>& args,
                       const std::map<std::string, std::optional<std::string>>& env = {});

// Runs any program the same way (readelf, python3, clinfo).
RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                      const std::map<std::string, std::optional<std::string>>& env = {});

// True when the program is on PATH.
bool have_program(const std::string& program);

// Writes text to a new file in a per-test temporary directory (creating the directories its
// name holds) and returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);

// A valid bench document with no records, written as write_temp_file does: what `report show`
// renders fastest, for tests of outputs.
std::string write_small_document(const std::string& name = "doc.json");

// gpucheck started in the background with `marker` (NAME=VALUE) added to its environment, so
// the test can find it and its children; stdout to the file `out` (inherited when empty), stderr
// to /dev/null. -1 when it could not start.
pid_t spawn_gpucheck(std::vector<std::string> args, const std::string& marker,
                     const std::string& out = "");

}  // namespace gpucheck::testing
