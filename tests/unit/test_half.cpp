// f16 / bf16 / tf32 / e4m3 conversions: every bit pattern round-trips, every rounding boundary of
// every value rounds to nearest even, and known values land where IEEE 754 (for e4m3, the OCP
// FP8 format with CUDA's saturating conversion) says.
#include "core/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace {

using namespace gpucheck;

// An independent reference: frexp / nearbyint in double (the default rounding mode is nearest
// even), for a format with `man` explicit mantissa bits and exponent bias `bias`; finite inputs.
std::uint16_t reference_round(double v, int man, int bias, int exp_max) {
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = f·2^e, f ∈ [0.5, 1): a ∈ [2^(e−1), 2^e)
  int unbiased = e - 1;
  if (unbiased < 1 - bias) unbiased = 1 - bias;  // subnormal range: fixed spacing
  const double q = std::nearbyint(std::ldexp(a, man - unbiased));
  // q ∈ [0, 2^(man+1)]; its encoding adds into the exponent field as in half.h.
  const long base = unbiased + bias - 1;
  long bits = (base < 0 ? 0 : (base << man)) + static_cast<long>(q);
  if (bits >= (static_cast<long>(exp_max) << man)) bits = static_cast<long>(exp_max) << man;
  return static_cast<std::uint16_t>(sign | bits);
}

TEST(Half, F16RoundTripsEveryBitPattern) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = f16_to_float(bits);
    ASSERT_EQ(float_to_f16(f), bits) << std::hex << h;
    // (float → double sets the quiet bit of a signalling NaN, so NaNs only through float.)
    if (!std::isnan(f)) {
      ASSERT_EQ(double_to_f16(f16_to_double(bits)), bits) << std::hex << h;
    }
    ASSERT_EQ(std::isnan(f), f16_is_nan(bits)) << std::hex << h;
    ASSERT_EQ(std::isfinite(f), f16_is_finite(bits)) << std::hex << h;
  }
}

TEST(Half, Bf16RoundTripsEveryBitPattern) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = bf16_to_float(bits);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f), h << 16);
    ASSERT_EQ(float_to_bf16(f), bits) << std::hex << h;
    if (!std::isnan(f)) {
      ASSERT_EQ(double_to_bf16(bf16_to_double(bits)), bits) << std::hex << h;
    }
    ASSERT_EQ(std::isnan(f), bf16_is_nan(bits)) << std::hex << h;
    ASSERT_EQ(std::isfinite(f), bf16_is_finite(bits)) << std::hex << h;
  }
}

// Between every pair of adjacent finite values: the midpoint goes to the even one, the doubles
// and floats just beside it to the nearer one. Also checks the independent reference.
template <class Narrow, class NarrowD, class Widen>
void check_all_boundaries(Narrow narrow_f, NarrowD narrow_d, Widen widen, std::uint16_t max_finite,
                          int man, int bias, int exp_max) {
  for (std::uint32_t h = 0; h < max_finite; ++h) {
    for (const std::uint32_t sign : {0u, 0x8000u}) {
      const auto lo = static_cast<std::uint16_t>(h | sign);
      const auto hi = static_cast<std::uint16_t>((h + 1) | sign);
      const double a = widen(lo), b = widen(hi);
      const double mid = (a + b) / 2;  // exact in double and in float (one more bit)
      const std::uint16_t even = (h & 1u) == 0 ? lo : hi;
      ASSERT_EQ(narrow_d(mid), even) << std::hex << h;
      ASSERT_EQ(narrow_f(static_cast<float>(mid)), even) << std::hex << h;
      const double toward_a = std::nextafter(mid, a), toward_b = std::nextafter(mid, b);
      ASSERT_EQ(narrow_d(toward_a), lo) << std::hex << h;
      ASSERT_EQ(narrow_d(toward_b), hi) << std::hex << h;
      ASSERT_EQ(narrow_f(std::nextafter(static_cast<float>(mid), static_cast<float>(a))), lo);
      ASSERT_EQ(narrow_f(std::nextafter(static_cast<float>(mid), static_cast<float>(b))), hi);
      ASSERT_EQ(reference_round(mid, man, bias, exp_max), even) << std::hex << h;
      ASSERT_EQ(reference_round(toward_b, man, bias, exp_max), hi) << std::hex << h;
    }
  }
}

