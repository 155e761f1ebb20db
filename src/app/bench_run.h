// Running one device's bench plan in its own child: shared by `bench` and `qualify`.
#pragma once

#include "app/bench_devices.h"
#include "app/progress.h"
#include "app/run_estimate.h"
#include "bench/cell.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

// Progress over the devices of one run, children one after another or several at once: the
// unit (a round of a cell) in progress on each device, and the time left as RunEstimate
// predicts it from the units finished so far. GPUCHECK_PROGRESS_TRACE=FILE (a test hook)
// appends each event with its time as a JSON line, so an estimator can be judged on a real run.
class BenchProgress {
 public:
  // plans: every plan the run will start (a device has one plan).
  BenchProgress(Progress& progress, const std::vector<bench::BenchPlan>& plans);
  ~BenchProgress();
  BenchProgress(const BenchProgress&) = delete;
  BenchProgress& operator=(const BenchProgress&) = delete;
  // Shows nothing: a bench child run inside another step (doctor's BLAS cost, a rerun).
  static BenchProgress& silent();
  // The device's child says how many units (cells × rounds) will run, and which cells.
  void device_planned(const std::string& device, std::size_t units, const std::vector<bool>& runs);
  // The plan's cell `index` starts a round, the device's `ordinal`-th unit.
  void cell_started(const std::string& device, std::size_t index, std::size_t ordinal,
                    const std::string& label);
  // Work inside a cell that is not a cell of its own (OpenCL GEMM tuning).
  // what: the tuner's words; budget_s: its search's budget (0: none said).
  void working(const std::string& device, const std::string& what, double budget_s);
  // The device's child has ended.
  void device_ended(const std::string& device);
  // Erases the terminal line (before a log line, and at the end).
  void clear() { progress_.clear(); }

 private:
  void show(const std::string& device, const std::string& what);
  double now() const;
  void trace(nlohmann::json event);

  Progress& progress_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::map<std::string, std::size_t> totals_;   // by device
  std::map<std::string, std::size_t> ordinal_;  // the device's unit in progress, from 1
  // The ticker thread reads the estimate while the reading thread feeds it.
  std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
  std::shared_ptr<RunEstimate> estimate_;
  std::string trace_path_;
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
