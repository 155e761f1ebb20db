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

// Copies per timed repetition of a peer copy (nvbandwidth's loop count). The latency cell's and
// the all-reduce's repetitions are their units'.
inline constexpr int kPeerCopiesPerRep = 16;
// A copy staged through the host takes ~10× a peer copy's time: fewer make a repetition.
inline constexpr int kStagedCopiesPerRep = 2;

// The plan's cells in the batches they run in, in run order: copies (and latency) of one kind
// between pairs that share no GPU run together, as the rounds of a round-robin tournament
// (core/pair_schedule.h), unless plan.serial; every batch over peer paths first, then those
// staged through the host (peer access changes once per pair), the all-reduce cells last.
std::vector<std::vector<std::size_t>> group_batches(const BenchPlan& plan);

// Runs every cell, batch by batch (group_batches); each batch's repetitions end once every
// cell's median is stable to 1 % (or as --reps, --min-time and --max-time say). Buffers and
// patterns are kept across cells. A batch's failure becomes a "failed" record for each of its
// cells and the next batch runs. A lost device ends the run (DeviceLostError is rethrown after
// the records). With callbacks.tuning_log, each batch's set-up, timed and verification seconds.
void run_group_plan(const BenchPlan& plan, PeerGroup& group, const EngineCallbacks& callbacks,
                    std::optional<PlantedError> plant = std::nullopt);

}  // namespace gpucheck::bench
