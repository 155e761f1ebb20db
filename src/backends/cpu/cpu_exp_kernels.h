// Single-threaded exp kernels of each ISA path and the constants they share. Internal to the CPU
// backend: the ISA-specific files are compiled with their own -m flags, so they see only this
// header and intrinsics, never a C++ library template (an inline template instantiated there could
// be the copy the linker keeps for everyone, and would carry AVX-512 into the scalar path).
#pragma once

#include <cstddef>

namespace gpucheck::cpu::detail {

// f32: n = round(x·log2 e), r = x − n·ln 2 (Cody–Waite: C1 + C2 = ln 2 with C1 exact in 9 bits,
// so n·C1 is exact without FMA), exp(r) by Cephes' degree-7 polynomial on |r| ≤ ln2/2, then
// scaled by 2^n. Inputs are clamped first (NaN-preserving) so that n stays small: exp(100) is
// already +inf and exp(-110) is +0 in f32.
inline constexpr float kF32Log2e = 1.44269504088896341f;
inline constexpr float kF32C1 = 0.693359375f;
inline constexpr float kF32C2 = -2.12194440e-4f;
inline constexpr float kF32P0 = 1.9875691500e-4f;
inline constexpr float kF32P1 = 1.3981999507e-3f;
inline constexpr float kF32P2 = 8.3334519073e-3f;
inline constexpr float kF32P3 = 4.1665795894e-2f;
inline constexpr float kF32P4 = 1.6666665459e-1f;
inline constexpr float kF32P5 = 5.0000001201e-1f;
inline constexpr float kF32Lo = -110.0f;
inline constexpr float kF32Hi = 100.0f;

// f64: the same reduction (Cephes' C1, C2) and the Taylor polynomial of degree 12 (truncation
// error below 2e-16 relative on |r| ≤ ln2/2). exp(720) is +inf and exp(-760) is +0 in f64.
inline constexpr double kF64Log2e = 1.4426950408889634074;
inline constexpr double kF64C1 = 6.93145751953125e-1;
inline constexpr double kF64C2 = 1.42860682030941723212e-6;
inline constexpr double kF64Lo = -760.0;
inline constexpr double kF64Hi = 720.0;
// 1/k! for k = 12 down to 2.
inline constexpr double kF64Taylor[11] = {2.08767569878680989792e-9,
                                          2.50521083854417187751e-8,
                                          2.75573192239858906526e-7,
                                          2.75573192239858906526e-6,
                                          2.48015873015873015873e-5,
                                          1.98412698412698412698e-4,
                                          1.38888888888888888889e-3,
                                          8.33333333333333333333e-3,
                                          4.16666666666666666667e-2,
                                          1.66666666666666666667e-1,
                                          5.0e-1};

// Round-to-nearest by adding 1.5·2^23 (f32) or 1.5·2^52 (f64); the integer is then the low bits.
inline constexpr float kF32RoundMagic = 12582912.0f;
inline constexpr double kF64RoundMagic = 6755399441055744.0;

// Each kernel handles any n and any alignment. `stream` asks for non-temporal stores where the
// output is aligned for them; kernels that stream end with a store fence.
void exp_f32_scalar(const float* x, float* y, std::size_t n);
void exp_f64_scalar(const double* x, double* y, std::size_t n);
void exp_f32_avx2(const float* x, float* y, std::size_t n, bool stream);
void exp_f64_avx2(const double* x, double* y, std::size_t n, bool stream);
void exp_f32_avx512(const float* x, float* y, std::size_t n, bool stream);
void exp_f64_avx512(const double* x, double* y, std::size_t n, bool stream);

}  // namespace gpucheck::cpu::detail
