// Host buffers and the seeded inputs: typed storage, allocation errors, determinism down to the
// byte, the distributions asked for, never a zero, poison, and the conv layouts.
#include "bench/inputs.h"
#include "bench/ops/conv.h"
#include "bench/ops/exp.h"
#include "bench/ops/gemm.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/half.h"

namespace {

using namespace gpucheck;
using namespace gpucheck::bench;

constexpr DType kAll[] = {DType::kF32,  DType::kTf32, DType::kF16,
                          DType::kBf16, DType::kF64,  DType::kFp8};

bool same_bytes(const HostBuffer& a, const HostBuffer& b) {
  return a.dtype() == b.dtype() && a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

TEST(HostBuffer, TypedAlignedStorage) {
  for (const DType d : kAll) {
    HostBuffer b(d, 1000);
    EXPECT_EQ(b.dtype(), d);
    EXPECT_EQ(b.size(), 1000u);
    EXPECT_EQ(b.size_bytes(), 1000 * element_size(d));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % HostBuffer::kAlignment, 0u);
  }
  HostBuffer f(DType::kF32, 4);
  EXPECT_NO_THROW(f.as<float>());
  EXPECT_THROW(f.as<double>(), std::logic_error);
  EXPECT_THROW(f.as<std::uint16_t>(), std::logic_error);
  HostBuffer h(DType::kBf16, 4);
  EXPECT_NO_THROW(h.as<std::uint16_t>());
  EXPECT_THROW(h.as<float>(), std::logic_error);
  EXPECT_NO_THROW(HostBuffer(DType::kTf32, 1).as<float>());
  EXPECT_NO_THROW(HostBuffer(DType::kF64, 1).as<double>());
  HostBuffer e4m3(DType::kFp8, 4);
  EXPECT_EQ(e4m3.size_bytes(), 4u);
  EXPECT_NO_THROW(e4m3.as<std::uint8_t>());
  EXPECT_THROW(e4m3.as<std::uint16_t>(), std::logic_error);
  EXPECT_THROW(h.as<std::uint8_t>(), std::logic_error);
  const HostBuffer empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
}

TEST(HostBuffer, SetRoundsToTheDtypeAndGetIsExact) {
  const double v = 1.0 / 3.0;
  HostBuffer f64(DType::kF64, 1), f32(DType::kF32, 1), tf32(DType::kTf32, 1), f16(DType::kF16, 1),
      bf16(DType::kBf16, 1);
  f64.set(0, v);
  f32.set(0, v);
  tf32.set(0, v);
  f16.set(0, v);
  bf16.set(0, v);
  EXPECT_EQ(f64.get(0), v);
  EXPECT_EQ(f32.get(0), static_cast<double>(static_cast<float>(v)));
  EXPECT_EQ(tf32.get(0), static_cast<double>(static_cast<float>(v)));  // stored as f32
  EXPECT_EQ(f16.as<std::uint16_t>()[0], 0x3555);
  EXPECT_EQ(f16.get(0), 0.333251953125);
  EXPECT_EQ(bf16.as<std::uint16_t>()[0], 0x3EAB);
  EXPECT_EQ(bf16.get(0), 0.333984375);
  EXPECT_EQ(round_to_storage(DType::kF16, v), 0.333251953125);
  EXPECT_EQ(round_to_storage(DType::kF64, v), v);
  EXPECT_EQ(min_normal(DType::kF16), 0x1p-14);
  EXPECT_EQ(min_normal(DType::kBf16), 0x1p-126);
  // fp8 (e4m3): nearest even, saturating at ±448.
  HostBuffer fp8(DType::kFp8, 3);
  fp8.set(0, v);
  fp8.set(1, 1000.0);
  fp8.set(2, -0x1p-9);
  EXPECT_EQ(fp8.as<std::uint8_t>()[0], 0x2B);  // 0.34375 = 1.375·2^-2, the nearest to 1/3
  EXPECT_EQ(fp8.get(0), 0.34375);
  EXPECT_EQ(fp8.get(1), 448.0);
  EXPECT_EQ(fp8.get(2), -0x1p-9);
  EXPECT_EQ(round_to_storage(DType::kFp8, v), 0.34375);
  EXPECT_EQ(min_normal(DType::kFp8), 0x1p-6);
}

TEST(HostBuffer, MovesAndClones) {
  HostBuffer a(DType::kF16, 3);
  a.set(0, 1);
  a.set(1, 2);
  a.set(2, 3);
  const void* p = a.data();
  HostBuffer b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.get(2), 3.0);
  const HostBuffer c = b.clone();
  EXPECT_NE(c.data(), b.data());
  EXPECT_TRUE(same_bytes(b, c));
}

