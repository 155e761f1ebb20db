// The bench plans a profile needs: each bench requirement's cell on each device it names, the
// CPU first with the cells whose speedup is asked for.
#pragma once

#include "bench/cell.h"
#include "qualify/judge.h"
#include "qualify/profile.h"

#include <optional>
#include <vector>

namespace gpucheck::qualify {

std::vector<bench::BenchPlan> plan_benches(const Profile& profile,
                                           const std::vector<DeviceFacts>& devices);

// Whether a requirement of the profile is judged on bench records: a bench requirement, or one
// on a group op's records.
bool needs_bench(const Profile& profile);

// The group child's plan of the requirements on group ops over the CUDA devices here (in their
// order): a peer copy's cells per pair, a collective's over them all; nullopt when there is none
// or fewer than two CUDA devices. network_only: the collectives of transport = "net" alone, in a
// child of their own (NCCL reads its transports once per process).
std::optional<bench::BenchPlan> plan_group_bench(const Profile& profile,
                                                 const std::vector<DeviceFacts>& devices,
                                                 bool network_only = false);

}  // namespace gpucheck::qualify
