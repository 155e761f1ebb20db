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

// Progress over the devices of one run, children one after another or several at once: each
// device's cell count (its plan's, until its child says how many will really run) and the cells
// finished so far over all of them.
class BenchProgress {
 public:
  // plans: every plan the run will start (a device has one plan).
  BenchProgress(Progress& progress, const std::vector<bench::BenchPlan>& plans);
  // Shows nothing: a bench child run inside another step (doctor's BLAS cost, a rerun).
  static BenchProgress& silent();
  // The device's child says how many cells will run.
  void device_planned(const std::string& device, std::size_t runnable);
  void cell_started(const std::string& device, std::size_t ordinal, const std::string& label);
  // Work inside a cell that is not a cell of its own (OpenCL GEMM tuning).
  void working(const std::string& device, const std::string& what);
  void cell_finished();
  // Erases the terminal line (before a log line, and at the end).
  void clear() { progress_.clear(); }

 private:
  void show(const std::string& device, const std::string& what);

  Progress& progress_;
  std::map<std::string, std::size_t> totals_;   // by device
  std::map<std::string, std::size_t> ordinal_;  // the device's cell in progress, from 1
  std::size_t done_ = 0;
};

struct DeviceRun {
  std::vector<nlohmann::json> records;
  bool child_died_silently = false;  // no record at all: exit 3
};

// Runs the plan in a `__child bench` process and collects its records, verified in the child.
// A child that dies marks the cell in progress and every later one failed with its fate. env:
// changes to the child's environment (a value, or nullopt to unset).
using ChildEnvChanges = std::map<std::string, std::optional<std::string>>;
DeviceRun run_device(const BenchTarget& target, const bench::BenchPlan& plan,
                     BenchProgress& progress, const ChildEnvChanges& env = {});

// The same for several devices at once (distinct physical GPUs: bench's concurrent children),
// one child each; results in the plans' order.
std::vector<DeviceRun> run_devices(const std::vector<BenchTarget>& targets,
                                   const std::vector<bench::BenchPlan>& plans,
                                   BenchProgress& progress, const ChildEnvChanges& env = {});

}  // namespace gpucheck::app
