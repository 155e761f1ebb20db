// The bench engine of a group of devices (one child, several GPUs): peer copies, their latency
// and all-reduce. As engine.cpp does for one device, it makes the seeded patterns, poisons what
// is received, times through the group's primitives, verifies every received buffer and turns
// each cell into records.
#pragma once

#include "backends/peer_group.h"
#include "bench/cell.h"
#include "bench/engine.h"

#include <optional>

namespace gpucheck::bench {

// Copies per timed repetition of a peer copy (nvbandwidth's loop count) and small copies per
// repetition of a latency cell (p2pBandwidthLatencyTest's); all-reduce calls per repetition
// (nccl-tests' -n).
inline constexpr int kPeerCopiesPerRep = 16;
inline constexpr int kLatencyCopiesPerRep = 100;
inline constexpr int kAllreducesPerRep = 20;

// Runs every cell; a cell's failure becomes a "failed" record and the next cell runs. A lost
// device ends the run (DeviceLostError is rethrown after its record).
void run_group_plan(const BenchPlan& plan, PeerGroup& group, const EngineCallbacks& callbacks,
                    std::optional<PlantedError> plant = std::nullopt);

}  // namespace gpucheck::bench
