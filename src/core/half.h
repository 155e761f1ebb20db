// IEEE binary16 (f16) and bfloat16 (bf16) values held as raw std::uint16_t bits: exact widening
// to float/double, round-to-nearest-even narrowing (overflow to inf, NaN kept a NaN with its
// leading payload bits), and rounding of a float to tf32's 10 explicit mantissa bits. FP8 E4M3
// values held as std::uint8_t bits: exact widening, nearest-even narrowing that saturates.
#pragma once

#include <bit>
#include <cstdint>

namespace gpucheck {

inline constexpr std::uint16_t kF16PositiveInf = 0x7C00;
inline constexpr std::uint16_t kF16Max = 0x7BFF;  // 65504
inline constexpr std::uint16_t kBf16PositiveInf = 0x7F80;
inline constexpr std::uint8_t kE4m3Max = 0x7E;  // 448 = 1.75·2^8
inline constexpr std::uint8_t kE4m3NaN = 0x7F;  // S.1111.111: e4m3's only NaN (either sign)

namespace half_detail {

// Rounds a value in a binary format with SrcExp exponent and SrcMan mantissa bits (held in
// SrcBits) to one with DstExp/DstMan bits, nearest-even, returning the destination's bits with
// the sign at bit DstExp+DstMan. Written once for every pair so each is exactly the same rule.
template <class SrcBits, int kSrcExp, int kSrcMan, int kDstExp, int kDstMan>
constexpr std::uint32_t narrow(SrcBits bits) {
  constexpr int kSrcBias = (1 << (kSrcExp - 1)) - 1;
  constexpr int kDstBias = (1 << (kDstExp - 1)) - 1;
  constexpr std::uint32_t kSrcExpMax = (1u << kSrcExp) - 1;
  constexpr std::uint32_t kDstExpMax = (1u << kDstExp) - 1;
  constexpr std::uint32_t kDstInf = kDstExpMax << kDstMan;
  constexpr std::uint64_t kSrcImplicit = std::uint64_t{1} << kSrcMan;

  const auto wide = static_cast<std::uint64_t>(bits);
  const std::uint32_t sign = static_cast<std::uint32_t>((wide >> (kSrcExp + kSrcMan)) & 1u)
                             << (kDstExp + kDstMan);
  const auto exp_field = static_cast<std::uint32_t>((wide >> kSrcMan) & kSrcExpMax);
  std::uint64_t sig = wide & (kSrcImplicit - 1);

  if (exp_field == kSrcExpMax) {
    if (sig == 0) return sign | kDstInf;
    // NaN: keep the leading payload bits (the quiet bit among them); never let it become inf.
    auto payload = static_cast<std::uint32_t>(sig >> (kSrcMan - kDstMan));
    if (payload == 0) payload = 1u << (kDstMan - 1);
    return sign | kDstInf | payload;
  }
  int exponent = 0;  // unbiased, of the normalised significand sig ∈ [2^SrcMan, 2^(SrcMan+1))
  if (exp_field == 0) {
    if (sig == 0) return sign;
    exponent = 1 - kSrcBias;
    while ((sig & kSrcImplicit) == 0) {
      sig <<= 1;
      --exponent;
    }
  } else {
    sig |= kSrcImplicit;
    exponent = static_cast<int>(exp_field) - kSrcBias;
  }
  const int dst_exp = exponent + kDstBias;  // biased; <= 0 means a subnormal result
  if (dst_exp >= static_cast<int>(kDstExpMax)) return sign | kDstInf;
  const int shift = kSrcMan - kDstMan + (dst_exp < 1 ? 1 - dst_exp : 0);
  // sig < 2^(SrcMan+1) <= 2^(shift-1): below half the smallest subnormal, rounds to zero.
  if (shift > kSrcMan + 1) return sign;
  std::uint64_t q = sig;
  if (shift > 0) {
    const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    q = sig >> shift;
    // Branch-free: the rounding direction is data-dependent and would mispredict half the time.
    q += static_cast<std::uint64_t>((rem > half) | ((rem == half) & ((q & 1u) != 0)));
  }
  // A normal result: (dst_exp-1)·2^DstMan + q with q ∈ [2^DstMan, 2^(DstMan+1)] adds the implicit
  // bit into the exponent field (and a carry of the rounding up into the next binade); a
  // subnormal result is q itself, where q = 2^DstMan is correctly the smallest normal.
  const std::uint64_t base = dst_exp < 1 ? 0 : static_cast<std::uint64_t>(dst_exp - 1);
  const std::uint64_t out = (base << kDstMan) + q;
  if (out >= kDstInf) return sign | kDstInf;
  return sign | static_cast<std::uint32_t>(out);
}

}  // namespace half_detail

// float/double → f16, round to nearest even; overflow (|v| >= 65520) gives ±inf.
constexpr std::uint16_t float_to_f16(float v) {
  return static_cast<std::uint16_t>(
      half_detail::narrow<std::uint32_t, 8, 23, 5, 10>(std::bit_cast<std::uint32_t>(v)));
}
constexpr std::uint16_t double_to_f16(double v) {
  return static_cast<std::uint16_t>(
      half_detail::narrow<std::uint64_t, 11, 52, 5, 10>(std::bit_cast<std::uint64_t>(v)));
}

// f16 → float, exact (every f16 value, NaN payloads included, is a float).
constexpr float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp_field = (h >> 10) & 0x1Fu;
  const std::uint32_t man = h & 0x3FFu;
  if (exp_field == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (man << 13));
  if (exp_field == 0) {
    const float magnitude = static_cast<float>(man) * 0x1p-24f;  // exact: man < 2^10
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exp_field + 112u) << 23) | (man << 13));
}
constexpr double f16_to_double(std::uint16_t h) {
  return f16_to_float(h);
}

