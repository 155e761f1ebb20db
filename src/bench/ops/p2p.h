// What the group engine, latency's unit and the tests use of p2p's unit (bench/ops/p2p.cpp).
#pragma once

#include "bench/cell.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpucheck::bench {

// A fan's name in a record's shape.direction: "p2p" for a pair, else "all_to_one", ...
std::string_view to_string(P2pFan f);
std::optional<P2pFan> p2p_fan_from_string(std::string_view text);

// Bytes of a P2P latency copy (p2pBandwidthLatencyTest copies one int).
inline constexpr std::uint64_t kP2pLatencyBytes = 4;
// Small copies per timed repetition of a P2P latency cell (p2pBandwidthLatencyTest's).
inline constexpr int kLatencyCopiesPerRep = 100;

}  // namespace gpucheck::bench