TEST(Half, F16RoundsEveryBoundaryToNearestEven) {
  check_all_boundaries(float_to_f16, double_to_f16, f16_to_double, kF16Max, 10, 15, 31);
}

TEST(Half, Bf16RoundsEveryBoundaryToNearestEven) {
  check_all_boundaries(float_to_bf16, double_to_bf16, bf16_to_double, 0x7F7F, 7, 127, 255);
}

TEST(Half, F16KnownValues) {
  EXPECT_EQ(float_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_f16(0.5f), 0x3800);
  EXPECT_EQ(float_to_f16(0.1f), 0x2E66);
  EXPECT_EQ(double_to_f16(1.0 / 3.0), 0x3555);
  EXPECT_EQ(double_to_f16(3.14159265358979), 0x4248);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_f16(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_f16(65520.0f), 0x7C00);  // halfway to 65536 rounds to even: overflow
  EXPECT_EQ(float_to_f16(1e6f), 0x7C00);
  EXPECT_EQ(float_to_f16(-1e6f), 0xFC00);
  EXPECT_EQ(float_to_f16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_f16(0x1p-14f), 0x0400);    // smallest normal
  EXPECT_EQ(float_to_f16(0x1p-24f), 0x0001);    // smallest subnormal
  EXPECT_EQ(float_to_f16(0x1p-25f), 0x0000);    // tie to even: zero
  EXPECT_EQ(float_to_f16(0x1.8p-25f), 0x0001);  // above the tie
  EXPECT_EQ(float_to_f16(0x1.8p-24f), 0x0002);  // tie between 1 and 2 ulps
  EXPECT_EQ(double_to_f16(0x1p-30), 0x0000);
  EXPECT_EQ(float_to_f16(1.0f + 0x1p-11f), 0x3C00);      // tie, even below
  EXPECT_EQ(float_to_f16(1.0f + 3 * 0x1p-11f), 0x3C02);  // tie, even above
  EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_f16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_FLOAT_EQ(f16_to_float(0x03FF), 6.0975552e-05f);  // largest subnormal
  EXPECT_EQ(f16_to_float(0x7BFF), 65504.0f);
  EXPECT_TRUE(f16_is_nan(float_to_f16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(f16_is_nan(double_to_f16(std::numeric_limits<double>::quiet_NaN())));
  // A NaN whose payload lives only in bits f16 drops stays a NaN.
  EXPECT_TRUE(f16_is_nan(float_to_f16(std::bit_cast<float>(0x7F800001u))));
  EXPECT_EQ(float_to_f16(std::bit_cast<float>(0xFFC00000u)), 0xFE00);
}

TEST(Half, Bf16KnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(3.14159265f), 0x4049);
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3F80);                     // tie, even below
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);                 // tie, even above
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to inf
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7F7F0000u)), 0x7F7F);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x00010000u)), 0x0001);  // subnormal, exact
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(double_to_bf16(1e-300), 0x0000);
  EXPECT_EQ(double_to_bf16(-1e300), 0xFF80);
  EXPECT_EQ(double_to_bf16(0.1), 0x3DCD);
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(std::bit_cast<float>(0x7F800001u))));
  // Double → bf16 directly, not through float: no double rounding. 1 + 2^-8 + 2^-30 is above
  // the tie, though rounding it to float first would land exactly on the tie (and go down).
  EXPECT_EQ(double_to_bf16(1.0 + 0x1p-8 + 0x1p-30), 0x3F81);
  EXPECT_EQ(float_to_bf16(static_cast<float>(1.0 + 0x1p-8 + 0x1p-30)), 0x3F80);
}

