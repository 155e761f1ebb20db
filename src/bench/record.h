// What every result record shares, whichever runner made it (one device: engine.cpp; a group of
// devices: group_engine.cpp): the work of a cell and the completion of a record from its timings.
#pragma once

#include "bench/cell.h"
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

// busbw / algbw of an all-reduce over n devices (nccl-tests): 2(n−1)/n; 0 for n = 0.
double allreduce_bus_factor(std::size_t n);

// Completes a record from timings and a verification: time_s, throughput, verification and the
// status (ok, or mismatch with the first bad index when the verification failed).
void finish_record(nlohmann::json& r, const Cell& cell, const std::vector<double>& times,
                   bool truncated, const std::optional<Verification>& v);

}  // namespace gpucheck::bench
