// CPU backend primitives, part 2: GEMM through the run-time-loaded BLAS (every family installed
// here: OpenBLAS, BLIS, OpenBLAS ILP64), im2col + GEMM convolution (against a direct float64
// convolution) and the multithreaded copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/blas_library.h"
#include "backends/cpu/cpu_conv.h"
#include "backends/cpu/cpu_copy.h"
#include "backends/cpu/cpu_gemm.h"
#include "core/environment.h"
#include "core/workload.h"

namespace gpucheck::cpu {
namespace {

template <class T>
std::vector<T> normal_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<T> dist;
  std::vector<T> v(n);
  for (auto& e : v) e = dist(gen);
  return v;
}

// |got − ref| ≤ 8·len·u·Σ|terms| + tiny, per element, where u is the unit roundoff of T and len
// the accumulation length: the standard bound for a dot product, with a safety factor.
template <class T>
::testing::AssertionResult near_sums(const std::vector<T>& got, const std::vector<double>& ref,
                                     const std::vector<double>& abs_sum, std::size_t len) {
  const double u = std::numeric_limits<T>::epsilon() / 2;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double tol =
        8.0 * static_cast<double>(std::max<std::size_t>(len, 1)) * u * abs_sum[i] + 1e-30;
    if (!(std::fabs(static_cast<double>(got[i]) - ref[i]) <= tol))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", expected " << ref[i] << " ± " << tol;
  }
  return ::testing::AssertionSuccess();
}

// The library the search finds (what gpucheck runs), or one by soname; nullptr when absent.
const BlasLibrary* blas_named(const std::string& name = "") {
  static std::map<std::string, std::unique_ptr<BlasLibrary>> opened;
  auto it = opened.find(name);
  if (it != opened.end()) return it->second.get();
  std::string error;
  auto lib = name.empty() ? BlasLibrary::open(current_environment(), &error)
                          : BlasLibrary::open_one(name, "test", &error);
  return (opened[name] = std::move(lib)).get();
}

const BlasLibrary& test_blas() {
  const BlasLibrary* lib = blas_named();
  if (lib == nullptr) throw std::runtime_error("no BLAS on this machine: install libopenblas0");
  return *lib;
}

// ---------------------------------------------------------------------------------------------
// GEMM

template <class T>
void gemm(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, T* c, int threads,
          const BlasLibrary& blas = test_blas()) {
  if constexpr (sizeof(T) == 4)
    gemm_f32(blas, m, n, k, a, b, c, threads);
  else
    gemm_f64(blas, m, n, k, a, b, c, threads);
}

template <class T>
void expect_gemm_matches_reference(int threads, const BlasLibrary& blas = test_blas()) {
  struct Dims {
    std::size_t m, n, k;
  };
  for (Dims d : {Dims{1, 1, 1}, Dims{17, 15, 33}, Dims{64, 1, 7}, Dims{1, 64, 9}, Dims{3, 5, 0},
                 Dims{129, 65, 257}, Dims{200, 199, 3}}) {
    const auto a = normal_values<T>(d.m * d.k, 1 + d.m);
    const auto b = normal_values<T>(d.k * d.n, 2 + d.n);
    std::vector<T> c(d.m * d.n, std::numeric_limits<T>::quiet_NaN());
    gemm<T>(d.m, d.n, d.k, a.data(), b.data(), c.data(), threads, blas);
    std::vector<double> ref(c.size(), 0.0), abs_sum(c.size(), 0.0);
    for (std::size_t i = 0; i < d.m; ++i)
      for (std::size_t j = 0; j < d.n; ++j)
        for (std::size_t p = 0; p < d.k; ++p) {
          const double t = static_cast<double>(a[i * d.k + p]) * b[p * d.n + j];
          ref[i * d.n + j] += t;
          abs_sum[i * d.n + j] += std::fabs(t);
        }
    EXPECT_TRUE(near_sums(c, ref, abs_sum, d.k))
        << "m=" << d.m << " n=" << d.n << " k=" << d.k << " threads=" << threads;
  }
}

TEST(CpuGemm, F32MatchesReference) {
  expect_gemm_matches_reference<float>(1);
  expect_gemm_matches_reference<float>(2);
}

