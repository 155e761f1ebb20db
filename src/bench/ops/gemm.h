// GEMM's inputs and float64 check (bench/ops/gemm.cpp); tuning trials, stress and the tests use
// them.
#pragma once

#include "backends/device.h"
#include "bench/inputs.h"
#include "bench/verify.h"
#include "core/workload.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace gpucheck::bench {

struct GemmInputs {
  HostBuffer a;  // m×k row-major
  HostBuffer b;  // k×n row-major
  // Bᵀ (n×k row-major) where the dtype's device GEMM reads B K-major (gemm_b_k_major: fp8);
  // empty otherwise. The check reads b; the device gets device_b().
  HostBuffer b_k_major;
  const HostBuffer& device_b() const { return b_k_major.size() != 0 ? b_k_major : b; }
};
// fp8's elements are e4m3 values (normal draws rounded to nearest even, never zero or
// subnormal), so the float64 reference reads exactly what the device reads.
GemmInputs make_gemm_inputs(DType dtype, const GemmShape& shape, std::uint64_t seed);
// fp8 GEMM's M, N and K are multiples of this (cuBLASLt's FP8 kernels: 16-byte-aligned rows).
inline constexpr std::uint64_t kFp8GemmMultiple = 16;

// The poisoned m×n result buffer of the dtype's GEMM (gemm_output_dtype: bf16 for fp8).
HostBuffer make_gemm_output(DType dtype, const GemmShape& shape);

// A m×k, B k×n, C m×n, row-major (C's dtype may differ from A's and B's: fp8 → bf16). compute
// is the arithmetic really used (the record's compute_type): kF32 for f16/bf16/fp8 accumulating
// in f32, kTf32 for tf32 math on f32 data, kF16
// only for a GEMM that accumulates in half precision. Throws std::invalid_argument when the
// buffers do not match the shape.
Verification verify_gemm(const GemmShape& shape, const HostBuffer& a, const HostBuffer& b,
                         const HostBuffer& c, DType compute, const VerifyOptions& opt = {});

// A GEMM of `dtype` on `device`, for those that run one outside a bench cell (the tuner's trial,
// stress): why the device cannot (NCHW is no matter to a GEMM), the arithmetic the check assumes
// (the device's answer, else default_compute), and the impl and compute_type a record names.
std::optional<std::string> gemm_unsupported(const Device& device, DType dtype);
DType gemm_check_compute(const Device& device, DType dtype);
std::string gemm_impl(const Device& device, DType dtype);
std::string gemm_compute_type(const Device& device, DType dtype);

}  // namespace gpucheck::bench
