// The CPU's BLAS, opened at run time through a typed function table (as cuBLAS is), so that the
// binary needs no BLAS at load time: OpenBLAS, BLIS or MKL (mkl_rt), LP64 or ILP64, found by
// soname or named with --blas (GPUCHECK_BLAS_LIB). Signatures are the CBLAS standard's, declared
// here: no BLAS header is needed to build either.
#pragma once

#include "core/dynamic_library.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::cpu {

enum class BlasFamily { kOpenblas, kBlis, kMkl, kOther };
std::string_view to_string(BlasFamily family);

// The sonames tried, in order, when no path is given: threaded builds first (Fedora and RHEL
// name theirs libopenblasp / libblisp; Debian's libopenblas.so.0 is the pthread build), then
// MKL's single dynamic library, then OpenBLAS's ILP64 builds (64-bit integers).
const std::vector<std::string>& blas_search_names();

// One library that did not load or could not be used, and why.
struct BlasAttempt {
  std::string name;
  std::string error;
};

// C = A · op(B), row-major, alpha 1, beta 0: the only form gpucheck calls.
struct GemmCall {
  std::int64_t m = 0, n = 0, k = 0;
  bool transpose_b = false;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
};

class BlasLibrary {
 public:
  // The explicit path alone when GPUCHECK_BLAS_LIB is set, else blas_search_names() in order.
  // nullptr with *error set (every attempt's reason) when none can be used.
  static std::unique_ptr<BlasLibrary> open(const EnvMap& env, std::string* error,
                                           std::vector<BlasAttempt>* attempts = nullptr);
  // One library, by path or soname.
  static std::unique_ptr<BlasLibrary> open_one(const std::string& what, const std::string& source,
                                               std::string* error);

  const OpenedLibrary& library() const { return lib_; }
  BlasFamily family() const { return family_; }
  int int_bits() const { return int_bits_; }  // 32 (LP64) or 64 (ILP64)
  const std::string& version() const { return version_; }
  // OpenBLAS: the core its kernels are for ("SkylakeX"); BLIS: its sub-configuration
  // ("haswell"); MKL: its code path ("avx512"); empty when the library does not say.
  const std::string& kernel() const { return kernel_; }
  const std::string& config() const { return config_; }  // OpenBLAS's build configuration
  // "pthreads", "openmp", "sequential"; empty when the library does not say.
  const std::string& threading() const { return threading_; }
  bool dynamic_arch() const;  // OpenBLAS built with DYNAMIC_ARCH: OPENBLAS_CORETYPE applies

  // Throws std::invalid_argument when a dimension exceeds the library's integer range.
  void sgemm(const GemmCall& g, const float* a, const float* b, float* c) const;
  void dgemm(const GemmCall& g, const double* a, const double* b, double* c) const;
  // The library's process-wide thread count; a no-op for a library without that call.
  void set_threads(int threads) const;
  bool has_thread_control() const;

  // One line for records and logs: "OpenBLAS 0.3.21 (core: SkylakeX, pthreads)".
  std::string describe() const;
  // {"library", "path", "real_path", "source", "version", "kernel", "config", "threading",
  //  "int_bits", "description"}.
  nlohmann::json to_json() const;

 private:
  BlasLibrary() = default;
  bool resolve(std::string* error);
  void read_identity();

  template <class Int>
  struct Table {
    void (*sgemm)(int, int, int, Int, Int, Int, float, const float*, Int, const float*, Int, float,
                  float*, Int) = nullptr;
    void (*dgemm)(int, int, int, Int, Int, Int, double, const double*, Int, const double*, Int,
                  double, double*, Int) = nullptr;
  };
  template <class Int, class T, class Fn>
  void call(Fn fn, const GemmCall& g, const T* a, const T* b, T* c) const;

  OpenedLibrary lib_;
  BlasFamily family_ = BlasFamily::kOther;
  int int_bits_ = 32;
  std::string suffix_;  // "64_" for OpenBLAS's suffixed ILP64 symbols
  std::string version_, kernel_, config_, threading_;
  Table<std::int32_t> lp64_;
  Table<std::int64_t> ilp64_;
  void (*openblas_set_threads_)(int) = nullptr;
  void (*blis_set_threads32_)(std::int32_t) = nullptr;
  void (*blis_set_threads64_)(std::int64_t) = nullptr;
  void (*mkl_set_threads_)(int) = nullptr;
};

}  // namespace gpucheck::cpu
