// Running one device's bench plan in its own child: shared by `bench` and `qualify`.
#pragma once

#include "app/bench_devices.h"
#include "bench/cell.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

// Progress on stderr, only for a person watching a terminal.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  void show(const std::string& device, std::size_t index, std::size_t total,
            const std::string& what);
  void clear();

 private:
  bool enabled_;
};

struct DeviceRun {
  std::vector<nlohmann::json> records;
  bool child_died_silently = false;  // no record at all: exit 3
};

// Runs the plan in a `__child bench` process and collects its records, verified in the child.
// A child that dies marks the cell in progress and every later one failed with its fate. env:
// changes to the child's environment (a value, or nullopt to unset).
using ChildEnvChanges = std::map<std::string, std::optional<std::string>>;
DeviceRun run_device(const BenchTarget& target, const bench::BenchPlan& plan, Progress& progress,
                     const ChildEnvChanges& env = {});

// The same for several devices at once (distinct physical GPUs: bench's concurrent children),
// one child each; results in the plans' order.
std::vector<DeviceRun> run_devices(const std::vector<BenchTarget>& targets,
                                   const std::vector<bench::BenchPlan>& plans, Progress& progress,
                                   const ChildEnvChanges& env = {});

}  // namespace gpucheck::app
