// Elementwise exp on host arrays: vectorised (scalar / AVX2+FMA / AVX-512) and multithreaded.
// Accuracy (max relative error vs exact exp of the input, measured): f32 8.1e-8, f64 4e-16;
// x above the overflow bound gives +inf, far below it +0 (denormals in between), NaN gives NaN.
#pragma once

#include <cstddef>

#include "backends/cpu/cpu_isa.h"

namespace gpucheck::cpu {

// How results are written. Streaming (non-temporal) stores skip the read-for-ownership of the
// output's cache lines, so an array far beyond the caches costs 8 bytes an f32 element instead of
// 12 (measured on a 2-core Zen 4 guest: +15-30% at 2^23-2^26 elements); they lose when the output
// would have stayed in cache (-30% at 2^20). kAuto streams when input + output are at least the
// size of the last-level cache. The scalar path always uses regular stores.
enum class StoreMode { kAuto, kRegular, kStreaming };

// y[i] = exp(x[i]) for i < n. x and y are the same array or do not overlap. threads <= 0 means
// all hardware threads; small arrays run on the calling thread alone. Throws
// std::invalid_argument when `path` is not supported by this CPU (see isa_path_supported).
void exp_f32(const float* x, float* y, std::size_t n, int threads, IsaPath path,
             StoreMode stores = StoreMode::kAuto);
void exp_f64(const double* x, double* y, std::size_t n, int threads, IsaPath path,
             StoreMode stores = StoreMode::kAuto);

// The same on best_isa_path().
void exp_f32(const float* x, float* y, std::size_t n, int threads);
void exp_f64(const double* x, double* y, std::size_t n, int threads);

}  // namespace gpucheck::cpu
