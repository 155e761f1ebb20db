// Verification, op by op and dtype by dtype: correct results pass — both the exactly rounded
// one and ones computed the way reduced-precision hardware computes them — and one planted
// error (10× the allowance), one NaN or one never-written element fails at its own index.
#include "bench/ops/conv.h"
#include "bench/ops/exp.h"
#include "bench/ops/gemm.h"
#include "bench/verify.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bench/inputs.h"
#include "core/half.h"

namespace {

using namespace gpucheck;
using namespace gpucheck::bench;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void plant_poison(HostBuffer& y, std::size_t i) {
  const HostBuffer p = make_output(y.dtype(), 1);
  const std::size_t es = element_size(y.dtype());
  std::memcpy(static_cast<std::byte*>(y.data()) + i * es, p.data(), es);
}

std::string name(DType d) {
  return std::string(to_string(d));
}

// ------------------------------------------------------------------------------------- exp

HostBuffer exp_result(const HostBuffer& x, double relative_skew = 0) {
  HostBuffer y(x.dtype(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    // An alternating skew of a few ulps stands in for a fast hardware exp.
    const double skew = (i % 2 == 0 ? 1 : -1) * relative_skew;
    y.set(i, std::exp(x.get(i)) * (1 + skew));
  }
  return y;
}

// exp as f16/bf16 hardware does it: in float, then rounded to the half type.
HostBuffer exp_result_via_float(const HostBuffer& x) {
  HostBuffer y(x.dtype(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y.set(i, std::exp(static_cast<float>(x.get(i))));
  return y;
}

class ExpVerify : public ::testing::TestWithParam<DType> {};

TEST_P(ExpVerify, AcceptsCorrectAndCatchesEachPlantedFault) {
  const DType d = GetParam();
  const std::size_t n = 10000;
  const HostBuffer x = make_exp_input(d, {n}, 123);
  const double tol = exp_tolerance(d);

  const HostBuffer good = exp_result(x);
  Verification v = verify_exp(x, good);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.method, "elementwise");
  EXPECT_EQ(v.tolerance, tol);
  EXPECT_LE(v.max_rel_error, unit_roundoff(d == DType::kTf32 ? DType::kF32 : d) * 1.0001);
  EXPECT_FALSE(v.first_bad_index);

  // What real hardware returns is accepted: f16/bf16 through float; f32 with ~8 ulps of error.
  if (d == DType::kF16 || d == DType::kBf16) {
    v = verify_exp(x, exp_result_via_float(x));
    EXPECT_TRUE(v.ok) << v.detail;
  }
  if (d == DType::kF32 || d == DType::kTf32) {
    v = verify_exp(x, exp_result(x, 8 * 0x1p-24));
    EXPECT_TRUE(v.ok) << v.detail;
  }
  if (d == DType::kF64) {
    v = verify_exp(x, exp_result(x, 8 * 0x1p-53));
    EXPECT_TRUE(v.ok) << v.detail;
  }

  HostBuffer off = good.clone();
  off.set(1234, good.get(1234) * (1 + 10 * tol));
  v = verify_exp(x, off);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 1234u) << v.detail;
  EXPECT_GT(v.max_rel_error, 9 * tol);
  EXPECT_LT(v.max_rel_error, 11 * tol);
  EXPECT_NE(v.detail.find("element 1234"), std::string::npos) << v.detail;

  HostBuffer nan = good.clone();
  nan.set(777, kNaN);
  v = verify_exp(x, nan);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 777u);
  EXPECT_TRUE(std::isinf(v.max_rel_error));
  EXPECT_NE(v.detail.find("NaN"), std::string::npos) << v.detail;

  HostBuffer unwritten = good.clone();
  plant_poison(unwritten, 4242);
  v = verify_exp(x, unwritten);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 4242u);
  EXPECT_NE(v.detail.find("never written"), std::string::npos) << v.detail;

  // Two faults: the lower index is named, both are described.
  HostBuffer two = off.clone();
  two.set(99, std::numeric_limits<double>::infinity());
  v = verify_exp(x, two);
  EXPECT_EQ(v.first_bad_index, 99u);
  EXPECT_NE(v.detail.find("element 1234"), std::string::npos) << v.detail;
  EXPECT_NE(v.detail.find("inf"), std::string::npos) << v.detail;

