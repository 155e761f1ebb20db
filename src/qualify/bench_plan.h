// The bench plans a profile needs: each bench requirement's cell on each device it names, the
// CPU first with the cells whose speedup is asked for.
#pragma once

#include "bench/cell.h"
#include "qualify/judge.h"
#include "qualify/profile.h"

#include <vector>

namespace gpucheck::qualify {

std::vector<bench::BenchPlan> plan_benches(const Profile& profile,
                                           const std::vector<DeviceFacts>& devices);

}  // namespace gpucheck::qualify
