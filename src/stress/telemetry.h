// The run's telemetry in a few numbers: clocks, temperature and power (mean, min, max), how long
// each clocks-event reason was seen, and the counters that only grow, before, after and their
// change. A pure function of the samples and counters, so it is tested without a GPU.
#pragma once

#include "backends/device.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::stress {

struct TelemetryInput {
  int interval_ms = 100;
  std::vector<TelemetrySample> samples;
  std::map<std::string, std::uint64_t> before, after;
  std::optional<double> max_sm_clock_mhz;
};

// {"interval_ms", "samples", "sm_clock_mhz": {mean,min,max}, "mem_clock_mhz", "temperature_c",
//  "power_w", "max_sm_clock_mhz", "clocks_event_reasons": {name: seconds seen},
//  "counters": {"before", "after", "delta"}}; a quantity never read has no key. A reason's
// seconds are its samples times the interval. A counter's delta is after − before (a counter
// that went down, as after a driver reload, has the after value as its delta).
nlohmann::json summarize_telemetry(const TelemetryInput& in);

}  // namespace gpucheck::stress