  // A negative result is caught by the scan even where no sample looks.
  HostBuffer neg = good.clone();
  neg.set(5000, -good.get(5000));
  VerifyOptions sampled;
  sampled.exp_full_max = 0;
  sampled.exp_samples = 10;
  v = verify_exp(x, neg, sampled);
  EXPECT_EQ(v.method, "sampled+scan");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 5000u);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, ExpVerify,
                         ::testing::Values(DType::kF32, DType::kTf32, DType::kF64, DType::kF16,
                                           DType::kBf16),
                         [](const auto& info) { return name(info.param); });

TEST(ExpVerify, SampledPathCatchesWidespreadErrors) {
  const HostBuffer x = make_exp_input(DType::kF32, {50000}, 5);
  VerifyOptions opt;
  opt.exp_full_max = 1000;
  EXPECT_TRUE(verify_exp(x, exp_result(x), opt).ok);
  // 1% of elements wrong by 1e-4: some of 4096 samples see it.
  HostBuffer y = exp_result(x);
  for (std::size_t i = 0; i < y.size(); i += 100) y.set(i, y.get(i) * (1 + 1e-4));
  const Verification v = verify_exp(x, y, opt);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.method, "sampled+scan");
  ASSERT_TRUE(v.first_bad_index);
  EXPECT_EQ(*v.first_bad_index % 100, 0u);
}

TEST(ExpVerify, AboveTwoToTheTwentyFourScansEverything) {
  // 2^24 + 4096 f16 elements: the sampled path; a NaN and a poison past any sample are found.
  const std::size_t n = (std::size_t{1} << 24) + 4096;
  const HostBuffer x = make_exp_input(DType::kF16, {n}, 77);
  HostBuffer y(DType::kF16, n);
  const auto* xs = x.as<std::uint16_t>();
  auto* ys = y.as<std::uint16_t>();
  for (std::size_t i = 0; i < n; ++i) ys[i] = float_to_f16(std::exp(f16_to_float(xs[i])));
  Verification v = verify_exp(x, y);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.method, "sampled+scan");

  const std::size_t planted = n - 17;
  y.set(planted, kNaN);
  v = verify_exp(x, y);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, planted);
  plant_poison(y, planted - 1);
  v = verify_exp(x, y);
  EXPECT_EQ(v.first_bad_index, planted - 1);
  EXPECT_NE(v.detail.find("never written"), std::string::npos) << v.detail;
}

TEST(ExpVerify, MismatchedSizesAreAProgrammingError) {
  const HostBuffer x = make_exp_input(DType::kF32, {10}, 1);
  const HostBuffer y(DType::kF32, 11);
  EXPECT_THROW(verify_exp(x, y), std::invalid_argument);
}

// ------------------------------------------------------------------------------------ gemm

// How a simulated device computes: the factors it reads and how it accumulates.
enum class Inputs { kAsStored, kTf32Nearest, kTf32Truncated };
// kFp8Mma: Hopper's FP8 tensor core as verify.h models it: sums of at most 128 products kept
// to 14 significant bits, truncated, each then added into an f32 accumulator.
enum class Accumulate { kDouble, kFloat, kFloatTowardZero, kFp8Mma };

double read_as(Inputs mode, double v) {
  switch (mode) {
    case Inputs::kAsStored:
      return v;
    case Inputs::kTf32Nearest:
      return round_to_tf32(static_cast<float>(v));
    case Inputs::kTf32Truncated:
      return std::bit_cast<float>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) & ~0x1FFFu);
  }
  return v;
}

// A float accumulator that truncates each sum, as tensor-core adders do; products are exact.
float add_toward_zero(float acc, double product) {
  const double s = static_cast<double>(acc) + product;
  float f = static_cast<float>(s);
  if (std::fabs(static_cast<double>(f)) > std::fabs(s)) f = std::nextafter(f, 0.0f);
  return f;
}

// v truncated (toward zero) to 14 significant bits: an e8m13 accumulator.
double truncate_to_14_bits(double v) {
  if (v == 0) return v;
  int e = 0;
  std::frexp(v, &e);
  return std::trunc(std::ldexp(v, 14 - e)) * std::ldexp(1.0, e - 14);
}

