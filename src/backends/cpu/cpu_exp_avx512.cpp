// AVX-512F exp kernels (this file is compiled with -mavx512f; see cpu_exp_kernels.h for the rules).
// 2^n is applied with vscalefps/pd, which overflows to +inf and underflows to denormals or +0
// with a single rounding, so no special-case lanes are needed.
#include <cstdint>

#include "backends/cpu/cpu_exp_kernels.h"

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics start from `__m512 __Y = __Y;` (_mm512_undefined_ps), which its
// -Wmaybe-uninitialized reports at every inlined use (a false positive: GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace gpucheck::cpu::detail {

namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline __m512 exp16(__m512 x) {
  // vminps/vmaxps return the second operand when either is NaN: keep x second so NaN survives.
  x = _mm512_min_ps(_mm512_set1_ps(kF32Hi), x);
  x = _mm512_max_ps(_mm512_set1_ps(kF32Lo), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kF32Log2e)), kRound);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kF32C1), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kF32C2), r);
  __m512 p = _mm512_set1_ps(kF32P0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kF32P1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kF32P2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kF32P3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kF32P4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kF32P5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

inline __m512d exp8(__m512d x) {
  x = _mm512_min_pd(_mm512_set1_pd(kF64Hi), x);
  x = _mm512_max_pd(_mm512_set1_pd(kF64Lo), x);
  const __m512d n = _mm512_roundscale_pd(_mm512_mul_pd(x, _mm512_set1_pd(kF64Log2e)), kRound);
  __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(kF64C1), x);
  r = _mm512_fnmadd_pd(n, _mm512_set1_pd(kF64C2), r);
  __m512d p = _mm512_set1_pd(kF64Taylor[0]);
  for (int j = 1; j < 11; ++j) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(kF64Taylor[j]));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
  return _mm512_scalef_pd(p, n);
}

// Elements before y + i reaches a 64-byte boundary, or n when streaming is off or impossible.
inline std::size_t head_length(const void* y, std::size_t elem, std::size_t n, bool stream) {
  const auto addr = reinterpret_cast<std::uintptr_t>(y);
  if (!stream || addr % elem != 0) return n;
  const std::size_t head = ((64 - addr % 64) % 64) / elem;
  return head < n ? head : n;
}

}  // namespace

void exp_f32_avx512(const float* x, float* y, std::size_t n, bool stream) {
  std::size_t i = 0;
  // Regular stores up to the first aligned line (all of it when not streaming), then streaming.
  const std::size_t head = head_length(y, sizeof(float), n, stream);
  for (; i + 32 <= head; i += 32) {
    const __m512 a = exp16(_mm512_loadu_ps(x + i));
    const __m512 b = exp16(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(y + i, a);
    _mm512_storeu_ps(y + i + 16, b);
  }
  for (; i + 16 <= head; i += 16) _mm512_storeu_ps(y + i, exp16(_mm512_loadu_ps(x + i)));
  if (i < head) {
    const __mmask16 m = static_cast<__mmask16>((1u << (head - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, exp16(_mm512_maskz_loadu_ps(m, x + i)));
    i = head;
  }
  if (i == n) return;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = exp16(_mm512_loadu_ps(x + i));
    const __m512 b = exp16(_mm512_loadu_ps(x + i + 16));
    _mm512_stream_ps(y + i, a);
    _mm512_stream_ps(y + i + 16, b);
  }
  for (; i + 16 <= n; i += 16) _mm512_stream_ps(y + i, exp16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, exp16(_mm512_maskz_loadu_ps(m, x + i)));
  }
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the caller syncs
}

void exp_f64_avx512(const double* x, double* y, std::size_t n, bool stream) {
  std::size_t i = 0;
  const std::size_t head = head_length(y, sizeof(double), n, stream);
  for (; i + 16 <= head; i += 16) {
    const __m512d a = exp8(_mm512_loadu_pd(x + i));
    const __m512d b = exp8(_mm512_loadu_pd(x + i + 8));
    _mm512_storeu_pd(y + i, a);
    _mm512_storeu_pd(y + i + 8, b);
  }
  for (; i + 8 <= head; i += 8) _mm512_storeu_pd(y + i, exp8(_mm512_loadu_pd(x + i)));
  if (i < head) {
    const __mmask8 m = static_cast<__mmask8>((1u << (head - i)) - 1u);
    _mm512_mask_storeu_pd(y + i, m, exp8(_mm512_maskz_loadu_pd(m, x + i)));
    i = head;
  }
  if (i == n) return;
  for (; i + 16 <= n; i += 16) {
    const __m512d a = exp8(_mm512_loadu_pd(x + i));
    const __m512d b = exp8(_mm512_loadu_pd(x + i + 8));
    _mm512_stream_pd(y + i, a);
    _mm512_stream_pd(y + i + 8, b);
  }
  for (; i + 8 <= n; i += 8) _mm512_stream_pd(y + i, exp8(_mm512_loadu_pd(x + i)));
  if (i < n) {
    const __mmask8 m = static_cast<__mmask8>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_pd(y + i, m, exp8(_mm512_maskz_loadu_pd(m, x + i)));
  }
  _mm_sfence();
}

}  // namespace gpucheck::cpu::detail

#else  // not x86-64: never selected (isa_path_supported is false), defined so the library links.

namespace gpucheck::cpu::detail {
void exp_f32_avx512(const float*, float*, std::size_t, bool) {}
void exp_f64_avx512(const double*, double*, std::size_t, bool) {}
}  // namespace gpucheck::cpu::detail

#endif
