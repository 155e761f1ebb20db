// Runs one cell through bench's engine on a test device and returns its records: the unit tests'
// way to see what the engine makes of a device (fakes included) without a child process.
#pragma once

#include "backends/device.h"
#include "bench/engine.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace gpucheck::fakes {

// Explicitly requested (so an unsupported record is kept), `reps` timed runs after `warmup`, one
// thread, under `tuning` (off, as a plan is, unless a test asks for more).
inline std::vector<nlohmann::json> bench_one_cell(Device& device, bench::Cell cell, int reps,
                                                  int warmup = 0,
                                                  TuningMode tuning = TuningMode::kOff) {
  bench::BenchPlan plan;
  plan.device = "cpu";
  plan.backend = "cpu";
  plan.tuning.mode = tuning;
  cell.explicit_request = true;
  plan.cells = {cell};
  plan.policy.warmup = warmup;
  plan.policy.reps = reps;
  plan.threads = 1;
  std::vector<nlohmann::json> records;
  bench::EngineCallbacks cb;
  cb.record = [&](std::size_t, const nlohmann::json& r) { records.push_back(r); };
  bench::run_plan(plan, device, cb);
  return records;
}

}  // namespace gpucheck::fakes