struct Accumulator {
  Accumulate mode;
  double d = 0;
  float f = 0;
  double chunk = 0;  // kFp8Mma: the tensor core's running sum of this chunk
  int in_chunk = 0;
  void add(double a, double b) {
    switch (mode) {
      case Accumulate::kFp8Mma:
        chunk = truncate_to_14_bits(chunk + a * b);
        if (++in_chunk == 128) {
          f += static_cast<float>(chunk);
          chunk = 0;
          in_chunk = 0;
        }
        break;
      case Accumulate::kDouble:
        d += a * b;
        break;
      case Accumulate::kFloat:
        f += static_cast<float>(a * b);
        break;
      case Accumulate::kFloatTowardZero:
        f = add_toward_zero(f, a * b);
        break;
    }
  }
  double value() const {
    if (mode == Accumulate::kFp8Mma) return f + static_cast<float>(chunk);
    return mode == Accumulate::kDouble ? d : f;
  }
};

std::vector<double> as_doubles(const HostBuffer& b, Inputs mode) {
  std::vector<double> v(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) v[i] = read_as(mode, b.get(i));
  return v;
}

HostBuffer gemm_result(const GemmShape& s, const HostBuffer& a, const HostBuffer& b, DType out,
                       Accumulate acc = Accumulate::kDouble, Inputs in = Inputs::kAsStored) {
  const auto av = as_doubles(a, in), bv = as_doubles(b, in);
  HostBuffer c(out, s.m * s.n);
  for (std::uint64_t i = 0; i < s.m; ++i)
    for (std::uint64_t j = 0; j < s.n; ++j) {
      Accumulator sum{acc};
      for (std::uint64_t l = 0; l < s.k; ++l) sum.add(av[i * s.k + l], bv[l * s.n + j]);
      c.set(i * s.n + j, sum.value());
    }
  return c;
}

// The allowance verify.h promises for one element: out·(|c| + min_normal) + prod·Σ|a||b|.
double gemm_element_allowance(const GemmShape& s, const HostBuffer& a, const HostBuffer& b,
                              const ErrorModel& m, DType out, std::uint64_t i, std::uint64_t j) {
  double ref = 0, mag = 0;
  for (std::uint64_t l = 0; l < s.k; ++l) {
    ref += a.get(i * s.k + l) * b.get(l * s.n + j);
    mag += std::fabs(a.get(i * s.k + l) * b.get(l * s.n + j));
  }
  return m.out * (std::fabs(ref) + min_normal(out)) + m.prod * mag;
}

// The allowance of row i in Freivalds' test: λ·(out·‖c_i‖₂/(1−out) + prod·‖a_i‖₂·‖B‖_F).
double gemm_row_allowance(const GemmShape& s, const HostBuffer& a, const HostBuffer& b,
                          const HostBuffer& c, const ErrorModel& m, std::uint64_t i) {
  double c_sq = 0, a_sq = 0, b_sq = 0;
  for (std::uint64_t j = 0; j < s.n; ++j) c_sq += c.get(i * s.n + j) * c.get(i * s.n + j);
  for (std::uint64_t l = 0; l < s.k; ++l) a_sq += a.get(i * s.k + l) * a.get(i * s.k + l);
  for (std::size_t e = 0; e < b.size(); ++e) b_sq += b.get(e) * b.get(e);
  return kFreivaldsLambda *
         (m.out * (std::sqrt(c_sq) + std::sqrt(static_cast<double>(s.n)) * min_normal(c.dtype())) /
              (1 - m.out) +
          m.prod * std::sqrt(a_sq) * std::sqrt(b_sq));
}

struct GemmCase {
  DType dtype;
  DType compute;
  bool freivalds;  // the 256×192×300 shape through Freivalds, else a small one elementwise
};

std::string gemm_case_name(const ::testing::TestParamInfo<GemmCase>& info) {
  return name(info.param.dtype) + (info.param.freivalds ? "_freivalds" : "_elementwise");
}

class GemmVerify : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmVerify, AcceptsCorrectAndCatchesEachPlantedFault) {
  const auto [d, compute, freivalds] = GetParam();
  const GemmShape s = freivalds ? GemmShape{256, 192, 300} : GemmShape{13, 17, 11};
  const GemmInputs in = make_gemm_inputs(d, s, 2024);
  const DType out = gemm_output_dtype(d);  // fp8 writes bf16
  const ErrorModel model = gemm_error_model(d, out, compute, s.k);
  const std::string expected_method = freivalds ? "freivalds+sampled+scan" : "elementwise";

