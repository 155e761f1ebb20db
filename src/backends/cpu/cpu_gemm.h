// Dense matrix multiply through OpenBLAS (cblas), with its thread count set explicitly per call.
#pragma once

#include <cstddef>
#include <string>

namespace gpucheck::cpu {

// C[m×n] = A[m×k] · B[k×n], all row-major and densely packed (leading dimensions k, n, n).
// threads <= 0 means all hardware threads. OpenBLAS's thread count is process-wide, so calls must
// not run concurrently. Throws std::invalid_argument when a dimension exceeds BLAS's int range.
void gemm_f32(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
              int threads);
void gemm_f64(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b,
              double* c, int threads);

// What the loaded OpenBLAS says of itself: its build configuration and the kernel core it chose,
// e.g. "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64 (core:
// Cooperlake)" (DYNAMIC_ARCH builds pick the core at load time; Zen 4 gets Cooperlake's kernels).
std::string blas_description();

}  // namespace gpucheck::cpu