TEST(Half, E4m3RoundTripsEveryBitPattern) {
  for (std::uint32_t h = 0; h <= 0xFF; ++h) {
    const auto bits = static_cast<std::uint8_t>(h);
    const float f = e4m3_to_float(bits);
    ASSERT_EQ(std::isnan(f), e4m3_is_nan(bits)) << std::hex << h;
    ASSERT_FALSE(std::isinf(f)) << std::hex << h;  // e4m3 has no infinities
    if (e4m3_is_nan(bits)) {
      ASSERT_EQ(float_to_e4m3(f), kE4m3NaN);
      continue;
    }
    ASSERT_EQ(float_to_e4m3(f), bits) << std::hex << h;
    ASSERT_EQ(double_to_e4m3(e4m3_to_double(bits)), bits) << std::hex << h;
    ASSERT_LE(std::fabs(f), 448.0f);
  }
}

// Between every pair of adjacent finite e4m3 values (0 up to 448): the midpoint goes to the even
// one, the doubles and floats just beside it to the nearer one; the same independent reference
// as f16's, which is right below the top binade's missing 480.
TEST(Half, E4m3RoundsEveryBoundaryToNearestEven) {
  for (std::uint32_t h = 0; h < kE4m3Max; ++h) {
    for (const std::uint32_t sign : {0u, 0x80u}) {
      const auto lo = static_cast<std::uint8_t>(h | sign);
      const auto hi = static_cast<std::uint8_t>((h + 1) | sign);
      const double a = e4m3_to_double(lo), b = e4m3_to_double(hi);
      const double mid = (a + b) / 2;
      const std::uint8_t even = (h & 1u) == 0 ? lo : hi;
      ASSERT_EQ(double_to_e4m3(mid), even) << std::hex << h;
      ASSERT_EQ(float_to_e4m3(static_cast<float>(mid)), even) << std::hex << h;
      ASSERT_EQ(double_to_e4m3(std::nextafter(mid, a)), lo) << std::hex << h;
      ASSERT_EQ(double_to_e4m3(std::nextafter(mid, b)), hi) << std::hex << h;
      ASSERT_EQ(float_to_e4m3(std::nextafter(static_cast<float>(mid), static_cast<float>(a))), lo);
      ASSERT_EQ(float_to_e4m3(std::nextafter(static_cast<float>(mid), static_cast<float>(b))), hi);
      const std::uint16_t ref = reference_round(mid, 3, 7, 16);  // sign at bit 15
      ASSERT_EQ(ref >> 15, even >> 7) << std::hex << h;
      ASSERT_EQ(ref & 0x7FFF, even & 0x7F) << std::hex << h;
    }
  }
}

