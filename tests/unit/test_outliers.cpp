// The outlier function gpu_siblings and (later) the fleet report share: median, MAD, relative
// deviation and modified z-score with exact numbers for n = 2, 4 and 8, and the thresholds and
// noise floor as parameters.
#include "core/outliers.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace {

using namespace gpucheck;

OutlierThresholds siblings_rule() {
  OutlierThresholds t;
  t.relative_warn = 0.05;
  t.relative_fail = 0.10;
  return t;
}

TEST(Outliers, TwoGpusTheMedianIsThePairs) {
  // 100 and 90: the median is 95, so the slow one is 5.26 % below it (WARN), the fast one above.
  const auto r = judge_outliers({100, 90}, {0.01, 0.01}, siblings_rule());
  EXPECT_DOUBLE_EQ(r.median, 95);
  EXPECT_DOUBLE_EQ(r.mad, 5);
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_NEAR(r.points[1].relative_deviation, -5.0 / 95, 1e-12);
  EXPECT_EQ(r.points[1].level, OutlierLevel::kWarn);
  EXPECT_EQ(r.points[0].level, OutlierLevel::kNone);  // above the median: throughput is better
  // With n = 2 the z-score is ±0.6745 whatever the gap: only the relative rule can judge a pair.
  EXPECT_NEAR(*r.points[1].modified_z, -0.6745, 1e-12);
  EXPECT_NEAR(*r.points[0].modified_z, 0.6745, 1e-12);
}

TEST(Outliers, TwoGpusFailBeyondTenPercent) {
  const auto r = judge_outliers({100, 80}, {}, siblings_rule());
  EXPECT_DOUBLE_EQ(r.median, 90);
  EXPECT_NEAR(r.points[1].relative_deviation, -10.0 / 90, 1e-12);  // 11.1 % below
  EXPECT_EQ(r.points[1].level, OutlierLevel::kFail);
}

TEST(Outliers, FourGpusOneSlow) {
  // Sorted 88, 99, 100, 101: median 99.5; deviations 0.5 1.5 0.5 11.5 → MAD 1.
  const auto r = judge_outliers({100, 101, 99, 88}, {}, siblings_rule());
  EXPECT_DOUBLE_EQ(r.median, 99.5);
  EXPECT_DOUBLE_EQ(r.mad, 1.0);
  EXPECT_NEAR(r.points[3].relative_deviation, -11.5 / 99.5, 1e-12);
  EXPECT_NEAR(*r.points[3].modified_z, 0.6745 * -11.5, 1e-12);
  EXPECT_EQ(r.points[3].level, OutlierLevel::kFail);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.points[i].level, OutlierLevel::kNone) << i;
}

TEST(Outliers, EightGpusWarnAndNone) {
  const std::vector<double> v = {650, 652, 648, 651, 649, 650, 615, 653};
  const auto r = judge_outliers(v, std::vector<double>(8, 0.01), siblings_rule());
  EXPECT_DOUBLE_EQ(r.median, 650);
  // |dev| sorted: 0 0 1 1 2 2 3 35 → MAD (1 + 2) / 2 = 1.5.
  EXPECT_DOUBLE_EQ(r.mad, 1.5);
  EXPECT_NEAR(r.points[6].relative_deviation, -35.0 / 650, 1e-12);  // 5.38 %
  EXPECT_EQ(r.points[6].level, OutlierLevel::kWarn);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i != 6) {
      EXPECT_EQ(r.points[i].level, OutlierLevel::kNone) << i;
    }
  }
}

TEST(Outliers, NoiseFloorKeepsNoiseFromFailing) {
  // 8 % below, but this GPU's own repetitions spread 9 %: not an outlier.
  const auto r = judge_outliers({100, 100, 92}, {0.01, 0.01, 0.09}, siblings_rule());
  EXPECT_EQ(r.points[2].level, OutlierLevel::kNone);
  EXPECT_DOUBLE_EQ(r.points[2].noise, 0.09);
  // The same with a quiet GPU: WARN.
  EXPECT_EQ(judge_outliers({100, 100, 92}, {0.01, 0.01, 0.01}, siblings_rule()).points[2].level,
            OutlierLevel::kWarn);
}

TEST(Outliers, ModifiedZRuleForFleets) {
  // The fleet rule: |z| > 3.5 on both sides; no relative thresholds.
  OutlierThresholds fleet;
  fleet.z_fail = 3.5;
  fleet.low_side_only = false;
  const std::vector<double> v = {10, 10.1, 9.9, 10.05, 9.95, 10, 10, 13};
  const auto r = judge_outliers(v, {}, fleet);
  EXPECT_DOUBLE_EQ(r.median, 10);
  EXPECT_NEAR(r.mad, 0.05, 1e-12);
  EXPECT_NEAR(*r.points[7].modified_z, 0.6745 * 3 / 0.05, 1e-9);
  EXPECT_EQ(r.points[7].level, OutlierLevel::kFail);  // above the median counts here
  EXPECT_EQ(r.points[1].level, OutlierLevel::kNone);  // z = 1.35
}

TEST(Outliers, ZeroMadLeavesZUndefined) {
  OutlierThresholds z;
  z.z_fail = 3.5;
  const auto r = judge_outliers({5, 5, 5, 4}, {}, z);
  EXPECT_DOUBLE_EQ(r.mad, 0);
  EXPECT_FALSE(r.points[3].modified_z.has_value());
  EXPECT_EQ(r.points[3].level, OutlierLevel::kNone);
}

TEST(Outliers, BadInput) {
  EXPECT_THROW(judge_outliers({}, {}, {}), std::invalid_argument);
  EXPECT_THROW(judge_outliers({0, 0}, {}, {}), std::invalid_argument);
  EXPECT_THROW(judge_outliers({1, std::numeric_limits<double>::infinity()}, {}, {}),
               std::invalid_argument);
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
}

}  // namespace