// float/double → bf16, round to nearest even; overflow gives ±inf.
constexpr std::uint16_t float_to_bf16(float v) {
  return static_cast<std::uint16_t>(
      half_detail::narrow<std::uint32_t, 8, 23, 8, 7>(std::bit_cast<std::uint32_t>(v)));
}
constexpr std::uint16_t double_to_bf16(double v) {
  return static_cast<std::uint16_t>(
      half_detail::narrow<std::uint64_t, 11, 52, 8, 7>(std::bit_cast<std::uint64_t>(v)));
}

// bf16 → float, exact: bf16 is the upper half of a float.
constexpr float bf16_to_float(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}
constexpr double bf16_to_double(std::uint16_t h) {
  return bf16_to_float(h);
}

constexpr bool f16_is_nan(std::uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
}
constexpr bool f16_is_finite(std::uint16_t h) {
  return (h & 0x7C00u) != 0x7C00u;
}
constexpr bool bf16_is_nan(std::uint16_t h) {
  return (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu);
}
constexpr bool bf16_is_finite(std::uint16_t h) {
  return (h & 0x7F80u) != 0x7F80u;
}

// ---- FP8 E4M3 (OCP "E4M3FN", CUDA's __nv_fp8_e4m3): 1 sign, 4 exponent bits of bias 7, 3
// mantissa bits; subnormals down to 2^-9, normals from 2^-6, largest finite 448; no infinities,
// and S.1111.111 is NaN (so S.1111.110 = ±448 is the top of the last binade).

// double → e4m3, round to nearest even, saturating as cuBLASLt's and CUDA's "satfinite"
// conversions do: anything beyond ±448 (±inf too) becomes ±448; NaN becomes 0x7F.
constexpr std::uint8_t double_to_e4m3(double v) {
  if (v != v) return kE4m3NaN;
  // e4m3 with biased exponent E holds 2^(E-7)·1.m; a 5-bit-exponent format of bias 15 holds
  // 2^(E-15)·1.m in the same fields, subnormals included (spacing 2^-17 there, 2^-9 here). So
  // v·2^-8 (exact: a power of two) rounded to that IEEE-style format with 3 mantissa bits has
  // e4m3's bits wherever |v| < 480, and narrow() already rounds nearest-even. Beyond 448 lie
  // only 480 (which would be 0x7F, the NaN) and larger: saturated.
  const std::uint32_t r =
      half_detail::narrow<std::uint64_t, 11, 52, 5, 3>(std::bit_cast<std::uint64_t>(v * 0x1p-8));
  const auto sign = static_cast<std::uint8_t>((r >> 1) & 0x80u);  // narrow's sign is bit 8
  const std::uint32_t magnitude = r & 0xFFu;
  return static_cast<std::uint8_t>(sign | (magnitude > kE4m3Max ? kE4m3Max : magnitude));
}
// float → e4m3: through double, which holds every float exactly (so one rounding).
constexpr std::uint8_t float_to_e4m3(float v) {
  return double_to_e4m3(static_cast<double>(v));
}

// e4m3 → float, exact.
constexpr float e4m3_to_float(std::uint8_t b) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  const std::uint32_t exp_field = (b >> 3) & 0xFu;
  const std::uint32_t man = b & 0x7u;
  if ((b & 0x7Fu) == kE4m3NaN) return std::bit_cast<float>(sign | 0x7FC00000u);
  if (exp_field == 0) {
    const float magnitude = static_cast<float>(man) * 0x1p-9f;  // exact: man < 8
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exp_field + 120u) << 23) | (man << 20));
}
constexpr double e4m3_to_double(std::uint8_t b) {
  return e4m3_to_float(b);
}

constexpr bool e4m3_is_nan(std::uint8_t b) {
  return (b & 0x7Fu) == kE4m3NaN;
}

// float → the nearest tf32 value (8-bit exponent, 10 explicit mantissa bits), ties to even, held
// in a float. Tensor cores that read f32 data in TF32 mode see this (or its truncation).
constexpr float round_to_tf32(float v) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t kTf32Low = 0x1FFFu;  // the 13 mantissa bits tf32 drops
  if ((bits & 0x7F800000u) == 0x7F800000u) {
    if ((bits & 0x007FFFFFu) == 0) return v;
    // NaN: keep it a NaN after dropping the low bits.
    const std::uint32_t kept = bits & ~kTf32Low;
    return std::bit_cast<float>((kept & 0x007FFFFFu) != 0 ? kept : (kept | 0x00400000u));
  }
  // Round half to even on bit 13; a carry out of the mantissa moves to the next binade, and out
  // of the largest finite value to inf, both of which are right.
  const std::uint32_t rounded = bits + 0x0FFFu + ((bits >> 13) & 1u);
  return std::bit_cast<float>(rounded & ~kTf32Low);
}

}  // namespace gpucheck
