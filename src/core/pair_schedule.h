// Which device pairs may be measured at the same time: a round-robin tournament of the devices,
// so that every pair meets once and no device is in two pairs of one round.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace gpucheck {

using DevicePair = std::pair<std::size_t, std::size_t>;  // (first, second), first < second

// The unordered pairs of devices 0 … n-1 in rounds (the circle method): every pair exactly once,
// no device twice in a round. n - 1 rounds of n/2 pairs for an even n; n rounds of (n-1)/2 for
// an odd n (one device rests each round). No rounds for n < 2.
std::vector<std::vector<DevicePair>> disjoint_pair_rounds(std::size_t n);

// The ordered pairs (src, dst) in rounds whose copies share no source and no destination: each
// round of disjoint_pair_rounds twice, first → second, then second → first.
std::vector<std::vector<DevicePair>> directed_pair_rounds(std::size_t n);

}  // namespace gpucheck