TEST(CpuGemm, F64MatchesReference) {
  expect_gemm_matches_reference<double>(1);
  expect_gemm_matches_reference<double>(0);
}

TEST(CpuGemm, MultithreadedAgreesWithSingleThreaded) {
  const std::size_t m = 300, n = 257, k = 311;
  const auto a = normal_values<float>(m * k, 5), b = normal_values<float>(k * n, 6);
  std::vector<float> one(m * n), many(m * n);
  gemm_f32(test_blas(), m, n, k, a.data(), b.data(), one.data(), 1);
  gemm_f32(test_blas(), m, n, k, a.data(), b.data(), many.data(), 2);
  for (std::size_t i = 0; i < one.size(); ++i)
    ASSERT_NEAR(one[i], many[i], 1e-4 * (1 + std::fabs(one[i]))) << i;
}

TEST(CpuGemm, EmptyAndOversized) {
  gemm_f32(test_blas(), 0, 4, 4, nullptr, nullptr, nullptr, 1);  // nothing written, nothing read
  const std::size_t too_big = std::size_t{1} << 40;
  float dummy = 0.0f;
  if (test_blas().int_bits() == 64) GTEST_SKIP() << "an ILP64 BLAS takes 2^40";
  EXPECT_THROW(gemm_f32(test_blas(), 1, 1, too_big, &dummy, &dummy, &dummy, 1),
               std::invalid_argument);
  EXPECT_THROW(gemm_f64(test_blas(), too_big, 1, 1, nullptr, nullptr, nullptr, 1),
               std::invalid_argument);
}

// Each BLAS family installed here, through the same table: LP64 OpenBLAS, BLIS (its CBLAS layer,
// 64-bit internal integers) and Debian's ILP64 OpenBLAS (plain names, 64-bit integers).
TEST(CpuGemm, EveryInstalledFamilyMatchesReference) {
  int tried = 0;
  for (const char* name : {"libopenblas.so.0", "libblis.so.4", "libopenblas64.so.0"}) {
    const BlasLibrary* lib = blas_named(name);
    if (lib == nullptr) {
      std::printf("  %s not installed here: not tested\n", name);
      continue;
    }
    SCOPED_TRACE(lib->describe());
    ++tried;
    expect_gemm_matches_reference<float>(2, *lib);
    expect_gemm_matches_reference<double>(1, *lib);
  }
  if (tried == 0) GTEST_SKIP() << "no BLAS installed";
}

TEST(CpuGemm, KnowsTheIntegerWidthOfEachFamily) {
  if (const auto* lib = blas_named("libopenblas64.so.0")) {
    EXPECT_EQ(lib->family(), BlasFamily::kOpenblas);
    EXPECT_EQ(lib->int_bits(), 64) << lib->config();
  }
  if (const auto* lib = blas_named("libblis.so.4")) {
    EXPECT_EQ(lib->family(), BlasFamily::kBlis);
    EXPECT_EQ(lib->int_bits(), 32);
    EXPECT_FALSE(lib->kernel().empty());
    EXPECT_FALSE(lib->version().empty());
  }
  const BlasLibrary* lib = blas_named("libopenblas.so.0");
  if (lib == nullptr) GTEST_SKIP() << "libopenblas.so.0 not installed";
  EXPECT_EQ(lib->family(), BlasFamily::kOpenblas);
  EXPECT_EQ(lib->int_bits(), 32);
  EXPECT_FALSE(lib->kernel().empty());
  EXPECT_NE(lib->describe().find("OpenBLAS " + lib->version()), std::string::npos)
      << lib->describe();
}

TEST(CpuGemm, NotABlasIsRefusedWithTheMissingSymbols) {
  std::string error;
  EXPECT_EQ(BlasLibrary::open_one("libm.so.6", "test", &error), nullptr);
  EXPECT_NE(error.find("cblas_sgemm"), std::string::npos) << error;
  EXPECT_EQ(BlasLibrary::open(EnvMap{{"GPUCHECK_BLAS_LIB", "/nonexistent/libblas.so"}}, &error),
            nullptr);
  EXPECT_NE(error.find("/nonexistent/libblas.so"), std::string::npos) << error;
}

// ---------------------------------------------------------------------------------------------
// conv2d