TEST(HostBuffer, AllocationFailureIsATypedErrorNamingTheBytes) {
  const std::size_t huge = std::size_t{1} << 60;  // 8 EiB of f64: no machine has it
  try {
    HostBuffer b(DType::kF64, huge / 8);
    FAIL() << "allocated 2^60 bytes";
  } catch (const AllocationError& e) {
    EXPECT_EQ(e.bytes(), huge);
    EXPECT_NE(std::string(e.what()).find("1152921504606846976 bytes"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("f64"), std::string::npos) << e.what();
  }
  // A count whose byte size overflows.
  EXPECT_THROW(HostBuffer(DType::kF32, std::numeric_limits<std::size_t>::max() / 2),
               AllocationError);
}

TEST(Inputs, RandomBitsAreAFixedFunctionOfSeedStreamAndIndex) {
  // Golden values: a change to the generator changes every saved result's inputs.
  EXPECT_EQ(random_bits(1, 1, 0), random_bits(1, 1, 0));
  EXPECT_NE(random_bits(1, 1, 0), random_bits(2, 1, 0));
  EXPECT_NE(random_bits(1, 1, 0), random_bits(1, 2, 0));
  EXPECT_NE(random_bits(1, 1, 0), random_bits(1, 1, 1));
  HostBuffer x = make_exp_input(DType::kF32, {4}, kDefaultSeed);
  const float golden[4] = {-5.058068275e+00f, 1.534547567e+00f, 1.771361589e+00f,
                           -9.985971451e+00f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(x.as<float>()[i], golden[i]) << i;
  HostBuffer g(DType::kF64, 4);
  fill_normal(g, kDefaultSeed, kStreamGemmA);
  const double golden_normal[4] = {0.9382813149900443, -0.54596932669349241, 1.5997670055884001,
                                   -0.59370579285912961};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(g.as<double>()[i], golden_normal[i]) << i;
}

TEST(Inputs, DeterministicAndIndependentOfLengthAndThreads) {
  for (const DType d : kAll) {
    // Large enough to be filled on several threads, odd so the last Box–Muller pair is split.
    const std::size_t big = (std::size_t{1} << 19) + 3;
    HostBuffer a(d, big), b(d, big), small(d, 1001);
    fill_normal(a, 7, kStreamGemmB);
    fill_normal(b, 7, kStreamGemmB);
    fill_normal(small, 7, kStreamGemmB);
    EXPECT_TRUE(same_bytes(a, b)) << to_string(d);
    EXPECT_EQ(std::memcmp(a.data(), small.data(), small.size_bytes()), 0) << to_string(d);
    // Elements computed alone, far into the buffer (other threads' ranges), agree too.
    for (const std::size_t i : {std::size_t{262143}, std::size_t{262144}, big - 1}) {
      HostBuffer prefix(d, i + 1);
      fill_normal(prefix, 7, kStreamGemmB);
      EXPECT_EQ(prefix.get(i), a.get(i)) << to_string(d) << " " << i;
    }
    HostBuffer u1(d, big), u2(d, 5000), other(d, 5000);
    fill_uniform(u1, -10, 10, 3, kStreamExpX);
    fill_uniform(u2, -10, 10, 3, kStreamExpX);
    fill_uniform(other, -10, 10, 4, kStreamExpX);
    EXPECT_EQ(std::memcmp(u1.data(), u2.data(), u2.size_bytes()), 0) << to_string(d);
    EXPECT_NE(std::memcmp(u2.data(), other.data(), u2.size_bytes()), 0) << to_string(d);
  }
}

TEST(Inputs, ExpInputsAreUniformInRangeAndNeverZero) {
  for (const DType d : kAll) {
    if (d == DType::kFp8) continue;  // a GEMM type only: no exp inputs (its grid is too coarse)
    const auto [lo, hi] = exp_input_range(d);
    EXPECT_EQ(hi, -lo);
    EXPECT_EQ(hi, d == DType::kF16 || d == DType::kBf16 ? 8.0 : 10.0);
    const std::size_t n = std::size_t{1} << 18;
    const HostBuffer x = make_exp_input(d, {n}, 11);
    double sum = 0, below_half = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = x.get(i);
      ASSERT_GE(v, lo);
      ASSERT_LE(v, hi);
      ASSERT_GE(std::fabs(v), min_normal(d)) << "zero or subnormal at " << i;
      ASSERT_EQ(v, round_to_storage(d, v));
      sum += v;
      below_half += v < lo / 2 ? 1 : 0;
    }
    EXPECT_NEAR(sum / n, 0.0, 0.05 * hi) << to_string(d);
    EXPECT_NEAR(below_half / n, 0.25, 0.01) << to_string(d);
  }
}

TEST(Inputs, NormalInputsLookStandardNormal) {
  for (const DType d : {DType::kF32, DType::kF16, DType::kBf16, DType::kF64}) {
    const GemmInputs in = make_gemm_inputs(d, {256, 256, 512}, 5);
    ASSERT_EQ(in.a.size(), 256u * 512u);
    ASSERT_EQ(in.b.size(), 512u * 256u);
    const std::size_t n = in.a.size();
    double sum = 0, sq = 0, within = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = in.a.get(i);
      ASSERT_GE(std::fabs(v), min_normal(d));
      sum += v;
      sq += v * v;
      within += std::fabs(v) < 1 ? 1 : 0;
    }
    // n = 131072: the mean's standard error is 0.0028, the variance's 0.004.
    EXPECT_NEAR(sum / n, 0.0, 0.015) << to_string(d);
    EXPECT_NEAR(sq / n, 1.0, 0.02) << to_string(d);
    EXPECT_NEAR(within / n, 0.6827, 0.01) << to_string(d);
    EXPECT_FALSE(same_bytes(in.a, in.b));  // separate streams
  }
}

