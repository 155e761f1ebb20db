// Telemetry summaries for stress records.
#include "stress/telemetry.h"

#include "core/json_keys.h"

#include <algorithm>
#include <cmath>

namespace gpucheck::stress {

namespace k = keys;

namespace {

struct Stat {
  double sum = 0, min = 0, max = 0;
  std::size_t n = 0;
  void add(const std::optional<double>& v) {
    if (!v) return;
    min = n == 0 ? *v : std::min(min, *v);
    max = n == 0 ? *v : std::max(max, *v);
    sum += *v;
    ++n;
  }
  nlohmann::json json(double step) const {
    auto r = [&](double v) { return std::round(v / step) * step; };
    return {{k::kMean, r(sum / static_cast<double>(n))}, {k::kMin, r(min)}, {k::kMax, r(max)}};
  }
};

}  // namespace

nlohmann::json summarize_telemetry(const TelemetryInput& in) {
  nlohmann::json j = {{k::kIntervalMs, in.interval_ms}, {k::kSamples, in.samples.size()}};
  Stat sm, mem, temp, power;
  std::map<std::uint32_t, std::size_t> seen;
  for (const auto& s : in.samples) {
    sm.add(s.sm_clock_mhz);
    mem.add(s.mem_clock_mhz);
    temp.add(s.temperature_c);
    power.add(s.power_w);
    if (s.clock_events)
      for (const auto& [flag, name] : clock_event::kNames)
        if (*s.clock_events & flag) ++seen[flag];
  }
  if (sm.n) j[k::kSmClockMhz] = sm.json(1);
  if (in.max_sm_clock_mhz) j[k::kMaxSmClockMhz] = *in.max_sm_clock_mhz;
  if (mem.n) j[k::kMemClockMhz] = mem.json(1);
  if (temp.n) j[k::kTemperatureC] = temp.json(1);
  if (power.n) j[k::kPowerW] = power.json(0.1);
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& [flag, name] : clock_event::kNames)
    if (auto it = seen.find(flag); it != seen.end())
      reasons[name] = static_cast<double>(it->second) * in.interval_ms / 1000.0;
  if (!seen.empty() || std::any_of(in.samples.begin(), in.samples.end(),
                                   [](const auto& s) { return s.clock_events.has_value(); }))
    j[k::kClocksEventReasons] = reasons;
  if (!in.before.empty() || !in.after.empty()) {
    nlohmann::json delta = nlohmann::json::object();
    for (const auto& [name, after] : in.after)
      if (auto b = in.before.find(name); b != in.before.end())
        delta[name] = after >= b->second ? after - b->second : after;
    j[k::kCounters] = {{k::kBefore, in.before}, {k::kAfter, in.after}, {k::kDelta, delta}};
  }
  return j;
}

}  // namespace gpucheck::stress