  const HostBuffer exact = gemm_result(s, in.a, in.b, out);
  EXPECT_EQ(exact.dtype(), make_gemm_output(d, s).dtype());
  Verification v = verify_gemm(s, in.a, in.b, exact, compute);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.method, expected_method);
  EXPECT_EQ(v.tolerance, model.tolerance);
  EXPECT_LE(v.max_rel_error, v.tolerance);

  // Results as hardware computes them.
  std::vector<HostBuffer> hardware;
  if (d == DType::kF32) {
    hardware.push_back(gemm_result(s, in.a, in.b, d, Accumulate::kFloat));
    hardware.push_back(gemm_result(s, in.a, in.b, d, Accumulate::kFloatTowardZero));
  } else if (d == DType::kTf32) {
    hardware.push_back(gemm_result(s, in.a, in.b, d, Accumulate::kFloat, Inputs::kTf32Nearest));
    hardware.push_back(
        gemm_result(s, in.a, in.b, d, Accumulate::kFloatTowardZero, Inputs::kTf32Truncated));
  } else if (d == DType::kF16 || d == DType::kBf16) {
    hardware.push_back(gemm_result(s, in.a, in.b, d, Accumulate::kFloat));
    hardware.push_back(gemm_result(s, in.a, in.b, d, Accumulate::kFloatTowardZero));
  } else if (d == DType::kFp8) {
    hardware.push_back(gemm_result(s, in.a, in.b, out, Accumulate::kFloat));
    hardware.push_back(gemm_result(s, in.a, in.b, out, Accumulate::kFloatTowardZero));
    hardware.push_back(gemm_result(s, in.a, in.b, out, Accumulate::kFp8Mma));
  }
  for (const HostBuffer& c : hardware) {
    v = verify_gemm(s, in.a, in.b, c, compute);
    EXPECT_TRUE(v.ok) << v.detail;
    // Real results use a small part of the allowance.
    EXPECT_LT(v.max_rel_error, 0.5 * v.tolerance) << name(d);
  }

  // One element off by 10× the allowance of the check that has to see it.
  const std::uint64_t pi = s.m / 2 + 1, pj = s.n / 3;
  const std::uint64_t planted = pi * s.n + pj;
  const double allow = freivalds ? gemm_row_allowance(s, in.a, in.b, exact, model, pi)
                                 : gemm_element_allowance(s, in.a, in.b, model, out, pi, pj);
  HostBuffer off = exact.clone();
  off.set(planted, exact.get(planted) + 10 * allow);
  v = verify_gemm(s, in.a, in.b, off, compute);
  EXPECT_FALSE(v.ok) << name(d);
  EXPECT_EQ(v.first_bad_index, planted) << v.detail;
  EXPECT_GT(v.max_rel_error, 5 * v.tolerance);
  EXPECT_NE(v.detail.find(std::to_string(planted)), std::string::npos) << v.detail;

  HostBuffer nan = exact.clone();
  nan.set(planted, kNaN);
  v = verify_gemm(s, in.a, in.b, nan, compute);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, planted);
  EXPECT_NE(v.detail.find("NaN"), std::string::npos) << v.detail;

  HostBuffer unwritten = exact.clone();
  plant_poison(unwritten, s.m * s.n - 1);
  v = verify_gemm(s, in.a, in.b, unwritten, compute);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, s.m * s.n - 1);
  EXPECT_NE(v.detail.find("never written"), std::string::npos) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(
    AllDtypes, GemmVerify,
    ::testing::Values(
        GemmCase{DType::kF32, DType::kF32, false}, GemmCase{DType::kF32, DType::kF32, true},
        GemmCase{DType::kF64, DType::kF64, false}, GemmCase{DType::kF64, DType::kF64, true},
        GemmCase{DType::kTf32, DType::kTf32, false}, GemmCase{DType::kTf32, DType::kTf32, true},
        GemmCase{DType::kF16, DType::kF32, false}, GemmCase{DType::kF16, DType::kF32, true},
        GemmCase{DType::kBf16, DType::kF32, false}, GemmCase{DType::kBf16, DType::kF32, true},
        GemmCase{DType::kFp8, DType::kF32, false}, GemmCase{DType::kFp8, DType::kF32, true}),
    gemm_case_name);

