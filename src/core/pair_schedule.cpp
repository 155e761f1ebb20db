// The circle method: device 0 stays put, the others turn one place each round, and the two
// halves of the circle face each other.
#include "core/pair_schedule.h"

#include <algorithm>

namespace gpucheck {

std::vector<std::vector<DevicePair>> disjoint_pair_rounds(std::size_t n) {
  std::vector<std::vector<DevicePair>> rounds;
  if (n < 2) return rounds;
  const std::size_t m = n + n % 2;  // an odd count gets a resting place, m - 1
  std::vector<std::size_t> circle(m);
  for (std::size_t i = 0; i < m; ++i) circle[i] = i;
  for (std::size_t r = 0; r + 1 < m; ++r) {
    std::vector<DevicePair> round;
    for (std::size_t i = 0; i < m / 2; ++i) {
      std::size_t a = circle[i], b = circle[m - 1 - i];
      if (a >= n || b >= n) continue;  // the device facing the resting place rests
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    std::rotate(circle.begin() + 1, circle.end() - 1, circle.end());
  }
  return rounds;
}

std::vector<std::vector<DevicePair>> directed_pair_rounds(std::size_t n) {
  std::vector<std::vector<DevicePair>> out;
  for (const auto& round : disjoint_pair_rounds(n)) {
    out.push_back(round);
    std::vector<DevicePair> back;
    for (const auto& [a, b] : round) back.emplace_back(b, a);
    out.push_back(std::move(back));
  }
  return out;
}

}  // namespace gpucheck
