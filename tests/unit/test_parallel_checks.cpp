// The float64 checks split over threads give what one pass in order gives.
#include "bench/verify_parts.h"
#include "core/parallel_ranges.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpucheck::bench {
namespace {

using verify_parts::Tracker;

TEST(ParallelRanges, EveryIndexOnceInContiguousEvenRanges) {
  for (std::size_t n : {0u, 1u, 7u, 1000u, 100001u}) {
    const auto ranges = split_ranges(n, 16);
    ASSERT_FALSE(ranges.empty());
    std::size_t next = 0;
    for (std::size_t r = 0; r < ranges.size(); ++r) {
      EXPECT_EQ(ranges[r].first, next) << "n=" << n;
      if (r + 1 < ranges.size()) {
        EXPECT_EQ((ranges[r].second - ranges[r].first) % 2, 0u);
      }
      next = ranges[r].second;
    }
    EXPECT_EQ(next, n);
    std::vector<std::atomic<int>> seen(n);
    parallel_ranges(
        n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) seen[i]++;
        },
        16);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "index " << i;
  }
}

// The staged copies' form: page-aligned pieces, no more ranges than asked, the last one short.
TEST(ParallelRanges, AlignmentAndTheMostRangesAreKept) {
  const std::size_t n = 5 * 4096 * 1000 + 3;
  const auto pages = split_ranges(n, Split(4096, 64, 4096));
  for (std::size_t r = 0; r + 1 < pages.size(); ++r) EXPECT_EQ(pages[r].second % 4096, 0u) << r;
  EXPECT_EQ(pages.back().second, n);
  EXPECT_EQ(split_ranges(n, Split(1, 1)).size(), 1u);
  EXPECT_LE(split_ranges(n, Split(1, 3)).size(), 3u);
}

TEST(ParallelRanges, AFailingRangeReachesTheCallerAfterAllEnded) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_indexed_ranges(1u << 20, 1024,
                                       [&](std::size_t r, std::size_t, std::size_t) {
                                         ran++;
                                         if (r == 1) throw std::runtime_error("range 1 failed");
                                       }),
               std::runtime_error);
  EXPECT_EQ(static_cast<std::size_t>(ran.load()), split_ranges(1u << 20, 1024).size());
}

// Ratios with bad ones (over 1) planted at known places, a NaN among them.
std::vector<double> planted_ratios(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 97) / 100.0;
  v[n / 3] = 5;
  v[n / 2] = std::numeric_limits<double>::quiet_NaN();
  v[n - 1] = 2;
  return v;
}

TEST(ParallelChecks, TrackedRangesEqualOnePassInOrder) {
  const std::size_t n = 300000;
  const auto ratios = planted_ratios(n);
  Tracker serial(1.0);
  for (std::size_t i = 0; i < n; ++i)
    serial.observe(i, ratios[i], [&] { return "element " + std::to_string(i); });
  Tracker split(1.0);
  tracked_ranges(split, n, 1000, [&](std::size_t b, std::size_t e, Tracker& part) {
    for (std::size_t i = b; i < e; ++i)
      part.observe(i, ratios[i], [&] { return "element " + std::to_string(i); });
  });
  EXPECT_EQ(split.bad(), serial.bad());
  EXPECT_EQ(split.bad(), 3u);
  EXPECT_EQ(split.max(), serial.max());
  ASSERT_TRUE(split.first().has_value());
  EXPECT_EQ(*split.first(), n / 3);
  EXPECT_EQ(split.first_what(), serial.first_what());
}

TEST(ParallelChecks, TheScanNamesTheLowestBadElementOfAnyRange) {
  HostBuffer y(DType::kF32, 1u << 20);
  for (std::size_t i = 0; i < y.size(); ++i) y.set(i, 1.0);
  y.set(900000, std::numeric_limits<double>::infinity());
  y.set(700000, std::numeric_limits<double>::quiet_NaN());
  const auto scan = verify_parts::scan_outputs(y, false);
  EXPECT_EQ(scan.bad, 2u);
  EXPECT_EQ(scan.first, 700000u);
  EXPECT_EQ(scan.kind, verify_parts::BadKind::kNan);
}

}  // namespace
}  // namespace gpucheck::bench
