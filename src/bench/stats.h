// Summary statistics of timing samples: pure functions, no I/O.
#pragma once

#include <cstddef>
#include <span>

namespace gpucheck::bench {

// The record's time_s object. Seconds.
struct TimeStats {
  double median = 0;  // mean of the two middle samples for an even count
  double min = 0;
  double max = 0;
  double stddev = 0;  // sample standard deviation (n − 1); 0 for a single sample
  std::size_t reps = 0;
  bool truncated = false;  // --max-time ended the repetitions early
};

// Throws std::invalid_argument for no samples.
TimeStats summarize(std::span<const double> samples, bool truncated);

}  // namespace gpucheck::bench
