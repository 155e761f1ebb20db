// GEMM through cblas_sgemm / cblas_dgemm of the OpenBLAS the library links.
#include "backends/cpu/cpu_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "backends/cpu/parallel.h"

namespace gpucheck::cpu {

namespace {

blasint checked_dim(std::size_t v, const char* what) {
  if (v > static_cast<std::size_t>(std::numeric_limits<blasint>::max()))
    throw std::invalid_argument(std::string("gemm: ") + what + " exceeds the BLAS integer range");
  return static_cast<blasint>(v);
}

struct Dims {
  blasint m, n, k;
};

// Validates the dimensions and sets OpenBLAS's threads; false when C is empty.
bool prepare(std::size_t m, std::size_t n, std::size_t k, int threads, Dims& d) {
  d = {checked_dim(m, "m"), checked_dim(n, "n"), checked_dim(k, "k")};
  if (m == 0 || n == 0) return false;
  openblas_set_num_threads(resolve_threads(threads));
  return true;
}

}  // namespace

void gemm_f32(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
              int threads) {
  Dims d{};
  if (!prepare(m, n, k, threads, d)) return;
  if (k == 0) {  // an empty sum: C = 0 (BLAS with beta = 0 is not relied on for this)
    std::fill_n(c, m * n, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.m, d.n, d.k, 1.0f, a, d.k, b, d.n, 0.0f,
              c, d.n);
}

void gemm_f64(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b,
              double* c, int threads) {
  Dims d{};
  if (!prepare(m, n, k, threads, d)) return;
  if (k == 0) {
    std::fill_n(c, m * n, 0.0);
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.m, d.n, d.k, 1.0, a, d.k, b, d.n, 0.0, c,
              d.n);
}

std::string blas_description() {
  std::string s;
  if (const char* config = openblas_get_config()) s = config;
  if (const char* core = openblas_get_corename()) s += std::string(" (core: ") + core + ")";
  return s;
}

}  // namespace gpucheck::cpu
