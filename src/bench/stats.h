// Summary statistics of timing samples: pure functions, no I/O.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gpucheck::bench {

// The record's time_s object. Seconds.
struct TimeStats {
  double median = 0;  // mean of the two middle samples for an even count
  double min = 0;
  double max = 0;
  double stddev = 0;  // sample standard deviation (n − 1); 0 for a single sample
  std::size_t reps = 0;
  bool truncated = false;  // --max-time ended the repetitions early
  // What `report compare` judges the run by. Up to kMaxKeptSamples repetitions, evenly
  // spaced over the run, and the median of each round (empty for a single round).
  std::vector<double> samples;
  std::vector<double> round_medians;
};

// Samples a document keeps per record: enough for a rank test, small beside the record.
inline constexpr std::size_t kMaxKeptSamples = 64;

// Throws std::invalid_argument for no samples.
TimeStats summarize(std::span<const double> samples, bool truncated);

// The statistics of every round's samples pooled, plus the kept samples and round medians.
// Rounds without samples are ignored; throws std::invalid_argument when all are empty.
TimeStats summarize_rounds(const std::vector<std::vector<double>>& rounds, bool truncated);

// The median of the values (mean of the middle two for an even count); 0 for none.
double median_of(std::span<const double> values);

// At most `keep` of the samples, at evenly spaced positions (all of them when there are fewer).
std::vector<double> evenly_spaced(std::span<const double> samples, std::size_t keep);

}  // namespace gpucheck::bench
