// bench --framework: which frameworks, in which interpreters, on which of the bench's devices,
// and how their records read beside gpucheck's own (bench/framework_run.h runs them).
#pragma once

#include "app/bench_devices.h"
#include "app/progress.h"
#include "bench/cell.h"
#include "bench/reps.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

// One framework in one interpreter.
struct FrameworkChoice {
  std::string framework;
  std::string python;  // absolute path
  std::string origin;  // "--python", or the environment doctor found it in
  // Named by the user (not via `all`): not being able to run it is an error, not a note.
  bool named = false;
};

// --framework LIST (names or "all") with --python PATH (empty: every Python environment doctor
// finds, the first that has the framework installed). Throws UsageError for an unknown name, an
// empty list or a --python that is no executable file. A named framework found in no
// environment goes to *missing (one message each).
std::vector<FrameworkChoice> choose_frameworks(const std::string& list, const std::string& python,
                                               const EnvMap& env,
                                               std::vector<std::string>* missing);

struct FrameworkBenchOptions {
  bench::RepPolicy policy;
  std::uint64_t seed = 0;
  int threads = 0;
  double timeout_s = 120;  // --framework-timeout
};

struct FrameworkBenchResult {
  std::vector<nlohmann::json> records;
  std::vector<std::string> errors;  // a named framework that cannot run: exit 3
  std::vector<std::string> notes;   // one found by `all` that cannot run here
};

// Runs each framework on each target it can have (cpu, cuda devices), the cells of that
// target's plan, one child after another (no framework runs beside another or beside gpucheck).
FrameworkBenchResult run_framework_benches(const std::vector<FrameworkChoice>& frameworks,
                                           const std::vector<bench::BenchPlan>& plans,
                                           const nlohmann::json& own_results,
                                           const FrameworkBenchOptions& options,
                                           Progress& progress);

// Adds vs_gpucheck to each ok framework record whose workload gpucheck's own kernel ran on the
// same device with the same transfers: {ratio: gpucheck's median time / the framework's, impl:
// gpucheck's}. Above 1 the framework is faster.
void add_framework_ratios(nlohmann::json& results);

}  // namespace gpucheck::app
