// Median, MAD, relative deviations and modified z-scores, and the verdict of each value.
#include "core/outliers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpucheck {

double median_of(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("median of no values");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

OutlierResult judge_outliers(const std::vector<double>& values, const std::vector<double>& noise,
                             const OutlierThresholds& t) {
  if (values.empty()) throw std::invalid_argument("outliers of no values");
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument("outliers: a value is not finite");
  OutlierResult r;
  r.median = median_of(values);
  if (r.median == 0) throw std::invalid_argument("outliers: the median is 0");
  std::vector<double> abs_dev;
  for (double v : values) abs_dev.push_back(std::fabs(v - r.median));
  r.mad = median_of(abs_dev);
  for (std::size_t i = 0; i < values.size(); ++i) {
    OutlierPoint p;
    p.value = values[i];
    p.relative_deviation = (values[i] - r.median) / r.median;
    if (r.mad > 0) p.modified_z = 0.6745 * (values[i] - r.median) / r.mad;
    p.noise = i < noise.size() ? std::max(0.0, noise[i]) : 0.0;
    const bool counts = !t.low_side_only || p.relative_deviation < 0;
    const double dev = std::fabs(p.relative_deviation);
    if (counts && dev > p.noise) {
      auto beyond = [&](const std::optional<double>& rel, const std::optional<double>& z) {
        return (rel && dev > *rel) || (z && p.modified_z && std::fabs(*p.modified_z) > *z);
      };
      const bool mad_fallback =
          r.mad == 0 && t.relative_fail_without_mad && dev > *t.relative_fail_without_mad;
      if (mad_fallback || beyond(t.relative_fail, t.z_fail))
        p.level = OutlierLevel::kFail;
      else if (beyond(t.relative_warn, t.z_warn))
        p.level = OutlierLevel::kWarn;
    }
    r.points.push_back(p);
  }
  return r;
}

}  // namespace gpucheck
