// Portable exp kernels (the kScalar path): baseline ISA only. This file is compiled with
// -fno-trapping-math, without which GCC will not if-convert the NaN-preserving clamps, and so
// cannot vectorise the loops with the baseline's SSE2; FP exception flags are not part of the API.
#include <bit>
#include <cstdint>

#include "backends/cpu/cpu_exp_kernels.h"

namespace gpucheck::cpu::detail {

// The scalar kernels compute 2^n as two factors 2^⌊n/2⌋·2^(n−⌊n/2⌋), each a normal number, so that
// results in the overflow and denormal ranges come out of one final rounding. Integer work is
// unsigned so that the garbage n of a NaN input is defined behaviour (the NaN survives anyway).
void exp_f32_scalar(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float v = x[i];
    v = v < kF32Lo ? kF32Lo : v;  // comparisons are false for NaN, which passes through
    v = v > kF32Hi ? kF32Hi : v;
    const float t = v * kF32Log2e + kF32RoundMagic;
    const float nf = t - kF32RoundMagic;
    const auto k = static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(t) - 0x4B400000u);
    float r = v - nf * kF32C1;
    r = r - nf * kF32C2;
    float p = kF32P0;
    p = p * r + kF32P1;
    p = p * r + kF32P2;
    p = p * r + kF32P3;
    p = p * r + kF32P4;
    p = p * r + kF32P5;
    p = p * (r * r) + r + 1.0f;
    const std::int32_t k1 = k >> 1;
    const std::int32_t k2 = k - k1;
    const float s1 = std::bit_cast<float>(static_cast<std::uint32_t>(k1 + 127) << 23);
    const float s2 = std::bit_cast<float>(static_cast<std::uint32_t>(k2 + 127) << 23);
    y[i] = p * s1 * s2;
  }
}

void exp_f64_scalar(const double* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    double v = x[i];
    v = v < kF64Lo ? kF64Lo : v;
    v = v > kF64Hi ? kF64Hi : v;
    const double t = v * kF64Log2e + kF64RoundMagic;
    const double nf = t - kF64RoundMagic;
    const auto k = static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(t) -
                                             std::bit_cast<std::uint64_t>(kF64RoundMagic));
    double r = v - nf * kF64C1;
    r = r - nf * kF64C2;
    double p = kF64Taylor[0];
    for (int j = 1; j < 11; ++j) p = p * r + kF64Taylor[j];
    p = p * r + 1.0;
    p = p * r + 1.0;
    const std::int64_t k1 = k >> 1;
    const std::int64_t k2 = k - k1;
    const double s1 = std::bit_cast<double>(static_cast<std::uint64_t>(k1 + 1023) << 52);
    const double s2 = std::bit_cast<double>(static_cast<std::uint64_t>(k2 + 1023) << 52);
    y[i] = p * s1 * s2;
  }
}

}  // namespace gpucheck::cpu::detail
