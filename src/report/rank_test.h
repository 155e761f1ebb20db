// The Mann-Whitney U test (Wilcoxon rank-sum), two-sided: do two sets of timings come from the
// same distribution? Pure functions; google/benchmark's compare.py runs the same test beside the
// relative change.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace gpucheck::report {

// The two-sided p-value of a against b: exact (the U distribution counted) for samples without
// ties and at most 60 values in all; else the normal approximation with the tie correction and
// a continuity correction. 1 when either side is empty or every value is tied.
double mann_whitney_p(std::span<const double> a, std::span<const double> b);

// The smallest p-value samples of these sizes can reach (the two sets entirely apart): when it
// is above the test's level, the test cannot decide anything with so few samples.
double mann_whitney_min_p(std::size_t n1, std::size_t n2);

// The same, remembering the exact distribution of each pair of sizes: a comparison of 250,000
// records asks for the same few sizes again and again.
class MannWhitney {
 public:
  double p_value(std::span<const double> a, std::span<const double> b);
  double min_p(std::size_t n1, std::size_t n2);

 private:
  const std::vector<double>& cdf(std::size_t n1, std::size_t n2);
  std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> cdf_;
  std::map<std::pair<std::size_t, std::size_t>, double> min_p_;
};

}  // namespace gpucheck::report