// fp8: the inputs are e4m3 values the reference reads exactly, B's K-major copy is its
// transpose, and a result rounded to bf16 from f32 sums passes while one that lost a k-block
// of 16 products (a tile never added) fails.
TEST(GemmVerify, Fp8InputsAndResults) {
  const GemmShape s{48, 32, 64};
  const GemmInputs in = make_gemm_inputs(DType::kFp8, s, 99);
  ASSERT_EQ(in.a.dtype(), DType::kFp8);
  ASSERT_EQ(in.a.size_bytes(), s.m * s.k);
  ASSERT_EQ(in.b_k_major.size(), s.k * s.n);
  EXPECT_EQ(&in.device_b(), &in.b_k_major);
  for (std::uint64_t l = 0; l < s.k; ++l)
    for (std::uint64_t j = 0; j < s.n; ++j)
      ASSERT_EQ(in.b_k_major.get(j * s.k + l), in.b.get(l * s.n + j)) << l << "," << j;
  for (std::size_t e = 0; e < in.a.size(); ++e) {
    const double v = in.a.get(e);
    ASSERT_EQ(double_to_e4m3(v), in.a.as<std::uint8_t>()[e]);
    ASSERT_GE(std::fabs(v), 0x1p-6);  // never zero or subnormal
    ASSERT_LE(std::fabs(v), 448.0);
  }
  // Other dtypes send B as it is.
  const GemmInputs bf = make_gemm_inputs(DType::kBf16, s, 99);
  EXPECT_EQ(bf.b_k_major.size(), 0u);
  EXPECT_EQ(&bf.device_b(), &bf.b);

  const HostBuffer good = gemm_result(s, in.a, in.b, DType::kBf16, Accumulate::kFloat);
  EXPECT_EQ(good.dtype(), DType::kBf16);
  Verification v = verify_gemm(s, in.a, in.b, good, DType::kF32);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_DOUBLE_EQ(v.tolerance,
                   gemm_error_model(DType::kFp8, DType::kBf16, DType::kF32, 64).tolerance);

  GemmShape short_k = s;
  short_k.k = s.k - 16;
  HostBuffer a_short(DType::kFp8, s.m * short_k.k);
  for (std::uint64_t i = 0; i < s.m; ++i)
    for (std::uint64_t l = 0; l < short_k.k; ++l)
      a_short.set(i * short_k.k + l, in.a.get(i * s.k + l));
  const HostBuffer missing = gemm_result(short_k, a_short, in.b, DType::kBf16);
  v = verify_gemm(s, in.a, in.b, missing, DType::kF32);
  EXPECT_FALSE(v.ok) << "max " << v.max_rel_error << " tolerance " << v.tolerance;
}

TEST(GemmVerify, FreivaldsCatchesWholesaleErrors) {
  const GemmShape s{256, 192, 300};
  const GemmInputs in = make_gemm_inputs(DType::kF32, s, 31);
  // The last term of every dot product missing (a loop bound off by one).
  GemmShape short_k = s;
  short_k.k = s.k - 1;
  HostBuffer a_short(DType::kF32, s.m * short_k.k);
  for (std::uint64_t i = 0; i < s.m; ++i)
    for (std::uint64_t l = 0; l < short_k.k; ++l)
      a_short.set(i * short_k.k + l, in.a.get(i * s.k + l));
  const HostBuffer c_short = gemm_result(short_k, a_short, in.b, DType::kF32);
  Verification v = verify_gemm(s, in.a, in.b, c_short, DType::kF32);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find("Freivalds"), std::string::npos) << v.detail;
  // All zeros: finite, so only the arithmetic checks can see it.
  HostBuffer zeros(DType::kF32, s.m * s.n);
  for (std::size_t e = 0; e < zeros.size(); ++e) zeros.set(e, 0);
  v = verify_gemm(s, in.a, in.b, zeros, DType::kF32);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 0u);
  // One whole row zeroed past the samples: the projections find it, localisation names it.
  HostBuffer row = gemm_result(s, in.a, in.b, DType::kF32);
  for (std::uint64_t j = 0; j < s.n; ++j) row.set(200 * s.n + j, 0);
  VerifyOptions no_samples;
  no_samples.samples = 0;
  v = verify_gemm(s, in.a, in.b, row, DType::kF32, no_samples);
  EXPECT_FALSE(v.ok);
  ASSERT_TRUE(v.first_bad_index);
  EXPECT_EQ(*v.first_bad_index / s.n, 200u) << v.detail;
}

TEST(GemmVerify, SampledElementsCatchSilentTf32InAnF32Record) {
  // What cuDNN's and cuBLAS's defaults do on Ampere and later: f32 data computed in tf32.
  const GemmShape s{256, 192, 300};
  const GemmInputs in = make_gemm_inputs(DType::kF32, s, 8);
  const HostBuffer tf32 =
      gemm_result(s, in.a, in.b, DType::kF32, Accumulate::kFloat, Inputs::kTf32Nearest);
  EXPECT_TRUE(verify_gemm(s, in.a, in.b, tf32, DType::kTf32).ok);
  const Verification v = verify_gemm(s, in.a, in.b, tf32, DType::kF32);
  EXPECT_FALSE(v.ok) << "max " << v.max_rel_error << " tolerance " << v.tolerance;
}

