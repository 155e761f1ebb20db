// Outliers among figures that should agree (GPUs of one model in one machine; later, machines of
// one fleet): one function with its thresholds as parameters, so each rule set is a thin caller.
// It gives the median, the MAD, each value's relative deviation from the median and its modified
// z-score (Iglewicz & Hoaglin: 0.6745·(x − median)/MAD), and judges by whichever thresholds are
// set. A deviation within a value's own noise floor is never an outlier.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gpucheck {

enum class OutlierLevel { kNone, kWarn, kFail };

struct OutlierThresholds {
  // Relative deviation below the median ((median − x)/median) beyond which a value is an outlier;
  // unset: not judged by it. gpu_siblings: 0.05 (WARN) and 0.10 (FAIL).
  std::optional<double> relative_warn, relative_fail;
  // |modified z-score| beyond which a value is an outlier (3.5 is Iglewicz & Hoaglin's); unset:
  // not judged by it. Undefined (and not judged) when the MAD is 0.
  std::optional<double> z_warn, z_fail;
  // Where the MAD is 0 (more than half the values identical) the z-score is undefined, and the
  // rule above would let any value through: this relative drop judges instead (fleets: at every
  // size). Unset: a zero MAD judges by the relative thresholds alone.
  std::optional<double> relative_fail_without_mad;
  // Only values below the median count (throughput: higher is better); false: both sides.
  bool low_side_only = true;
};

struct OutlierPoint {
  double value = 0;
  double relative_deviation = 0;     // (x − median)/median; negative below the median
  std::optional<double> modified_z;  // nullopt when the MAD is 0
  double noise = 0;                  // the floor this value was judged against (relative)
  OutlierLevel level = OutlierLevel::kNone;
};

struct OutlierResult {
  double median = 0;
  double mad = 0;                    // median absolute deviation from the median (unscaled)
  std::vector<OutlierPoint> points;  // in the order of the values
};

// noise[i]: value i's relative noise floor (its own repetitions' spread); shorter or empty: 0.
// Throws std::invalid_argument for no values, a non-finite value or a median of 0.
OutlierResult judge_outliers(const std::vector<double>& values, const std::vector<double>& noise,
                             const OutlierThresholds& thresholds);

// The median of values (the mean of the middle two for an even count); values not empty.
double median_of(std::vector<double> values);

}  // namespace gpucheck
