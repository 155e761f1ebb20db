// bench's default sizes, chosen per device. A preset is one size per op for every device, so a
// size that keeps a 2-core VM busy for milliseconds leaves an H200 launch-bound (GEMM 512³ at
// 11.6 of its 774 TFLOP/s), and one that measures the H200 keeps the VM busy for minutes. With no
// --size, size flag or --config, each device gets, per op, the smallest round size whose work
// lasts long enough at the device's limit (qualify/limits.h) to come near it, checked against a
// sweep of growing sizes on an H200 (docs/PERFORMANCE.md). Beside it the small preset's size stays,
// in f32 only: where a GPU loses once host transfers count (the seeds' exp lesson).
#pragma once

#include "app/bench_devices.h"
#include "bench/cell.h"
#include "bench/config.h"
#include "qualify/limits.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace gpucheck::app {

// Seconds of work at the device's limit a chosen size must give: GEMM at the larger of its f32
// and bf16 limits (the CPU's: f32), conv at the f32 limit, exp at memory bandwidth (read and
// write); a copy the larger of kHostCopyWorkS at the host link and kDeviceCopyWorkS at device
// memory. On an H200 (docs/PERFORMANCE.md, the default-size sweep) these give GEMM 4096³ (0.95 of
// the best f32 rate of 1024…16384, 0.98 bf16), exp 2^26 (0.95 of 2^20…2^30) and 256 MiB copies
// (pinned h2d/d2h 1.00, d2d 0.96 of 1 MiB…1 GiB); on a 2-core VM GEMM stays at the small 512³,
// where OpenBLAS already gives its rate of 1024³.
inline constexpr double kWorkS = 0.1e-3;
inline constexpr double kHostCopyWorkS = 0.25e-3;
inline constexpr double kDeviceCopyWorkS = 50e-6;

struct DeviceSizes {
  // The small preset's sizes with each op's chosen size after them (none where the small one
  // already gives the work, or the op has no size).
  bench::SizeSet sizes;
  // The small preset's size of each op that also has a chosen one: kept for the transfer lesson
  // only (f32, NCHW, host copies), the other cells of it are left out (keep_cell).
  std::map<Op, bench::Shape> lesson;
  // The document's account, per op: {"sizes": [...], "why": "..."}.
  nlohmann::json explained = nlohmann::json::object();
};

// The sizes for one device from the presets' "small" entry and what the limits know of it.
DeviceSizes choose_device_sizes(const BenchTarget& target, const bench::Presets& presets,
                                const qualify::LimitFacts& facts);

// Whether a planned cell stays: every cell of a chosen size, and of a lesson size only the f32
// cell (NCHW for conv) and the host copies.
bool keep_cell(const DeviceSizes& sizes, const bench::Cell& cell);

// The smallest power of two at or above x (x ≤ 2^62), and at least `floor`.
std::uint64_t round_up_pow2(double x, std::uint64_t floor);

}  // namespace gpucheck::app
