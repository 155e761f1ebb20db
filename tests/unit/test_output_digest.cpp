// The digest that lets a result bit for bit the same as one already checked skip the check.
#include "bench/output_digest.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace gpucheck::bench {
namespace {

std::vector<unsigned char> bytes_of(std::size_t n) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + 7) % 251);
  return v;
}

TEST(OutputDigest, TheSameBytesTheSameDigest) {
  const auto a = bytes_of(3u << 20), b = bytes_of(3u << 20);
  EXPECT_EQ(output_digest(a.data(), a.size()), output_digest(b.data(), b.size()));
}

TEST(OutputDigest, OneBitAnywhereChangesIt) {
  auto v = bytes_of((1u << 20) + 5);  // a tail of 5 bytes past the last whole word
  const std::uint64_t base = output_digest(v.data(), v.size());
  std::set<std::uint64_t> seen{base};
  for (std::size_t at : {std::size_t{0}, std::size_t{8} * 16384 - 1, std::size_t{8} * 16384,
                         v.size() / 2, v.size() - 6, v.size() - 1}) {
    for (int bit : {0, 7}) {
      v[at] ^= static_cast<unsigned char>(1u << bit);
      EXPECT_TRUE(seen.insert(output_digest(v.data(), v.size())).second)
          << "byte " << at << " bit " << bit;
      v[at] ^= static_cast<unsigned char>(1u << bit);
    }
  }
  EXPECT_EQ(output_digest(v.data(), v.size()), base);
}

TEST(OutputDigest, TheLengthCountsEvenForZeros) {
  const std::vector<unsigned char> zeros(4096 + 8, 0);
  EXPECT_NE(output_digest(zeros.data(), 4096), output_digest(zeros.data(), 4096 + 8));
  EXPECT_NE(output_digest(zeros.data(), 3), output_digest(zeros.data(), 4));
  EXPECT_EQ(output_digest(nullptr, 0), output_digest(zeros.data(), 0));
}

}  // namespace
}  // namespace gpucheck::bench
