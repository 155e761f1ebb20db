// What every result record shares, whichever runner made it (one device: engine.cpp; a group of
// devices: group_engine.cpp): the work of a cell and the completion of a record from its timings.
#pragma once

#include "bench/cell.h"
#include "bench/stats.h"
#include "bench/verify.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace gpucheck::bench {

// Work one run does: bytes moved through memory or a link, or floating-point operations.
struct Work {
  double amount = 0;
  const char* unit = "GB/s";
};
Work work_of(const Cell& cell);

// Completes a record from timings and a verification: time_s, throughput, verification and the
// status (ok, or mismatch with the first bad index when the verification failed).
void finish_record(nlohmann::json& r, const Cell& cell, const std::vector<double>& times,
                   bool truncated, const std::optional<Verification>& v);

// The same from every round's timings (bench --rounds): time_s pools them and keeps up to 64
// samples and, for more than one round, each round's median.
void finish_record(nlohmann::json& r, const Cell& cell,
                   const std::vector<std::vector<double>>& round_times, bool truncated,
                   const std::optional<Verification>& v);

// A record's time_s from its statistics (also bench --ops net's, app/bench_net.cpp).
nlohmann::json time_json(const TimeStats& t);

}  // namespace gpucheck::bench
