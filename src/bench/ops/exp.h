// exp's inputs and float64 check (bench/ops/exp.cpp); other units and the tests use them too.
#pragma once

#include "bench/inputs.h"
#include "bench/verify.h"
#include "core/workload.h"

#include <cstdint>
#include <utility>

namespace gpucheck::bench {

// The open interval exp inputs come from: (−10, 10), or (−8, 8) for f16 and bf16 so that every
// result is finite and normal.
std::pair<double, double> exp_input_range(DType dtype);

HostBuffer make_exp_input(DType dtype, const ExpShape& shape, std::uint64_t seed);

// exp's tolerance: f64 1e-14, f32 and tf32 2e-6 (fast hardware exp allowed), f16 2e-3,
// bf16 1.6e-2.
double exp_tolerance(DType dtype);
Verification verify_exp(const HostBuffer& x, const HostBuffer& y, const VerifyOptions& opt = {});

}  // namespace gpucheck::bench
