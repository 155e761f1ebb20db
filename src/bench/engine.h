// The bench engine: runs a plan's cells on one device and turns each into result records.
// Each op's unit (bench/ops/op_unit.h) makes its inputs and runs and verifies it; the engine
// checks memory before allocating, poisons outputs, times, and assembles the records; the device
// only supplies primitives (backends/device.h).
#pragma once

#include "backends/device.h"
#include "bench/cell.h"
#include "bench/inputs.h"
#include "bench/ops/op_unit.h"
#include "bench/verify.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

namespace gpucheck::bench {

// Test hook (GPUCHECK_TEST_PLANT=wrong|nan): corrupts one output element after the device
// computed it, so the tests can see verification turn a record into a mismatch end to end.
enum class PlantedError { kWrongValue, kNaN };
std::optional<PlantedError> planted_error_from_env(const char* value);
// Corrupts the middle element of out as the hook says.
void plant_error(HostBuffer& out, PlantedError kind);

// Test hook (GPUCHECK_TEST_SLOWDOWN=F, F >= 1): every timed repetition reports F times its
// time, so the tests plant a slowdown of known size (report compare must catch 3x and 25 %).
std::optional<double> planted_slowdown_from_env(const char* value);

struct EngineCallbacks {
  // Before the first cell: how many cell starts will come (a cell per round; those a device
  // cannot run and nobody asked for by name are dropped without a record), so progress counts
  // only real work.
  // Before the first cell: the units (cell rounds) that will start, and which of the plan's
  // cells will (a default the device cannot run is dropped without a record).
  std::function<void(std::size_t units, const std::vector<bool>& runs)> planned;
  // Before a cell runs a round (0-based, of `rounds`), and before its records are emitted.
  // index: the cell's place in the plan; ordinal: 1-based among the cell starts.
  std::function<void(std::size_t index, std::size_t ordinal, const Cell& cell, int round,
                     int rounds)>
      cell_started;
  // Each finished record, with the index of its cell in the plan.
  std::function<void(std::size_t index, const nlohmann::json& record)> record;
  // GEMM tuning: what it is doing (for the progress line) and what it says.
  std::function<void(const std::string& what, double budget_s)> tuning_progress;
  std::function<void(TuningLog level, const std::string& message)> tuning_log;
};

// What the plan does not say: test hooks and where tuned parameters are kept.
struct EngineOptions {
  std::optional<PlantedError> plant;        // GPUCHECK_TEST_PLANT
  double slowdown = 1;                      // GPUCHECK_TEST_SLOWDOWN
  bool plant_bad_tuning_candidate = false;  // GPUCHECK_TEST_PLANT_TUNE=wrong
  std::string forced_gemm_parameters;       // GPUCHECK_TEST_GEMM_PARAMS (JSON)
  std::string tuning_cache_dir;             // empty: tuned parameters are not kept
};

// Runs every cell in policy.rounds rounds: each round runs every cell once (shuffled, the last
// round in plan order), so a cell's rounds are spread over the whole run and its record carries
// the spread between them (time_s.round_medians). A cell's records are emitted, in plan order,
// after its last round; a cell's failure becomes a "failed" record and the next cell runs.
// Before a dtype's first GEMM or conv cell, the device's GEMM is tuned as plan.tuning says.
void run_plan(const BenchPlan& plan, Device& device, const EngineCallbacks& callbacks,
              const EngineOptions& options = {});

// Bytes a cell needs (its unit's footprint; bench/ops/op_unit.h).
Footprint footprint(const Cell& cell, bool host_device);

}  // namespace gpucheck::bench
