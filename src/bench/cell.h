// One benchmark cell (op × dtype × shape on one device) and the plan a bench child runs.
#pragma once

#include "bench/reps.h"
#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gpucheck::bench {

enum class LatencyMode { kAsync, kRoundTrip };

struct LatencyShape {
  LatencyMode mode = LatencyMode::kAsync;
};

// Theano's gputest.py: exp of n floats, `calls` times, input resident on the device.
struct SeedloopShape {
  std::uint64_t n = 10 * 30 * 768;
  std::uint64_t calls = 1000;
  bool d2h_each_call = false;
};

using Shape = std::variant<ExpShape, GemmShape, ConvShape, CopyShape, LatencyShape, SeedloopShape>;

struct Cell {
  Op op = Op::kExp;
  DType dtype = DType::kF32;
  Shape shape;
  // The user named this op/dtype/size: when the device cannot run it, the record says
  // "unsupported" or "skipped"; defaults it cannot run are left out instead.
  bool explicit_request = false;
  // The user gave this size (--gemm, ...): too large for the device is "skipped"; preset sizes
  // are scaled down instead.
  bool explicit_size = false;
  // Set when a preset was scaled down to fit the device's memory rule.
  std::optional<nlohmann::json> scaled_from;
};

struct BenchPlan {
  std::string device;  // "cpu", "cuda0", ...
  std::string backend;
  std::vector<Cell> cells;
  RepPolicy policy;
  std::uint64_t seed = 0;
  int threads = 0;
};

nlohmann::json shape_to_json(const Shape& shape);
nlohmann::json to_json(const Cell& cell);
nlohmann::json to_json(const BenchPlan& plan);
BenchPlan plan_from_json(const nlohmann::json& j);

// "gemm f32 2048x2048x2048" for progress lines and messages.
std::string describe(const Cell& cell);

}  // namespace gpucheck::bench