std::string describe(const ConvShape& s) {
  return std::to_string(s.n) + "," + std::to_string(s.c) + "," + std::to_string(s.h) + "," +
         std::to_string(s.w) + "," + std::to_string(s.k) + "," + std::to_string(s.r) + "," +
         std::to_string(s.s) + " stride " + std::to_string(s.stride) + " pad " +
         std::to_string(s.pad);
}

// Direct cross-correlation in float64, NCHW / KCRS / NKPQ; also Σ|terms| for the tolerance.
void conv_reference(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                    std::vector<double>& y, std::vector<double>& abs_sum) {
  const auto P = static_cast<std::int64_t>(s.p()), Q = static_cast<std::int64_t>(s.q());
  const auto H = static_cast<std::int64_t>(s.h), W = static_cast<std::int64_t>(s.w);
  const auto pad = static_cast<std::int64_t>(s.pad), st = static_cast<std::int64_t>(s.stride);
  y.assign(s.n * s.k * P * Q, 0.0);
  abs_sum.assign(y.size(), 0.0);
  for (std::uint64_t n = 0; n < s.n; ++n)
    for (std::uint64_t k = 0; k < s.k; ++k)
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t q = 0; q < Q; ++q) {
          const std::size_t out = ((n * s.k + k) * P + p) * Q + q;
          for (std::uint64_t c = 0; c < s.c; ++c)
            for (std::int64_t r = 0; r < static_cast<std::int64_t>(s.r); ++r)
              for (std::int64_t t = 0; t < static_cast<std::int64_t>(s.s); ++t) {
                const std::int64_t ih = p * st - pad + r, iw = q * st - pad + t;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const double v = static_cast<double>(x[((n * s.c + c) * H + ih) * W + iw]) *
                                 w[((k * s.c + c) * s.r + r) * s.s + t];
                y[out] += v;
                abs_sum[out] += std::fabs(v);
              }
        }
}

// NCHW (or KCRS) → NHWC (or KRSC): dims a×b×(c·d) with the b axis moved last.
std::vector<float> channels_last(const std::vector<float>& v, std::uint64_t outer,
                                 std::uint64_t channels, std::uint64_t pixels) {
  std::vector<float> out(v.size());
  for (std::uint64_t o = 0; o < outer; ++o)
    for (std::uint64_t c = 0; c < channels; ++c)
      for (std::uint64_t p = 0; p < pixels; ++p)
        out[(o * pixels + p) * channels + c] = v[(o * channels + c) * pixels + p];
  return out;
}

const std::vector<ConvShape>& conv_shapes() {
  static const std::vector<ConvShape> shapes = {
      {2, 3, 7, 9, 4, 3, 3, 1, 1},      // 3×3 same, non-square image
      {1, 2, 8, 5, 3, 3, 2, 2, 0},      // stride 2, no padding, non-square filter
      {2, 3, 9, 11, 5, 5, 3, 2, 3},     // pad 3 > S−1: whole output columns in the padding
      {1, 1, 1, 1, 1, 1, 1, 1, 0},      // trivial
      {3, 4, 6, 6, 8, 1, 1, 1, 0},      // pointwise: no im2col
      {2, 3, 5, 7, 2, 1, 1, 2, 1},      // 1×1 with stride and padding
      {1, 5, 4, 4, 3, 4, 4, 1, 0},      // filter as large as the image: 1×1 output
      {1, 2, 3, 3, 2, 3, 3, 3, 3},      // stride 3, pad 3
      {2, 16, 12, 10, 24, 3, 3, 1, 1},  // few units: OpenBLAS threads inside each
      {5, 3, 9, 7, 4, 3, 3, 1, 1},      // units spread over the pool
      {6, 4, 5, 5, 3, 1, 1, 1, 0},      // pointwise, units spread over the pool
  };
  return shapes;
}

