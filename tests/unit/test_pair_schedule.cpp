#include "core/pair_schedule.h"

#include <gtest/gtest.h>

#include <set>

namespace gpucheck {
namespace {

// Every pair once, no device twice in a round, and the round count of a tournament.
void expect_tournament(std::size_t n) {
  const auto rounds = disjoint_pair_rounds(n);
  if (n < 2) {
    EXPECT_TRUE(rounds.empty());
    return;
  }
  EXPECT_EQ(rounds.size(), n % 2 == 0 ? n - 1 : n) << n;
  std::set<DevicePair> seen;
  for (const auto& round : rounds) {
    EXPECT_EQ(round.size(), n / 2) << n;
    std::set<std::size_t> busy;
    for (const auto& [a, b] : round) {
      EXPECT_LT(a, b);
      EXPECT_LT(b, n);
      EXPECT_TRUE(busy.insert(a).second) << "device " << a << " twice in a round of " << n;
      EXPECT_TRUE(busy.insert(b).second) << "device " << b << " twice in a round of " << n;
      EXPECT_TRUE(seen.insert({a, b}).second) << a << "," << b << " met twice";
    }
  }
  EXPECT_EQ(seen.size(), n * (n - 1) / 2);
}

TEST(PairSchedule, EveryPairMeetsOnceAndNoDeviceIsInTwoPairsOfARound) {
  for (std::size_t n = 0; n <= 17; ++n) expect_tournament(n);
}

TEST(PairSchedule, EightDevicesTakeSevenRoundsOfFourPairs) {
  const auto rounds = disjoint_pair_rounds(8);
  ASSERT_EQ(rounds.size(), 7u);
  for (const auto& r : rounds) EXPECT_EQ(r.size(), 4u);
}

TEST(PairSchedule, DirectedRoundsCoverEveryOrderedPairWithoutSharingAnEnd) {
  for (std::size_t n : {2u, 3u, 4u, 8u}) {
    const auto rounds = directed_pair_rounds(n);
    std::set<DevicePair> seen;
    for (const auto& round : rounds) {
      std::set<std::size_t> srcs, dsts;
      for (const auto& [s, d] : round) {
        EXPECT_NE(s, d);
        EXPECT_TRUE(srcs.insert(s).second);
        EXPECT_TRUE(dsts.insert(d).second);
        EXPECT_TRUE(seen.insert({s, d}).second);
      }
    }
    EXPECT_EQ(seen.size(), n * (n - 1)) << n;
  }
}

}  // namespace
}  // namespace gpucheck
