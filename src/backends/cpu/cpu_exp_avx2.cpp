// AVX2 + FMA exp kernels (this file is compiled with -mavx2 -mfma; see cpu_exp_kernels.h for the
// rules). 2^n is applied as two normal factors 2^⌊n/2⌋·2^(n−⌊n/2⌋), so that overflow to +inf and
// underflow to denormals or +0 come out of one final rounding without special-case lanes.
#include <cstdint>

#include "backends/cpu/cpu_exp_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace gpucheck::cpu::detail {

namespace {

inline __m256 exp8(__m256 x) {
  // vminps/vmaxps return the second operand when either is NaN: keep x second so NaN survives.
  x = _mm256_min_ps(_mm256_set1_ps(kF32Hi), x);
  x = _mm256_max_ps(_mm256_set1_ps(kF32Lo), x);
  const __m256 magic = _mm256_set1_ps(kF32RoundMagic);
  const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(kF32Log2e), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  const __m256i k = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kF32C1), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kF32C2), r);
  __m256 p = _mm256_set1_ps(kF32P0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kF32P1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kF32P2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kF32P3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kF32P4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kF32P5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
  p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256i k1 = _mm256_srai_epi32(k, 1);
  const __m256i k2 = _mm256_sub_epi32(k, k1);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

inline __m256d exp4(__m256d x) {
  x = _mm256_min_pd(_mm256_set1_pd(kF64Hi), x);
  x = _mm256_max_pd(_mm256_set1_pd(kF64Lo), x);
  const __m256d magic = _mm256_set1_pd(kF64RoundMagic);
  const __m256d t = _mm256_fmadd_pd(x, _mm256_set1_pd(kF64Log2e), magic);
  const __m256d n = _mm256_sub_pd(t, magic);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kF64C1), x);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kF64C2), r);
  __m256d p = _mm256_set1_pd(kF64Taylor[0]);
  for (int j = 1; j < 11; ++j) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(kF64Taylor[j]));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  // AVX2 has no 64-bit arithmetic shift: offset k by 2048 so it is positive, halve logically.
  // kb = k + 2048, h = ⌊kb/2⌋ = k1 + 1024, kb − h = k2 + 1024; exponent field = k + 1023.
  const __m256i kb =
      _mm256_sub_epi64(_mm256_castpd_si256(t),
                       _mm256_set1_epi64x(static_cast<long long>(0x4338000000000000ull - 2048)));
  const __m256i h = _mm256_srli_epi64(kb, 1);
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256d s1 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(h, one), 52));
  const __m256d s2 =
      _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(_mm256_sub_epi64(kb, h), one), 52));
  return _mm256_mul_pd(_mm256_mul_pd(p, s1), s2);
}

// Lane mask for the first `count` 32-bit (or, with two lanes each, 64-bit) elements.
inline __m256i first_lanes32(std::size_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256i first_lanes64(std::size_t count) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(count)),
                            _mm256_setr_epi64x(0, 1, 2, 3));
}

// Elements before y + i reaches a 32-byte boundary, or n when streaming is off or impossible.
inline std::size_t head_length(const void* y, std::size_t elem, std::size_t n, bool stream) {
  const auto addr = reinterpret_cast<std::uintptr_t>(y);
  if (!stream || addr % elem != 0) return n;
  const std::size_t head = ((32 - addr % 32) % 32) / elem;
  return head < n ? head : n;
}

}  // namespace

void exp_f32_avx2(const float* x, float* y, std::size_t n, bool stream) {
  std::size_t i = 0;
  const std::size_t head = head_length(y, sizeof(float), n, stream);
  for (; i + 16 <= head; i += 16) {
    const __m256 a = exp8(_mm256_loadu_ps(x + i));
    const __m256 b = exp8(_mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(y + i, a);
    _mm256_storeu_ps(y + i + 8, b);
  }
  for (; i + 8 <= head; i += 8) _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
  if (i < head) {
    const __m256i m = first_lanes32(head - i);
    _mm256_maskstore_ps(y + i, m, exp8(_mm256_maskload_ps(x + i, m)));
    i = head;
  }
  if (i == n) return;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = exp8(_mm256_loadu_ps(x + i));
    const __m256 b = exp8(_mm256_loadu_ps(x + i + 8));
    _mm256_stream_ps(y + i, a);
    _mm256_stream_ps(y + i + 8, b);
  }
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = first_lanes32(n - i);
    _mm256_maskstore_ps(y + i, m, exp8(_mm256_maskload_ps(x + i, m)));
  }
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the caller syncs
}

void exp_f64_avx2(const double* x, double* y, std::size_t n, bool stream) {
  std::size_t i = 0;
  const std::size_t head = head_length(y, sizeof(double), n, stream);
  for (; i + 8 <= head; i += 8) {
    const __m256d a = exp4(_mm256_loadu_pd(x + i));
    const __m256d b = exp4(_mm256_loadu_pd(x + i + 4));
    _mm256_storeu_pd(y + i, a);
    _mm256_storeu_pd(y + i + 4, b);
  }
  for (; i + 4 <= head; i += 4) _mm256_storeu_pd(y + i, exp4(_mm256_loadu_pd(x + i)));
  if (i < head) {
    const __m256i m = first_lanes64(head - i);
    _mm256_maskstore_pd(y + i, m, exp4(_mm256_maskload_pd(x + i, m)));
    i = head;
  }
  if (i == n) return;
  for (; i + 8 <= n; i += 8) {
    const __m256d a = exp4(_mm256_loadu_pd(x + i));
    const __m256d b = exp4(_mm256_loadu_pd(x + i + 4));
    _mm256_stream_pd(y + i, a);
    _mm256_stream_pd(y + i + 4, b);
  }
  for (; i + 4 <= n; i += 4) _mm256_stream_pd(y + i, exp4(_mm256_loadu_pd(x + i)));
  if (i < n) {
    const __m256i m = first_lanes64(n - i);
    _mm256_maskstore_pd(y + i, m, exp4(_mm256_maskload_pd(x + i, m)));
  }
  _mm_sfence();
}

}  // namespace gpucheck::cpu::detail

#else  // not x86-64: never selected (isa_path_supported is false), defined so the library links.

namespace gpucheck::cpu::detail {
void exp_f32_avx2(const float*, float*, std::size_t, bool) {}
void exp_f64_avx2(const double*, double*, std::size_t, bool) {}
}  // namespace gpucheck::cpu::detail

#endif
