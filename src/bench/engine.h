// The bench engine: runs a plan's cells on one device and turns each into result records.
// It makes the inputs, poisons outputs, times, verifies and checks memory before allocating;
// the device only supplies primitives (backends/device.h).
#pragma once

#include "backends/device.h"
#include "bench/cell.h"
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

struct EngineCallbacks {
  std::function<void(std::size_t index, const Cell& cell)> cell_started;
  std::function<void(const nlohmann::json& record)> record;
};

// Runs every cell; a cell's failure becomes a "failed" record and the next cell runs.
void run_plan(const BenchPlan& plan, Device& device, const EngineCallbacks& callbacks,
              std::optional<PlantedError> plant = std::nullopt);

// A record's "verification" object (stress records use it too).
nlohmann::json verification_json(const Verification& v);

// Bytes a cell needs: on the device (all buffers together and the largest one) and in host
// memory. Overflow-checked: std::overflow_error for sizes beyond 64 bits.
struct Footprint {
  std::uint64_t device_total = 0;
  std::uint64_t device_largest = 0;
  std::uint64_t host_total = 0;
};
Footprint footprint(const Cell& cell, bool host_device);

}  // namespace gpucheck::bench
