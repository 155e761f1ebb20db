// Speedups over the CPU: each accelerator record against the CPU record of the same workload.
#pragma once

#include <nlohmann/json.hpp>

namespace gpucheck::report {

// Adds speedup_vs_cpu and baseline_dtype to every ok record of a non-CPU device whose workload
// (op, shape, layout) the CPU also ran ok: in the same dtype, else f32. Records without such a
// baseline keep no speedup key (absent, never 0).
void add_speedups(nlohmann::json& results);

}  // namespace gpucheck::report
