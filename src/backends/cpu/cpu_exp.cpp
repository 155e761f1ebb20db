// exp dispatch: ISA path selection, store mode, and the partition over threads.
#include "backends/cpu/cpu_exp.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "backends/cpu/cpu_cache.h"
#include "backends/cpu/cpu_exp_kernels.h"
#include "backends/cpu/parallel.h"

namespace gpucheck::cpu {

namespace {

// Below this many elements a single thread beats waking the pool.
constexpr std::size_t kMinParallelElements = std::size_t{1} << 14;
// Threads split the array in blocks of 1 KiB, so that ranges start on cache-line boundaries.
constexpr std::size_t kBlockBytes = 1024;

template <class T, class Kernel, class ScalarKernel>
void run_exp(const T* x, T* y, std::size_t n, int threads, IsaPath path, StoreMode stores,
             Kernel avx2, Kernel avx512, ScalarKernel scalar) {
  if (!isa_path_supported(path))
    throw std::invalid_argument("exp: ISA path " + std::string(to_string(path)) +
                                " is not supported by this CPU");
  if (n == 0) return;
  const bool stream = stores == StoreMode::kStreaming ||
                      (stores == StoreMode::kAuto && 2 * n * sizeof(T) >= last_level_cache_bytes());
  constexpr std::size_t kBlock = kBlockBytes / sizeof(T);
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  const int t = n < kMinParallelElements ? 1 : threads;
  parallel_for(blocks, t, [&](std::size_t b, std::size_t e) {
    const std::size_t begin = b * kBlock;
    const std::size_t count = std::min(e * kBlock, n) - begin;
    switch (path) {
      case IsaPath::kScalar:
        scalar(x + begin, y + begin, count);
        break;
      case IsaPath::kAvx2Fma:
        avx2(x + begin, y + begin, count, stream);
        break;
      case IsaPath::kAvx512:
        avx512(x + begin, y + begin, count, stream);
        break;
    }
  });
}

}  // namespace

void exp_f32(const float* x, float* y, std::size_t n, int threads, IsaPath path, StoreMode stores) {
  run_exp(x, y, n, threads, path, stores, &detail::exp_f32_avx2, &detail::exp_f32_avx512,
          &detail::exp_f32_scalar);
}

void exp_f64(const double* x, double* y, std::size_t n, int threads, IsaPath path,
             StoreMode stores) {
  run_exp(x, y, n, threads, path, stores, &detail::exp_f64_avx2, &detail::exp_f64_avx512,
          &detail::exp_f64_scalar);
}

void exp_f32(const float* x, float* y, std::size_t n, int threads) {
  exp_f32(x, y, n, threads, best_isa_path());
}

void exp_f64(const double* x, double* y, std::size_t n, int threads) {
  exp_f64(x, y, n, threads, best_isa_path());
}

}  // namespace gpucheck::cpu