TEST(GemmVerify, ErrorModel) {
  // f32: output rounding 3u, accumulation 8√k·u (below the worst case 2k·u for k > 16).
  ErrorModel m = gemm_error_model(DType::kF32, DType::kF32, DType::kF32, 10000);
  EXPECT_DOUBLE_EQ(m.out, 3 * 0x1p-24);
  EXPECT_DOUBLE_EQ(m.prod, 800 * 0x1p-24);
  EXPECT_DOUBLE_EQ(m.tolerance, m.out + m.prod);
  // Tiny k: the worst case 2k·u is the smaller.
  m = gemm_error_model(DType::kF32, DType::kF32, DType::kF32, 4);
  EXPECT_DOUBLE_EQ(m.prod, 8 * 0x1p-24);
  // tf32 math on f32 data: 5u(tf32) for the factors, f32 accumulation, f32 output.
  m = gemm_error_model(DType::kTf32, DType::kTf32, DType::kTf32, 100);
  EXPECT_DOUBLE_EQ(m.prod, 5 * 0x1p-11 + 80 * 0x1p-24);
  EXPECT_DOUBLE_EQ(m.out, 3 * 0x1p-24);
  // f16 accumulating in f32: exact products, half-precision output.
  m = gemm_error_model(DType::kF16, DType::kF16, DType::kF32, 100);
  EXPECT_DOUBLE_EQ(m.out, 3 * 0x1p-11);
  EXPECT_DOUBLE_EQ(m.prod, 80 * 0x1p-24);
  // f16 accumulating in f16 (CLBlast's HGEMM) is allowed its far larger error.
  m = gemm_error_model(DType::kF16, DType::kF16, DType::kF16, 100);
  EXPECT_DOUBLE_EQ(m.prod, 80 * 0x1p-11);
  // fp8 into bf16, f32 accumulation: bf16's output rounding, f32's 8√k·u, and the FP8 tensor
  // core's 14-bit sums over chunks of at most 128 products, 8√128·2^-14.
  m = gemm_error_model(DType::kFp8, DType::kBf16, DType::kF32, 8192);
  EXPECT_DOUBLE_EQ(m.out, 3 * 0x1p-8);
  EXPECT_DOUBLE_EQ(m.prod, 8 * std::sqrt(8192.0) * 0x1p-24 + 8 * std::sqrt(128.0) * 0x1p-14);
  EXPECT_LT(m.tolerance, 0.018);
  // k below the chunk: the chunk is k, and 2k·u is the smaller bound at k = 16.
  m = gemm_error_model(DType::kFp8, DType::kBf16, DType::kF32, 16);
  EXPECT_DOUBLE_EQ(m.prod, 32 * 0x1p-24 + 32 * 0x1p-14);
  EXPECT_EQ(default_compute(DType::kFp8), DType::kF32);
  EXPECT_EQ(unit_roundoff(DType::kFp8), 0x1p-4);
  EXPECT_EQ(default_compute(DType::kBf16), DType::kF32);
  EXPECT_EQ(default_compute(DType::kTf32), DType::kTf32);
  EXPECT_EQ(unit_roundoff(DType::kBf16), 0x1p-8);
  EXPECT_EQ(unit_roundoff(DType::kF64), 0x1p-53);
}

TEST(GemmVerify, ShapeMismatchIsAProgrammingError) {
  const GemmInputs in = make_gemm_inputs(DType::kF32, {4, 5, 6}, 1);
  const HostBuffer c(DType::kF32, 21);
  EXPECT_THROW(verify_gemm({4, 5, 6}, in.a, in.b, c, DType::kF32), std::invalid_argument);
}

// ------------------------------------------------------------------------------------ conv