TEST(Inputs, RedrawsWhatWouldRoundToZero) {
  // A uniform range so narrow that most draws underflow f16: all must still be normal values.
  HostBuffer h(DType::kF16, 2000);
  fill_uniform(h, -1e-4, 1e-4, 1, 1);
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_GE(std::fabs(h.get(i)), 0x1p-14) << i;
}

TEST(Inputs, PoisonIsRecognisedAndIsNaN) {
  for (const DType d : kAll) {
    HostBuffer y = make_output(d, 100);
    for (std::size_t i = 0; i < y.size(); ++i) {
      ASSERT_TRUE(is_poison(y, i));
      ASSERT_TRUE(std::isnan(y.get(i)));
    }
    y.set(5, 1.5);
    EXPECT_FALSE(is_poison(y, 5));
    y.set(6, std::numeric_limits<double>::quiet_NaN());  // a computed NaN is not poison
    EXPECT_FALSE(is_poison(y, 6));
    EXPECT_TRUE(is_poison(y, 7));
  }
  HostBuffer f(DType::kF32, 1);
  poison(f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(f.as<float>()[0]), kPoisonF32);
  HostBuffer h(DType::kF16, 1);
  poison(h);
  EXPECT_EQ(h.as<std::uint16_t>()[0], 0x7E7F);
  EXPECT_TRUE(f16_is_nan(kPoisonF16));
  EXPECT_TRUE(bf16_is_nan(kPoisonBf16));
  EXPECT_TRUE(e4m3_is_nan(kPoisonFp8));
  EXPECT_NE(kPoisonFp8, double_to_e4m3(std::numeric_limits<double>::quiet_NaN()));
}

TEST(Inputs, ConvLayoutsHoldTheSameLogicalTensors) {
  ConvShape nchw{2, 3, 5, 4, 6, 3, 2, 1, 1, Layout::kNchw};
  ConvShape nhwc = nchw;
  nhwc.layout = Layout::kNhwc;
  const ConvInputs a = make_conv_inputs(DType::kF16, nchw, 9);
  const ConvInputs b = make_conv_inputs(DType::kF16, nhwc, 9);
  ASSERT_EQ(a.x.size(), 2u * 3 * 5 * 4);
  ASSERT_EQ(a.w.size(), 6u * 3 * 3 * 2);
  EXPECT_EQ(conv_y_elements(nchw), 2u * 6 * 5 * 5);  // P = (5+2−3)/1+1, Q = (4+2−2)/1+1
  for (std::uint64_t n = 0; n < 2; ++n)
    for (std::uint64_t c = 0; c < 3; ++c)
      for (std::uint64_t h = 0; h < 5; ++h)
        for (std::uint64_t w = 0; w < 4; ++w)
          ASSERT_EQ(a.x.get(conv_x_index(nchw, n, c, h, w)),
                    b.x.get(conv_x_index(nhwc, n, c, h, w)));
  for (std::uint64_t k = 0; k < 6; ++k)
    for (std::uint64_t c = 0; c < 3; ++c)
      for (std::uint64_t r = 0; r < 3; ++r)
        for (std::uint64_t s = 0; s < 2; ++s)
          ASSERT_EQ(a.w.get(conv_w_index(nchw, k, c, r, s)),
                    b.w.get(conv_w_index(nhwc, k, c, r, s)));
  // NHWC puts channels last: neighbouring channels of one pixel are adjacent.
  EXPECT_EQ(conv_x_index(nhwc, 0, 1, 0, 0), 1u);
  EXPECT_EQ(conv_x_index(nchw, 0, 1, 0, 0), 20u);
  EXPECT_EQ(conv_w_index(nhwc, 0, 1, 0, 0), 1u);
  EXPECT_EQ(conv_y_index(nhwc, 0, 1, 0, 0), 1u);
  EXPECT_EQ(conv_y_index(nchw, 0, 1, 0, 0), 25u);
  ConvShape bad = nchw;
  bad.stride = 0;
  EXPECT_THROW(conv_y_elements(bad), std::invalid_argument);
}

}  // namespace
