// Wall time since a start on the steady clock: the step timings that -v logs.
#pragma once

#include <chrono>

namespace gpucheck {

class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // The seconds since the start (or the last lap), and a new start now.
  double lap() {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
};

}  // namespace gpucheck
