// Running one device's bench plan in its own child: shared by `bench` and `qualify`.
#pragma once

#include "app/bench_devices.h"
#include "app/progress.h"
#include "bench/cell.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

// Progress over the devices of one run, the plans run in order: each device's cell count (its
// plan's, until its child says how many will really run) and the cells finished so far.
class BenchProgress {
 public:
  BenchProgress(Progress& progress, const std::vector<bench::BenchPlan>& plans);
  // Shows nothing: a bench child run inside another step (doctor's BLAS cost, a rerun).
  static BenchProgress& silent();
  void next_device();                         // the next plan's child starts
  void device_planned(std::size_t runnable);  // its child says how many cells will run
  void cell_started(const std::string& device, std::size_t ordinal, const std::string& label);
  void cell_finished();

 private:
  Progress& progress_;
  std::vector<std::size_t> totals_;
  std::size_t device_ = 0, done_ = 0;
  bool started_ = false;
};

struct DeviceRun {
  std::vector<nlohmann::json> records;
  bool child_died_silently = false;  // no record at all: exit 3
};

// Runs the plan in a `__child bench` process and collects its records, verified in the child.
// A child that dies marks the cell in progress and every later one failed with its fate. env:
// changes to the child's environment (a value, or nullopt to unset).
DeviceRun run_device(const BenchTarget& target, const bench::BenchPlan& plan,
                     BenchProgress& progress,
                     const std::map<std::string, std::optional<std::string>>& env = {});

}  // namespace gpucheck::app
