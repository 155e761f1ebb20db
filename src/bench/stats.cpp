// Median, extremes and sample standard deviation of timing samples.
#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace gpucheck::bench {

TimeStats summarize(std::span<const double> samples, bool truncated) {
  if (samples.empty()) throw std::invalid_argument("summarize: no timing samples");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  TimeStats s;
  s.reps = n;
  s.truncated = truncated;
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  if (n > 1) {
    // Deviations from the median first (exact for close samples), then two passes over them:
    // no cancellation of large sums, and equal samples give exactly 0.
    double sum = 0;
    for (const double v : sorted) sum += v - s.median;
    const double mean = sum / static_cast<double>(n);
    double sq = 0;
    for (const double v : sorted) {
      const double d = (v - s.median) - mean;
      sq += d * d;
    }
    s.stddev = std::sqrt(sq / static_cast<double>(n - 1));
  }
  return s;
}

}  // namespace gpucheck::bench
