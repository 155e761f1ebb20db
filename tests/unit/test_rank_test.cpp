// The Mann-Whitney U test against values counted by hand: exact p for small samples without ties
// (2 / C(n1+n2, n1) when the sets are apart), the normal approximation with ties, symmetry.
#include "report/rank_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using gpucheck::report::mann_whitney_min_p;
using gpucheck::report::mann_whitney_p;
using gpucheck::report::MannWhitney;

TEST(RankTest, ExactWhenApart) {
  // All of a below all of b: one ordering in C(6,3) = 20 on each side.
  EXPECT_DOUBLE_EQ(mann_whitney_p(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6}),
                   2.0 / 20);
  // C(10,5) = 252.
  EXPECT_NEAR(
      mann_whitney_p(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{6, 7, 8, 9, 10}),
      2.0 / 252, 1e-15);
  EXPECT_NEAR(mann_whitney_min_p(5, 5), 2.0 / 252, 1e-15);
  EXPECT_NEAR(mann_whitney_min_p(3, 3), 0.1, 1e-15);
}

TEST(RankTest, ExactWithOneSwap) {
  // U = 1: the orderings with U <= 1 are 2 of C(6,3) = 20; two-sided 4/20.
  EXPECT_NEAR(mann_whitney_p(std::vector<double>{1, 2, 4}, std::vector<double>{3, 5, 6}), 0.2,
              1e-15);
}

TEST(RankTest, SymmetricAndOneForIdenticalSets) {
  std::vector<double> a{1, 3, 5, 7}, b{2, 4, 6, 8};
  EXPECT_DOUBLE_EQ(mann_whitney_p(a, b), mann_whitney_p(b, a));
  EXPECT_DOUBLE_EQ(mann_whitney_p(a, a), 1.0);  // every value tied with its copy
  EXPECT_DOUBLE_EQ(mann_whitney_p({}, b), 1.0);
}

TEST(RankTest, NormalApproximationForLargeSamples) {
  // 64 against 64, apart: z = (2048 - 0.5) / sqrt(64*64*129/12) = 2047.5 / 209.84 = 9.757.
  std::vector<double> a, b;
  for (int i = 0; i < 64; ++i) {
    a.push_back(i);
    b.push_back(100 + i);
  }
  const double p = mann_whitney_p(a, b);
  EXPECT_GT(p, 0);
  EXPECT_LT(p, 1e-20);
  EXPECT_NEAR(p, std::erfc(2047.5 / std::sqrt(64.0 * 64 * 129 / 12) / std::sqrt(2.0)), 1e-25);
  // Interleaved: no evidence at all.
  std::vector<double> even, odd;
  for (int i = 0; i < 128; ++i) (i % 2 ? odd : even).push_back(i);
  EXPECT_GT(mann_whitney_p(even, odd), 0.8);
}

TEST(RankTest, TiesUseTheCorrectedVariance) {
  // a = {1,1,2}, b = {2,3,3}: ranks 1.5,1.5,3.5 | 3.5,5.5,5.5; U1 = 6.5 - 6 = 0.5; ties of two
  // thrice: Σ(t³-t) = 18; var = 9/12 * (7 - 18/30) = 4.8; z = (|0.5 - 4.5| - 0.5) / sqrt(4.8).
  const double p = mann_whitney_p(std::vector<double>{1, 1, 2}, std::vector<double>{2, 3, 3});
  EXPECT_NEAR(p, std::erfc(3.5 / std::sqrt(4.8) / std::sqrt(2.0)), 1e-12);
}

TEST(RankTest, CachedMatchesFresh) {
  MannWhitney mw;
  std::vector<double> a{0.9, 1.1, 1.3, 0.7}, b{1.2, 1.4, 1.6, 1.5, 1.7};
  EXPECT_DOUBLE_EQ(mw.p_value(a, b), mann_whitney_p(a, b));
  EXPECT_DOUBLE_EQ(mw.p_value(a, b), mann_whitney_p(a, b));  // from the cache
  EXPECT_DOUBLE_EQ(mw.min_p(4, 5), mann_whitney_min_p(4, 5));
}

}  // namespace