struct ConvCase {
  ConvShape shape;
  std::vector<float> x, w;
  std::vector<double> ref, abs_sum;
  explicit ConvCase(const ConvShape& s, std::uint64_t seed) : shape(s) {
    x = normal_values<float>(s.n * s.c * s.h * s.w, seed);
    w = normal_values<float>(s.k * s.c * s.r * s.s, seed + 1);
    conv_reference(s, x, w, ref, abs_sum);
  }
  std::size_t len() const { return shape.c * shape.r * shape.s; }
  std::vector<float> run_nchw(int threads, std::size_t scratch = kConvScratchBytes,
                              ConvScratch* reuse = nullptr) const {
    std::vector<float> y(ref.size(), std::numeric_limits<float>::quiet_NaN());
    conv2d_nchw_f32(test_blas(), shape, x.data(), w.data(), y.data(), threads,
                    {.max_scratch_bytes = scratch, .scratch = reuse});
    return y;
  }
  // Runs in NHWC and returns the result converted back to NCHW.
  std::vector<float> run_nhwc(int threads, std::size_t scratch = kConvScratchBytes,
                              ConvScratch* reuse = nullptr) const {
    const auto xl = channels_last(x, shape.n, shape.c, shape.h * shape.w);
    const auto wl = channels_last(w, shape.k, shape.c, shape.r * shape.s);
    std::vector<float> yl(ref.size(), std::numeric_limits<float>::quiet_NaN());
    conv2d_nhwc_f32(test_blas(), shape, xl.data(), wl.data(), yl.data(), threads,
                    {.max_scratch_bytes = scratch, .scratch = reuse});
    const std::uint64_t pixels = shape.p() * shape.q();
    std::vector<float> y(yl.size());
    for (std::uint64_t n = 0; n < shape.n; ++n)
      for (std::uint64_t p = 0; p < pixels; ++p)
        for (std::uint64_t k = 0; k < shape.k; ++k)
          y[(n * shape.k + k) * pixels + p] = yl[(n * pixels + p) * shape.k + k];
    return y;
  }
};

TEST(CpuConv, NchwMatchesDirectConvolution) {
  std::uint64_t seed = 100;
  for (const auto& s : conv_shapes()) {
    const ConvCase cc(s, seed += 2);
    for (int threads : {1, 2, 3})
      EXPECT_TRUE(near_sums(cc.run_nchw(threads), cc.ref, cc.abs_sum, cc.len()))
          << describe(s) << " threads=" << threads;
  }
}

TEST(CpuConv, NhwcMatchesDirectConvolution) {
  std::uint64_t seed = 200;
  for (const auto& s : conv_shapes()) {
    const ConvCase cc(s, seed += 2);
    for (int threads : {1, 2, 3})
      EXPECT_TRUE(near_sums(cc.run_nhwc(threads), cc.ref, cc.abs_sum, cc.len()))
          << describe(s) << " threads=" << threads;
  }
}

// A scratch bound of a few pixels forces the blocked paths, including ragged last blocks.
TEST(CpuConv, BoundedScratchGivesTheSameResult) {
  std::uint64_t seed = 300;
  for (const auto& s : conv_shapes()) {
    const ConvCase cc(s, seed += 2);
    const std::size_t tiny = 5 * cc.len() * sizeof(float);
    EXPECT_TRUE(near_sums(cc.run_nchw(2, tiny), cc.ref, cc.abs_sum, cc.len())) << describe(s);
    EXPECT_TRUE(near_sums(cc.run_nhwc(2, tiny), cc.ref, cc.abs_sum, cc.len())) << describe(s);
    EXPECT_TRUE(near_sums(cc.run_nchw(1, 1), cc.ref, cc.abs_sum, cc.len())) << describe(s);
    if (s.r * s.s == 1 && s.stride == 1 && s.pad == 0) {
      EXPECT_EQ(conv2d_scratch_bytes(s, Layout::kNchw, 2), 0u);
      continue;
    }
    const std::size_t pixels = std::min<std::size_t>(5, s.p() * s.q());
    EXPECT_EQ(conv2d_scratch_bytes(s, Layout::kNchw, 1, tiny), pixels * cc.len() * sizeof(float))
        << describe(s);
    for (auto layout : {Layout::kNchw, Layout::kNhwc}) {
      for (int threads : {1, 2, 3}) {
        const std::size_t column = cc.len() * sizeof(float);
        EXPECT_LE(conv2d_scratch_bytes(s, layout, threads, tiny),
                  std::max(tiny, static_cast<std::size_t>(threads) * column))
            << describe(s);
        EXPECT_LE(conv2d_scratch_bytes(s, layout, threads), kConvScratchBytes);
      }
    }
  }
}

