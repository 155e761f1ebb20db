// The tuner's measurement (backends/device.h's GemmTrialFn) made from the bench's own parts:
// the seeded inputs, poisoned outputs, device time and verify_gemm, so a tuned candidate is
// checked exactly as a GEMM record is.
#pragma once

#include "backends/device.h"

#include <cstdint>

namespace gpucheck::bench {

// Inputs are made once per shape and kept; device buffers are made for each trial, since a
// candidate that fails may leave the device on a fresh context.
GemmTrialFn make_gemm_trial(Device& device, DType dtype, std::uint64_t seed);

}  // namespace gpucheck::bench
