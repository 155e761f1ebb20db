// GEMM's inputs and float64 check (bench/ops/gemm.cpp); tuning trials, stress and the tests use
// them.
#pragma once

#include "bench/inputs.h"
#include "bench/verify.h"
#include "core/workload.h"

#include <cstdint>
#include <utility>

namespace gpucheck::bench {

struct GemmInputs {
  HostBuffer a;  // m×k row-major
  HostBuffer b;  // k×n row-major
};
GemmInputs make_gemm_inputs(DType dtype, const GemmShape& shape, std::uint64_t seed);

// A m×k, B k×n, C m×n, row-major. compute is the arithmetic really used (the record's
// compute_type): kF32 for f16/bf16 accumulating in f32, kTf32 for tf32 math on f32 data, kF16
// only for a GEMM that accumulates in half precision. Throws std::invalid_argument when the
// buffers do not match the shape.
Verification verify_gemm(const GemmShape& shape, const HostBuffer& a, const HostBuffer& b,
                         const HostBuffer& c, DType compute, const VerifyOptions& opt = {});

}  // namespace gpucheck::bench
