// Numbers as people read them: times, rates, sizes, speedups and workload sizes with the unit
// that keeps 3–4 significant digits. The JSON keeps the full values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::report {

// 3 significant digits below 1000, the integer from 1000 on: "1.23", "12.3", "123", "4136".
std::string significant(double v);

// Seconds in ns, µs, ms or s: "5.30 µs", "1.23 ms", "2.50 s".
std::string format_seconds(double s);

// A record's throughput (value in "GB/s" or "TFLOP/s", as records carry it) in the largest unit
// that leaves at least 1 (bandwidth in GB/s up to 10000): "4136 GB/s", "11.0 TFLOP/s",
// "16.6 GFLOP/s", "512 MB/s".
std::string format_rate(double value, std::string_view unit);

// A value in the unit a record or fleet group carries it: seconds as format_seconds, GB/s and
// TFLOP/s as format_rate, anything else with 3 significant digits and its unit.
std::string format_measure(double value, std::string_view unit);

// An axis's tick labels, all in the unit the largest tick takes (format_measure's choice), each
// with the decimals the step between ticks needs, so neighbours never read alike: ticks 4000,
// 4025, 4050 in GB/s read "4000 GB/s", "4025 GB/s", "4050 GB/s"; 2.5 ms steps "2.5 ms", "5.0 ms".
std::vector<std::string> format_ticks(const std::vector<double>& ticks, std::string_view unit);

// A size in binary units, whole where exact: "256 MiB", "48 KiB", "139.8 GiB", "100 B".
std::string format_size(std::uint64_t bytes);

// A capacity with one decimal: "141.0 GiB", "512.0 MiB".
std::string format_memory(std::uint64_t bytes);

// A ratio: "3.41×", "12.1×", and two digits below 1: "0.31×", "0.04×".
std::string format_speedup(double x);

// A share of the hardware's limit: "54%", "4.7%", "<0.1%".
std::string format_share(double fraction);

// The share of its hardware's limit an ok record reached (its limit.fraction, qualify/limits.h)
// as format_share writes it; empty where the limit holds a reason instead, or the record none.
std::string limit_share(const nlohmann::json& record);

// An element count: "2^20" for powers of two from 1024 on, else the integer.
std::string format_count(std::uint64_t n);

// A result record's shape for a table: exp "2^20", GEMM "512³" or "MxNxK", conv
// "N,C,H,W,K,R,S,stride,pad layout", copy "1 MiB h2d pinned", latency its mode.
std::string shape_label(const nlohmann::json& shape);

}  // namespace gpucheck::report