HostBuffer conv_result(const ConvShape& sh, const HostBuffer& x, const HostBuffer& w, DType out,
                       Accumulate acc = Accumulate::kDouble, Inputs in = Inputs::kAsStored) {
  const auto xv = as_doubles(x, in), wv = as_doubles(w, in);
  HostBuffer y(out, conv_y_elements(sh));
  for (std::uint64_t n = 0; n < sh.n; ++n)
    for (std::uint64_t k = 0; k < sh.k; ++k)
      for (std::uint64_t p = 0; p < sh.p(); ++p)
        for (std::uint64_t q = 0; q < sh.q(); ++q) {
          Accumulator sum{acc};
          for (std::uint64_t c = 0; c < sh.c; ++c)
            for (std::uint64_t r = 0; r < sh.r; ++r)
              for (std::uint64_t s = 0; s < sh.s; ++s) {
                const std::int64_t h = static_cast<std::int64_t>(p * sh.stride + r) -
                                       static_cast<std::int64_t>(sh.pad);
                const std::int64_t ww = static_cast<std::int64_t>(q * sh.stride + s) -
                                        static_cast<std::int64_t>(sh.pad);
                if (h < 0 || ww < 0 || h >= static_cast<std::int64_t>(sh.h) ||
                    ww >= static_cast<std::int64_t>(sh.w))
                  continue;
                sum.add(xv[conv_x_index(sh, n, c, static_cast<std::uint64_t>(h),
                                        static_cast<std::uint64_t>(ww))],
                        wv[conv_w_index(sh, k, c, r, s)]);
              }
          y.set(conv_y_index(sh, n, k, p, q), sum.value());
        }
  return y;
}

// verify.h's allowances for output (n, k, p, q): elementwise, or of its position's projection.
double conv_allowance(const ConvShape& sh, const HostBuffer& x, const HostBuffer& w,
                      const HostBuffer& y, const ErrorModel& m, bool projection, std::uint64_t n,
                      std::uint64_t k, std::uint64_t p, std::uint64_t q) {
  double ref = 0, mag = 0, patch_sq = 0;
  for (std::uint64_t c = 0; c < sh.c; ++c)
    for (std::uint64_t r = 0; r < sh.r; ++r)
      for (std::uint64_t s = 0; s < sh.s; ++s) {
        const std::int64_t h =
            static_cast<std::int64_t>(p * sh.stride + r) - static_cast<std::int64_t>(sh.pad);
        const std::int64_t ww =
            static_cast<std::int64_t>(q * sh.stride + s) - static_cast<std::int64_t>(sh.pad);
        if (h < 0 || ww < 0 || h >= static_cast<std::int64_t>(sh.h) ||
            ww >= static_cast<std::int64_t>(sh.w))
          continue;
        const double xv = x.get(
            conv_x_index(sh, n, c, static_cast<std::uint64_t>(h), static_cast<std::uint64_t>(ww)));
        const double wv = w.get(conv_w_index(sh, k, c, r, s));
        ref += xv * wv;
        mag += std::fabs(xv * wv);
        patch_sq += xv * xv;
      }
  const double mn = min_normal(y.dtype());
  if (!projection) return m.out * (std::fabs(ref) + mn) + m.prod * mag;
  double y_sq = 0, w_sq = 0;
  for (std::uint64_t kk = 0; kk < sh.k; ++kk) {
    const double v = y.get(conv_y_index(sh, n, kk, p, q));
    y_sq += v * v;
  }
  for (std::size_t e = 0; e < w.size(); ++e) w_sq += w.get(e) * w.get(e);
  return kFreivaldsLambda *
         (m.out * (std::sqrt(y_sq) + std::sqrt(static_cast<double>(sh.k)) * mn) / (1 - m.out) +
          m.prod * std::sqrt(patch_sq) * std::sqrt(w_sq));
}

struct ConvCase {
  DType dtype;
  DType compute;
  Layout layout;
  int size;  // 0: small, elementwise; 1: small forced through projections; 2: above 2^22 MACs
};

std::string conv_case_name(const ::testing::TestParamInfo<ConvCase>& info) {
  static const char* kSizes[] = {"elementwise", "projection", "large"};
  return name(info.param.dtype) + "_" + std::string(to_string(info.param.layout)) + "_" +
         kSizes[info.param.size];
}

class ConvVerify : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvVerify, AcceptsCorrectAndCatchesEachPlantedFault) {
  const auto [d, compute, layout, size] = GetParam();
  ConvShape sh = size == 0   ? ConvShape{2, 3, 7, 6, 4, 3, 3, 1, 1, layout}
                 : size == 1 ? ConvShape{2, 16, 10, 10, 24, 3, 3, 2, 1, layout}
                             : ConvShape{2, 32, 16, 16, 32, 3, 3, 1, 1, layout};
  VerifyOptions opt;
  if (size == 1) opt.full_max_macs = 0;
  const bool projection = size != 0;
  const ConvInputs in = make_conv_inputs(d, sh, 99);
  const ErrorModel model = conv_error_model(d, d, compute, sh.c * sh.r * sh.s);