// One ConvScratch reused across shapes, layouts and thread counts: it grows to the largest need
// and every result stays right.
TEST(CpuConv, ReusedScratchGrowsAndStaysCorrect) {
  ConvScratch scratch;
  std::size_t needed = 0;
  std::uint64_t seed = 500;
  for (const auto& s : conv_shapes()) {
    const ConvCase cc(s, seed += 2);
    for (int threads : {1, 2}) {
      EXPECT_TRUE(near_sums(cc.run_nchw(threads, kConvScratchBytes, &scratch), cc.ref, cc.abs_sum,
                            cc.len()))
          << describe(s);
      EXPECT_TRUE(near_sums(cc.run_nhwc(threads, kConvScratchBytes, &scratch), cc.ref, cc.abs_sum,
                            cc.len()))
          << describe(s);
      for (auto layout : {Layout::kNchw, Layout::kNhwc})
        needed = std::max(needed, conv2d_scratch_bytes(s, layout, threads));
    }
  }
  EXPECT_EQ(scratch.capacity() * sizeof(float), needed);
}

TEST(CpuConv, MultithreadedAgreesWithSingleThreaded) {
  const ConvCase cc({4, 32, 20, 18, 16, 3, 3, 1, 1}, 400);
  const auto one = cc.run_nchw(1), many = cc.run_nchw(2);
  for (std::size_t i = 0; i < one.size(); ++i)
    ASSERT_NEAR(one[i], many[i], 1e-4 * (1 + std::fabs(one[i]))) << i;
}

TEST(CpuConv, RejectsBadShapes) {
  float dummy = 0.0f;
  auto bad = [&](ConvShape s) {
    EXPECT_THROW(conv2d_nchw_f32(test_blas(), s, &dummy, &dummy, &dummy, 1), std::invalid_argument)
        << describe(s);
    EXPECT_THROW(conv2d_nhwc_f32(test_blas(), s, &dummy, &dummy, &dummy, 1), std::invalid_argument)
        << describe(s);
  };
  bad({0, 1, 4, 4, 1, 3, 3, 1, 1});
  bad({1, 1, 4, 4, 0, 3, 3, 1, 1});
  bad({1, 1, 4, 4, 1, 3, 3, 0, 1});
  bad({1, 1, 2, 4, 1, 5, 3, 1, 1});  // 5 > 2 + 2·1
  bad({1, 1, 4, 4, 1, 3, 3, 1, std::uint64_t{1} << 40});
}

// ---------------------------------------------------------------------------------------------
// copy

TEST(CpuCopy, CopiesEveryByteAndNothingElse) {
  constexpr std::size_t kGuard = 64;
  std::mt19937_64 gen(7);
  for (std::size_t bytes :
       {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{17}, std::size_t{4095},
        std::size_t{4097}, std::size_t{1000003}, (std::size_t{3} << 20) + 5}) {
    std::vector<unsigned char> src(bytes + 8);
    for (auto& b : src) b = static_cast<unsigned char>(gen());
    for (std::size_t src_off : {std::size_t{0}, std::size_t{5}}) {
      for (std::size_t dst_off : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
        for (CopyStores stores :
             {CopyStores::kAuto, CopyStores::kRegular, CopyStores::kStreaming}) {
          for (int threads : {1, 3}) {
            std::vector<unsigned char> dst(bytes + 2 * kGuard, 0xA5);
            copy_bytes(dst.data() + kGuard + dst_off, src.data() + src_off, bytes, threads, stores);
            const std::string what = "bytes=" + std::to_string(bytes) +
                                     " dst_off=" + std::to_string(dst_off) +
                                     " threads=" + std::to_string(threads);
            ASSERT_TRUE(std::equal(src.begin() + static_cast<std::ptrdiff_t>(src_off),
                                   src.begin() + static_cast<std::ptrdiff_t>(src_off + bytes),
                                   dst.begin() + static_cast<std::ptrdiff_t>(kGuard + dst_off)))
                << what;
            for (std::size_t i = 0; i < kGuard + dst_off; ++i) ASSERT_EQ(dst[i], 0xA5) << what;
            for (std::size_t i = kGuard + dst_off + bytes; i < dst.size(); ++i)
              ASSERT_EQ(dst[i], 0xA5) << what;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpucheck::cpu
