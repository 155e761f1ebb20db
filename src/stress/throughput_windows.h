// Throughput per window of wall time, from work reported as it completes (batch ends), and the
// telemetry of each window: pure functions, so the verdict's window rules are unit-tested.
#pragma once

#include "backends/device.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace gpucheck::stress {

inline constexpr double kBurstSeconds = 0.5;

struct Window {
  double start_s = 0;   // seconds since the run began (the telemetry's clock)
  double length_s = 0;  // actual length: windows close at the first report after their end
  double amount = 0;    // FLOP or bytes done in it
  std::optional<double> sm_clock_mhz;  // mean of the samples inside it, where known
  double rate() const { return length_s > 0 ? amount / length_s : 0; }
};

class WindowTracker {
 public:
  // Windows of window_s seconds from start_s on.
  WindowTracker(double start_s, double window_s);
  // `amount` of work finished at t_s; a window closes at the first report at or after its end.
  void add(double t_s, double amount);
  // Work since start_s and the time it took.
  double total() const { return total_; }
  // The first kBurstSeconds seconds: the work reported up to the first report at or after
  // start_s + kBurstSeconds, over the time to that report (a cold GPU's clocks before power and
  // heat pull them down); nullopt while none came that late.
  std::optional<Window> burst() const { return burst_; }
  // The windows, the last one closed at end_s; a last window shorter than half a window is
  // merged into the one before (a few seconds' rate is noise, not a trend).
  std::vector<Window> finish(double end_s);

 private:
  double window_s_, start_s_, open_start_s_, open_amount_ = 0, total_ = 0, last_t_ = 0;
  std::vector<Window> closed_;
  std::optional<Window> burst_;
};

// Sets each window's mean SM clock from the samples whose time falls inside it.
void annotate_clocks(std::vector<Window>& windows, const std::vector<TelemetrySample>& samples);

// {"value", "unit", "min_window", "first_window", "burst", "burst_s", "sustained_over_burst",
// "windows": [{start_s, length_s, value, sm_clock_mhz}]}, rates divided by scale (1e12:
// TFLOP/s, 1e9: GB/s); the burst keys where burst is known.
nlohmann::json throughput_json(double total, double seconds, const std::vector<Window>& windows,
                               double scale, const char* unit,
                               const std::optional<Window>& burst = std::nullopt);

}  // namespace gpucheck::stress