  const HostBuffer exact = conv_result(sh, in.x, in.w, d);
  Verification v = verify_conv(sh, in.x, in.w, exact, compute, opt);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.method, projection ? "freivalds+sampled+scan" : "elementwise");
  EXPECT_EQ(v.tolerance, model.tolerance);

  std::vector<HostBuffer> hardware;
  if (d == DType::kTf32) {
    hardware.push_back(
        conv_result(sh, in.x, in.w, d, Accumulate::kFloatTowardZero, Inputs::kTf32Truncated));
  } else if (d != DType::kF64) {
    hardware.push_back(conv_result(sh, in.x, in.w, d, Accumulate::kFloat));
    hardware.push_back(conv_result(sh, in.x, in.w, d, Accumulate::kFloatTowardZero));
  }
  for (const HostBuffer& y : hardware) {
    v = verify_conv(sh, in.x, in.w, y, compute, opt);
    EXPECT_TRUE(v.ok) << v.detail;
    EXPECT_LT(v.max_rel_error, 0.5 * v.tolerance);
  }

  const std::uint64_t n = 1, k = sh.k / 2, p = sh.p() / 2, q = 1;
  const std::uint64_t planted = conv_y_index(sh, n, k, p, q);
  const double allow = conv_allowance(sh, in.x, in.w, exact, model, projection, n, k, p, q);
  HostBuffer off = exact.clone();
  off.set(planted, exact.get(planted) - 10 * allow);
  v = verify_conv(sh, in.x, in.w, off, compute, opt);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, planted) << v.detail;
  EXPECT_NE(v.detail.find(std::to_string(planted)), std::string::npos) << v.detail;

  HostBuffer nan = exact.clone();
  nan.set(planted, kNaN);
  v = verify_conv(sh, in.x, in.w, nan, compute, opt);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, planted);

  HostBuffer unwritten = exact.clone();
  plant_poison(unwritten, 0);
  v = verify_conv(sh, in.x, in.w, unwritten, compute, opt);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.first_bad_index, 0u);
  EXPECT_NE(v.detail.find("never written"), std::string::npos) << v.detail;

  // The other layout's result (same logical values, wrong places) is caught.
  if (size != 2) {
    ConvShape other = sh;
    other.layout = layout == Layout::kNchw ? Layout::kNhwc : Layout::kNchw;
    const ConvInputs oin = make_conv_inputs(d, other, 99);
    const HostBuffer swapped = conv_result(other, oin.x, oin.w, d);
    v = verify_conv(sh, in.x, in.w, swapped, compute, opt);
    EXPECT_FALSE(v.ok);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConvVerify,
                         ::testing::Values(ConvCase{DType::kF32, DType::kF32, Layout::kNchw, 0},
                                           ConvCase{DType::kF32, DType::kF32, Layout::kNhwc, 0},
                                           ConvCase{DType::kF32, DType::kF32, Layout::kNchw, 1},
                                           ConvCase{DType::kF32, DType::kF32, Layout::kNhwc, 1},
                                           ConvCase{DType::kF32, DType::kF32, Layout::kNhwc, 2},
                                           ConvCase{DType::kF16, DType::kF32, Layout::kNchw, 0},
                                           ConvCase{DType::kF16, DType::kF32, Layout::kNhwc, 0},
                                           ConvCase{DType::kF16, DType::kF32, Layout::kNchw, 1},
                                           ConvCase{DType::kF16, DType::kF32, Layout::kNhwc, 1},
                                           ConvCase{DType::kF16, DType::kF32, Layout::kNchw, 2},
                                           ConvCase{DType::kBf16, DType::kF32, Layout::kNhwc, 1},
                                           ConvCase{DType::kTf32, DType::kTf32, Layout::kNchw, 1},
                                           ConvCase{DType::kF64, DType::kF64, Layout::kNchw, 1}),
                         conv_case_name);

TEST(ConvVerify, ShapeMismatchIsAProgrammingError) {
  const ConvShape sh{1, 2, 4, 4, 3, 3, 3, 1, 1, Layout::kNchw};
  const ConvInputs in = make_conv_inputs(DType::kF32, sh, 1);
  const HostBuffer y(DType::kF32, 5);
  EXPECT_THROW(verify_conv(sh, in.x, in.w, y, DType::kF32), std::invalid_argument);
}

}  // namespace