TEST(Half, E4m3KnownValues) {
  EXPECT_EQ(double_to_e4m3(1.0), 0x38);
  EXPECT_EQ(double_to_e4m3(-2.0), 0xC0);
  EXPECT_EQ(double_to_e4m3(0.5), 0x30);
  EXPECT_EQ(double_to_e4m3(448.0), 0x7E);  // the largest finite value, 1.75·2^8
  EXPECT_EQ(e4m3_to_double(0x7E), 448.0);
  EXPECT_EQ(e4m3_to_double(0xFE), -448.0);
  EXPECT_EQ(e4m3_to_double(0x7D), 416.0);
  EXPECT_EQ(double_to_e4m3(0x1p-6), 0x08);  // smallest normal
  EXPECT_EQ(e4m3_to_double(0x08), 0x1p-6);
  EXPECT_EQ(double_to_e4m3(0x1p-9), 0x01);  // smallest subnormal
  EXPECT_EQ(e4m3_to_double(0x01), 0x1p-9);
  EXPECT_EQ(e4m3_to_double(0x07), 7 * 0x1p-9);  // largest subnormal
  EXPECT_EQ(double_to_e4m3(0x1p-10), 0x00);     // half the smallest subnormal: tie to even, 0
  EXPECT_EQ(double_to_e4m3(-0x1p-10), 0x80);
  EXPECT_EQ(double_to_e4m3(0x1.0000000000001p-10), 0x01);  // just above the tie
  EXPECT_EQ(double_to_e4m3(3 * 0x1p-10), 0x02);            // tie between 1 and 2 ulps: even
  EXPECT_EQ(double_to_e4m3(0x1p-20), 0x00);
  EXPECT_EQ(double_to_e4m3(1.0625), 0x38);  // tie between 1 and 1.125: even below
  EXPECT_EQ(double_to_e4m3(1.1875), 0x3A);  // tie between 1.125 and 1.25: even above
  EXPECT_EQ(double_to_e4m3(1.0626), 0x39);  // past the tie
  EXPECT_EQ(double_to_e4m3(432.0), 0x7E);   // tie between 416 and 448: even (448) above
  EXPECT_EQ(double_to_e4m3(-0.0), 0x80);
  // Saturation ("satfinite"): past 448 is ±448, never the NaN pattern that 480 would take.
  EXPECT_EQ(double_to_e4m3(449.0), 0x7E);
  EXPECT_EQ(double_to_e4m3(464.0), 0x7E);  // the tie to 480 rounds to even, 448, anyway
  EXPECT_EQ(double_to_e4m3(465.0), 0x7E);
  EXPECT_EQ(double_to_e4m3(480.0), 0x7E);
  EXPECT_EQ(double_to_e4m3(1e9), 0x7E);
  EXPECT_EQ(double_to_e4m3(-1e300), 0xFE);
  EXPECT_EQ(double_to_e4m3(std::numeric_limits<double>::infinity()), 0x7E);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(double_to_e4m3(std::numeric_limits<double>::quiet_NaN()), kE4m3NaN);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), kE4m3NaN);
  EXPECT_TRUE(e4m3_is_nan(0x7F));
  EXPECT_TRUE(e4m3_is_nan(0xFF));
  EXPECT_FALSE(e4m3_is_nan(0x7E));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xFF)));
  // Double → e4m3 directly: 1 + 2^-4 + 2^-40 is above the tie between 1 and 1.125.
  EXPECT_EQ(double_to_e4m3(1.0 + 0x1p-4 + 0x1p-40), 0x39);
  static_assert(double_to_e4m3(448.0) == kE4m3Max, "usable in constant expressions");
}

TEST(Half, MatchesCompilerFloat16WhereAvailable) {
#if defined(__FLT16_MAX__) && defined(__x86_64__)
  // Every 4099th float pattern (about a million, all exponents and signs) against the
  // compiler's own conversion.
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    if (std::isnan(f)) continue;
    __extension__ const _Float16 h = static_cast<_Float16>(f);
    ASSERT_EQ(float_to_f16(f), std::bit_cast<std::uint16_t>(h)) << std::hex << b;
  }
#else
  GTEST_SKIP() << "no _Float16 in this compiler";
#endif
}

TEST(Half, Tf32Rounding) {
  EXPECT_EQ(round_to_tf32(1.0f), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f);                // tie, even below
  EXPECT_EQ(round_to_tf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);  // tie, even above
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f);
  EXPECT_EQ(round_to_tf32(-1.0f - 0x1p-11f - 0x1p-20f), -1.0f - 0x1p-10f);
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::max()),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(round_to_tf32(-std::numeric_limits<float>::infinity()),
            -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(round_to_tf32(std::bit_cast<float>(0x7F800001u))));
  // Every result has its 13 low mantissa bits clear and is within half a tf32 ulp.
  for (std::uint32_t b = 0x3F800000u; b < 0x40000000u; b += 977) {
    const float f = std::bit_cast<float>(b);
    const float r = round_to_tf32(f);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(r) & 0x1FFFu, 0u);
    EXPECT_LE(std::fabs(r - f), 0x1p-11f);
  }
}

}  // namespace
