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
  s.median = median_of(sorted);
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
  s.samples = evenly_spaced(samples, kMaxKeptSamples);
  return s;
}

double median_of(std::span<const double> values) {
  if (values.empty()) return 0;
  std::vector<double> v(values.begin(), values.end());
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double upper = v[n / 2];
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lower + upper) / 2;
}

std::vector<double> evenly_spaced(std::span<const double> samples, std::size_t keep) {
  if (samples.size() <= keep) return {samples.begin(), samples.end()};
  std::vector<double> out;
  out.reserve(keep);
  for (std::size_t i = 0; i < keep; ++i) out.push_back(samples[i * samples.size() / keep]);
  return out;
}

TimeStats summarize_rounds(const std::vector<std::vector<double>>& rounds, bool truncated) {
  std::vector<double> all;
  std::vector<double> medians;
  for (const auto& r : rounds) {
    if (r.empty()) continue;
    all.insert(all.end(), r.begin(), r.end());
    medians.push_back(median_of(r));
  }
  TimeStats s = summarize(all, truncated);
  if (medians.size() > 1) s.round_medians = std::move(medians);
  return s;
}

}  // namespace gpucheck::bench
