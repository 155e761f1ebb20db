// Window bookkeeping for stress throughput.
#include "stress/throughput_windows.h"

#include "core/json_keys.h"
#include "core/json_keys_stress.h"

#include <algorithm>
#include <cmath>

namespace gpucheck::stress {

namespace k = keys;

WindowTracker::WindowTracker(double start_s, double window_s)
    : window_s_(window_s), start_s_(start_s), open_start_s_(start_s), last_t_(start_s) {}

void WindowTracker::add(double t_s, double amount) {
  open_amount_ += amount;
  total_ += amount;
  if (!burst_ && t_s >= start_s_ + kBurstSeconds)
    burst_ = Window{start_s_, t_s - start_s_, total_, std::nullopt};
  last_t_ = std::max(last_t_, t_s);
  if (t_s >= open_start_s_ + window_s_) {
    closed_.push_back({open_start_s_, t_s - open_start_s_, open_amount_, std::nullopt});
    open_start_s_ = t_s;
    open_amount_ = 0;
  }
}

std::vector<Window> WindowTracker::finish(double end_s) {
  std::vector<Window> out = closed_;
  end_s = std::max(end_s, last_t_);
  const double open_length = end_s - open_start_s_;
  if (open_length > 0 || open_amount_ > 0) {
    if (open_length < 0.5 * window_s_ && !out.empty()) {
      out.back().length_s += open_length;
      out.back().amount += open_amount_;
    } else if (open_length > 0) {
      out.push_back({open_start_s_, open_length, open_amount_, std::nullopt});
    }
  }
  return out;
}

void annotate_clocks(std::vector<Window>& windows, const std::vector<TelemetrySample>& samples) {
  for (auto& w : windows) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto& s : samples)
      if (s.sm_clock_mhz && s.t_s >= w.start_s && s.t_s < w.start_s + w.length_s)
        sum += *s.sm_clock_mhz, ++n;
    if (n > 0) w.sm_clock_mhz = sum / static_cast<double>(n);
  }
}

nlohmann::json throughput_json(double total, double seconds, const std::vector<Window>& windows,
                               double scale, const char* unit, const std::optional<Window>& burst) {
  nlohmann::json j = {{k::kValue, seconds > 0 ? total / seconds / scale : 0.0}, {k::kUnit, unit}};
  nlohmann::json list = nlohmann::json::array();
  double lowest = INFINITY;
  for (const auto& w : windows) {
    nlohmann::json e = {
        {k::kStartS, w.start_s}, {k::kDurationS, w.length_s}, {k::kValue, w.rate() / scale}};
    if (w.sm_clock_mhz) e[k::kSmClockMhz] = std::round(*w.sm_clock_mhz);
    list.push_back(e);
    lowest = std::min(lowest, w.rate() / scale);
  }
  if (!windows.empty()) {
    j[k::kMinWindow] = lowest;
    j[k::kFirstWindow] = windows.front().rate() / scale;
  }
  if (burst && burst->rate() > 0) {
    j[k::kBurst] = burst->rate() / scale;
    j[k::kBurstS] = burst->length_s;
    j[k::kSustainedOverBurst] = j[k::kValue].get<double>() / (burst->rate() / scale);
  }
  j[k::kWindows] = list;
  return j;
}

}  // namespace gpucheck::stress
