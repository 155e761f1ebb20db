// What the group plan's tests see of p2p's unit (bench/ops/p2p.cpp).
#pragma once

#include <cstdint>

namespace gpucheck::bench {

// Bytes of a P2P latency copy (p2pBandwidthLatencyTest copies one int).
inline constexpr std::uint64_t kP2pLatencyBytes = 4;

}  // namespace gpucheck::bench
