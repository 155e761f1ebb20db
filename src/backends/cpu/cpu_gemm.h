// Dense matrix multiply through the run-time-loaded BLAS, with its thread count set per call.
#pragma once

#include "backends/cpu/blas_library.h"

#include <cstddef>

namespace gpucheck::cpu {

// C[m×n] = A[m×k] · B[k×n], all row-major and densely packed (leading dimensions k, n, n).
// threads <= 0 means all hardware threads. The BLAS's thread count is process-wide, so calls must
// not run concurrently. Throws std::invalid_argument when a dimension exceeds BLAS's int range.
void gemm_f32(const BlasLibrary& blas, std::size_t m, std::size_t n, std::size_t k, const float* a,
              const float* b, float* c, int threads);
void gemm_f64(const BlasLibrary& blas, std::size_t m, std::size_t n, std::size_t k, const double* a,
              const double* b, double* c, int threads);

}  // namespace gpucheck::cpu
