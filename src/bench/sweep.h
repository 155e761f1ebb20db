// Break-even sweeps (`bench --sweep`): one op over a geometric range of sizes on the CPU and a
// device, and the smallest size from which the device reliably beats the CPU.
#pragma once

#include "bench/reps.h"
#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::bench {

// The swept op and its sizes, smallest first: exp element counts, GEMM square sides, conv
// batch sizes N of N,64,56,56,64,3,3,1,1.
struct SweepSpec {
  Op op{};
  std::vector<std::uint64_t> sizes;
};

// Repetitions of a sweep unless the user gives --reps/--warmup/--max-time: few and fixed, so a
// full sweep of the largest sizes stays within minutes and every point has a min–max range.
inline constexpr int kSweepReps = 5;
inline constexpr int kSweepWarmup = 1;
inline constexpr double kSweepMaxTimeS = 10;

// `--sweep OP [--sweep-max N]`: the op (exp, gemm, conv) and its range cut at max_text (an
// integer or 2^K in the op's size unit; empty: the full range). UsageError for an unknown op, an
// unparsable maximum or one below the range's first size.
SweepSpec make_sweep(std::string_view op, std::string_view max_text);

// The ops a sweep runs ("exp, gemm, conv") and what a size of each counts ("exp elements, gemm
// m=n=k, conv batch n"), from the units, for --sweep's help and messages.
std::string sweepable_ops();
std::string sweep_size_meanings();

// The sizes as the op's size flag takes them: "1024,2048", "64,128", "1,64,56,…;2,64,…".
std::string sweep_size_flag(const SweepSpec& spec);

// One size of one series: the device's and the CPU's time ranges (seconds), both "ok".
struct SweepPoint {
  std::uint64_t size = 0;
  double median = 0, min = 0, max = 0;
  double cpu_median = 0, cpu_min = 0, cpu_max = 0;
};

// The device beats the CPU at a point: a smaller median and min–max ranges that do not overlap.
bool beats_cpu(const SweepPoint& p);

// The smallest size at which the device beats the CPU there and at every larger measured size;
// nullopt ("none in range") otherwise. Points sorted by size.
std::optional<std::uint64_t> break_even(const std::vector<SweepPoint>& points);

// The document's "sweep" section from the bench records: per device, dtype, layout and
// transfers, every planned size with its status, the CPU's and the device's times, and the
// break-even size (null: none in range).
nlohmann::json analyze_sweep(const SweepSpec& spec, const nlohmann::json& results);

}  // namespace gpucheck::bench
