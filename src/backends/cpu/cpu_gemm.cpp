// GEMM through the loaded BLAS's cblas_sgemm / cblas_dgemm (LP64 or ILP64).
#include "backends/cpu/cpu_gemm.h"

#include "backends/cpu/parallel.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpucheck::cpu {

namespace {

std::int64_t checked_dim(std::size_t v, const char* what) {
  if (v > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
    throw std::invalid_argument(std::string("gemm: ") + what + " exceeds the BLAS integer range");
  return static_cast<std::int64_t>(v);
}

// Validates the dimensions (the library checks its own integer range) and sets its threads;
// false when C is empty.
bool prepare(const BlasLibrary& blas, std::size_t m, std::size_t n, std::size_t k, int threads,
             GemmCall& g) {
  g.m = checked_dim(m, "m");
  g.n = checked_dim(n, "n");
  g.k = checked_dim(k, "k");
  g.lda = g.k;
  g.ldb = g.n;
  g.ldc = g.n;
  if (m == 0 || n == 0) return false;
  blas.set_threads(resolve_threads(threads));
  return true;
}

}  // namespace

void gemm_f32(const BlasLibrary& blas, std::size_t m, std::size_t n, std::size_t k, const float* a,
              const float* b, float* c, int threads) {
  GemmCall g;
  if (!prepare(blas, m, n, k, threads, g)) return;
  if (k == 0) {  // an empty sum: C = 0 (BLAS with beta = 0 is not relied on for this)
    std::fill_n(c, m * n, 0.0f);
    return;
  }
  blas.sgemm(g, a, b, c);
}

void gemm_f64(const BlasLibrary& blas, std::size_t m, std::size_t n, std::size_t k, const double* a,
              const double* b, double* c, int threads) {
  GemmCall g;
  if (!prepare(blas, m, n, k, threads, g)) return;
  if (k == 0) {
    std::fill_n(c, m * n, 0.0);
    return;
  }
  blas.dgemm(g, a, b, c);
}

}  // namespace gpucheck::cpu
