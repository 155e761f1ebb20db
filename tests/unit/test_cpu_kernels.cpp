// CPU backend primitives, part 1: the thread pool, ISA detection, and exp on every ISA path
// against a float64 (long double for f64) std::exp reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_cache.h"
#include "backends/cpu/cpu_exp.h"
#include "backends/cpu/cpu_isa.h"
#include "backends/cpu/parallel.h"

namespace gpucheck::cpu {
namespace {

// ---------------------------------------------------------------------------------------------
// parallel_for

TEST(CpuParallel, ResolveThreads) {
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(resolve_threads(0), hw);
  EXPECT_EQ(resolve_threads(-3), hw);
  EXPECT_EQ(resolve_threads(1), 1);
  EXPECT_EQ(resolve_threads(5), 5);
  EXPECT_EQ(resolve_threads(1 << 20), kMaxThreads);
}

TEST(CpuParallel, CoversEveryIndexOnceInOrderedNearEqualRanges) {
  for (int threads : {1, 2, 3, 8}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{15},
                          std::size_t{17}, std::size_t{1000003}}) {
      std::vector<std::uint8_t> hits(n, 0);
      std::mutex m;
      std::vector<std::pair<std::size_t, std::size_t>> ranges;
      parallel_for(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) ++hits[i];  // ranges are disjoint: no race
        std::lock_guard lock(m);
        ranges.emplace_back(b, e);
      });
      EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](std::uint8_t h) { return h == 1; }))
          << "n=" << n << " threads=" << threads;
      const std::size_t parts =
          (threads == 1 || n <= 1)
              ? std::min<std::size_t>(n, 1)
              : std::min<std::size_t>(n, static_cast<std::size_t>(kPartsPerThread * threads));
      ASSERT_EQ(ranges.size(), parts) << "n=" << n << " threads=" << threads;
      std::sort(ranges.begin(), ranges.end());
      std::size_t next = 0;
      for (const auto& [b, e] : ranges) {
        EXPECT_EQ(b, next);
        EXPECT_GE(e - b, n / parts);
        EXPECT_LE(e - b, n / parts + 1);
        next = e;
      }
      EXPECT_EQ(next, n);
    }
  }
}

TEST(CpuParallel, ReusesTheSameWorkerThreads) {
  // Parts that take a while, so that the workers claim some; across calls they are the same
  // three threads.
  std::mutex m;
  std::set<std::thread::id> ids;
  for (int call = 0; call < 5; ++call) {
    parallel_for(16, 4, [&](std::size_t, std::size_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      std::lock_guard lock(m);
      ids.insert(std::this_thread::get_id());
    });
  }
  ids.erase(std::this_thread::get_id());
  EXPECT_GE(ids.size(), 1u);
  EXPECT_LE(ids.size(), 3u);
  EXPECT_EQ(&shared_pool(4), &shared_pool(4));
  EXPECT_EQ(shared_pool(4).threads(), 4);
}

// A participant stuck in its part does not hold the others' parts hostage: while the worker
// blocks in the first part it claims, the caller claims and runs all the rest.
TEST(CpuParallel, OthersTakeOverAStalledParticipantsShare) {
  ThreadPool pool(2);
  std::atomic<int> parts_run{0};
  std::atomic<bool> worker_ran{false}, worker_saw_all{false};
  const auto caller = std::this_thread::get_id();
  pool.parallel_for(8, [&](std::size_t, std::size_t) {
    ++parts_run;
    if (std::this_thread::get_id() == caller) return;
    worker_ran = true;
    for (int i = 0; i < 2000 && parts_run.load() < 8; ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    worker_saw_all = parts_run.load() == 8;
  });
  EXPECT_EQ(parts_run.load(), 8);
  if (worker_ran) {
    EXPECT_TRUE(worker_saw_all.load());
  }
}

TEST(CpuParallel, RethrowsAndStaysUsable) {
  EXPECT_THROW(parallel_for(100, 3,
                            [](std::size_t b, std::size_t) {
                              if (b > 0) throw std::runtime_error("range failed");
                            }),
               std::runtime_error);
  std::atomic<std::size_t> sum{0};
  parallel_for(100, 3, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950u);
}

TEST(CpuParallel, NestedRegionsRunSerially) {
  std::atomic<std::size_t> total{0};
  parallel_for(4, 2, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      parallel_for(10, 2, [&](std::size_t ib, std::size_t ie) { total += ie - ib; });
  });
  EXPECT_EQ(total.load(), 40u);
}

TEST(CpuParallel, ConcurrentCallersShareAPool) {
  ThreadPool pool(3);
  auto caller = [&pool](std::size_t n, std::size_t& out) {
    for (int rep = 0; rep < 200; ++rep) {
      std::atomic<std::size_t> count{0};
      pool.parallel_for(n, [&](std::size_t b, std::size_t e) { count += e - b; });
      if (count.load() != n) return;
    }
    out = n;
  };
  std::size_t a = 0, b = 0;
  std::thread t1(caller, std::size_t{1000}, std::ref(a));
  std::thread t2(caller, std::size_t{777}, std::ref(b));
  t1.join();
  t2.join();
  EXPECT_EQ(a, 1000u);
  EXPECT_EQ(b, 777u);
}

// ---------------------------------------------------------------------------------------------
// ISA detection

std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(CpuIsa, NamesRoundTripAndBestIsSupported) {
  for (IsaPath p : {IsaPath::kScalar, IsaPath::kAvx2Fma, IsaPath::kAvx512})
    EXPECT_EQ(isa_path_from_string(to_string(p)), p);
  EXPECT_FALSE(isa_path_from_string("sse9").has_value());
  EXPECT_TRUE(isa_path_supported(IsaPath::kScalar));
  EXPECT_TRUE(isa_path_supported(best_isa_path()));
  if (isa_path_supported(IsaPath::kAvx512)) {
    EXPECT_TRUE(isa_path_supported(IsaPath::kAvx2Fma));
    EXPECT_EQ(best_isa_path(), IsaPath::kAvx512);
  }
}

// The kernel lists a feature in /proc/cpuinfo only when the CPU has it and the OS saves its state.
TEST(CpuIsa, AgreesWithProcCpuinfo) {
  const auto flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
#if defined(__x86_64__)
  EXPECT_EQ(isa_path_supported(IsaPath::kAvx2Fma),
            flags.count("avx") && flags.count("avx2") && flags.count("fma"));
  EXPECT_EQ(isa_path_supported(IsaPath::kAvx512),
            isa_path_supported(IsaPath::kAvx2Fma) && flags.count("avx512f"));
#endif
}

TEST(CpuCache, ParsesSysfsSizesAndFindsALastLevel) {
  EXPECT_EQ(parse_cache_size("32768K"), std::size_t{32} << 20);
  EXPECT_EQ(parse_cache_size("1M"), std::size_t{1} << 20);
  EXPECT_EQ(parse_cache_size("512"), 512u);
  EXPECT_EQ(parse_cache_size("2G"), std::size_t{2} << 30);
  EXPECT_EQ(parse_cache_size(""), 0u);
  EXPECT_EQ(parse_cache_size("12Q"), 0u);
  const std::size_t llc = last_level_cache_bytes();
  EXPECT_GE(llc, std::size_t{256} << 10);
  EXPECT_LE(llc, std::size_t{4} << 30);
}

TEST(CpuIsa, UnsupportedPathThrows) {
  for (IsaPath p : {IsaPath::kAvx2Fma, IsaPath::kAvx512}) {
    if (isa_path_supported(p)) continue;
    float x = 1.0f, y = 0.0f;
    EXPECT_THROW(exp_f32(&x, &y, 1, 1, p), std::invalid_argument);
    return;
  }
  GTEST_SKIP() << "every ISA path is supported on this CPU";
}

// ---------------------------------------------------------------------------------------------
// exp

// The accuracy the kernels reach (DESIGN.md's tolerances are 2e-6 and 1e-14; these catch drift).
constexpr double kF32Bound = 2e-7;
constexpr double kF64Bound = 1e-15;

template <class T>
struct ExpTraits;
template <>
struct ExpTraits<float> {
  static constexpr double kBound = kF32Bound;
  static void run(const float* x, float* y, std::size_t n, int t, IsaPath p, StoreMode s) {
    exp_f32(x, y, n, t, p, s);
  }
  static long double ref(float x) { return std::exp(static_cast<double>(x)); }
};
template <>
struct ExpTraits<double> {
  static constexpr double kBound = kF64Bound;
  static void run(const double* x, double* y, std::size_t n, int t, IsaPath p, StoreMode s) {
    exp_f64(x, y, n, t, p, s);
  }
  static long double ref(double x) { return std::exp(static_cast<long double>(x)); }
};

template <class T>
std::vector<long double> exp_reference(const std::vector<T>& x) {
  std::vector<long double> ref(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) ref[i] = ExpTraits<T>::ref(x[i]);
  return ref;
}

// Checks y against exp(x) and returns the largest relative error among normal results. Results
// that overflow must be +inf, denormal ones may be off by one denormal step (their precision).
template <class T>
double check_exp(const std::vector<T>& x, const std::vector<long double>& ref, const T* y,
                 const std::string& what) {
  using L = std::numeric_limits<T>;
  const double bound = ExpTraits<T>::kBound;
  const long double max = L::max(), min = L::min(), denorm = L::denorm_min();
  double worst = 0.0;
  int failures = 0;
  for (std::size_t i = 0; i < x.size() && failures < 5; ++i) {
    const T got = y[i];
    bool ok;
    if (std::isnan(x[i])) {
      ok = std::isnan(got);
    } else if (ref[i] > max * (1 + bound)) {
      ok = std::isinf(got) && got > 0;
    } else if (ref[i] > max * (1 - bound) && std::isinf(got)) {
      ok = got > 0;  // within rounding of the largest finite value: +inf is right too
    } else {
      const long double err = std::fabs(static_cast<long double>(got) - ref[i]);
      ok = std::isfinite(got) && err <= bound * ref[i] + denorm;
      if (ref[i] >= min) worst = std::max(worst, static_cast<double>(err / ref[i]));
    }
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << ": exp(" << std::hexfloat << x[i] << ") = " << got << ", expected "
                    << static_cast<double>(ref[i]) << std::defaultfloat << " (index " << i << ")";
    }
  }
  return worst;
}

template <class T>
std::vector<T> uniform_inputs(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<T> dist(T(-10), T(10));
  std::vector<T> x(n);
  for (auto& v : x) v = dist(gen);
  return x;
}

template <class T>
std::vector<T> edge_inputs() {
  using L = std::numeric_limits<T>;
  std::vector<T> x = {T(0),          -T(0),          L::denorm_min(), -L::denorm_min(), L::min(),
                      T(1e-30),      T(1),           T(-1),           T(0.5),           T(-0.5),
                      L::infinity(), -L::infinity(), L::quiet_NaN(),  -L::quiet_NaN(),  L::max(),
                      L::lowest(),   T(1000),        T(-1000),        T(1e30),          T(-1e30)};
  if constexpr (sizeof(T) == 4) {
    // ln(FLT_MAX) = 88.7228; normal results end near -87.34, denormals near -103.97.
    for (T v : {88.5f, 88.72f, 88.73f, 89.0f, 100.0f, 101.0f, -87.3f, -87.4f, -88.0f, -95.0f,
                -100.0f, -103.0f, -103.9f, -104.0f, -110.0f, -111.0f, 0.3465736f, -0.3465736f})
      x.push_back(v);
  } else {
    // ln(DBL_MAX) = 709.78; normal results end near -708.40, denormals near -745.13.
    for (T v : {709.0, 709.78, 709.79, 710.0, 720.0, 721.0, -708.3, -708.5, -720.0, -740.0, -744.0,
                -745.0, -745.2, -746.0, -760.0, -761.0, 0.34657359027997264})
      x.push_back(v);
  }
  return x;
}

// A dense sweep across the whole finite-result range and both ends.
template <class T>
std::vector<T> sweep_inputs() {
  const T lo = sizeof(T) == 4 ? T(-115) : T(-770), hi = sizeof(T) == 4 ? T(95) : T(715);
  const std::size_t n = 200001;
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = lo + (hi - lo) * static_cast<T>(i) / T(n - 1);
  return x;
}

std::vector<IsaPath> supported_paths() {
  std::vector<IsaPath> paths;
  for (IsaPath p : {IsaPath::kScalar, IsaPath::kAvx2Fma, IsaPath::kAvx512})
    if (isa_path_supported(p)) paths.push_back(p);
  return paths;
}

class CpuExp : public ::testing::TestWithParam<IsaPath> {};

template <class T>
void expect_accurate_on(IsaPath path, const std::vector<T>& x, const std::string& name) {
  const auto ref = exp_reference(x);
  for (StoreMode stores : {StoreMode::kRegular, StoreMode::kStreaming}) {
    std::vector<T> y(x.size(), T(-7));
    ExpTraits<T>::run(x.data(), y.data(), x.size(), 2, path, stores);
    const double worst = check_exp(x, ref, y.data(), std::string(to_string(path)) + " " + name);
    EXPECT_LE(worst, ExpTraits<T>::kBound) << name;
    ::testing::Test::RecordProperty(
        std::string("max_rel_error_") + (sizeof(T) == 4 ? "f32_" : "f64_") + name,
        (std::ostringstream() << std::scientific << std::setprecision(3) << worst).str());
  }
}

TEST_P(CpuExp, F32UniformEdgesAndSweep) {
  expect_accurate_on(GetParam(), uniform_inputs<float>(1000003, 11), "uniform");
  expect_accurate_on(GetParam(), edge_inputs<float>(), "edges");
  expect_accurate_on(GetParam(), sweep_inputs<float>(), "sweep");
}

TEST_P(CpuExp, F64UniformEdgesAndSweep) {
  expect_accurate_on(GetParam(), uniform_inputs<double>(1000003, 12), "uniform");
  expect_accurate_on(GetParam(), edge_inputs<double>(), "edges");
  expect_accurate_on(GetParam(), sweep_inputs<double>(), "sweep");
}

// Odd sizes and misaligned arrays cover the vector tails and the streaming head; guard elements
// on both sides catch a write out of bounds.
template <class T>
void expect_tails(IsaPath path) {
  constexpr std::size_t kGuard = 64;
  const T poison = T(-12345);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{17},
                        std::size_t{100}, std::size_t{1000003}}) {
    const auto x = uniform_inputs<T>(n, 100 + n);
    const auto ref = exp_reference(x);
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      for (StoreMode stores : {StoreMode::kAuto, StoreMode::kRegular, StoreMode::kStreaming}) {
        std::vector<T> buf(n + 2 * kGuard + offset, poison);
        T* y = buf.data() + kGuard + offset;
        ExpTraits<T>::run(x.data(), y, n, 3, path, stores);
        const std::string what = std::string(to_string(path)) + " n=" + std::to_string(n) +
                                 " offset=" + std::to_string(offset);
        check_exp(x, ref, y, what);
        for (std::size_t i = 0; i < kGuard + offset; ++i) ASSERT_EQ(buf[i], poison) << what;
        for (std::size_t i = kGuard + offset + n; i < buf.size(); ++i)
          ASSERT_EQ(buf[i], poison) << what;
      }
    }
  }
}

TEST_P(CpuExp, F32TailsAndAlignment) {
  expect_tails<float>(GetParam());
}
TEST_P(CpuExp, F64TailsAndAlignment) {
  expect_tails<double>(GetParam());
}

template <class T>
void expect_thread_count_invariant(IsaPath path) {
  const auto x = uniform_inputs<T>(1000003, 21);
  std::vector<T> one(x.size()), many(x.size());
  ExpTraits<T>::run(x.data(), one.data(), x.size(), 1, path, StoreMode::kRegular);
  for (int threads : {2, 3, 7, 0}) {
    for (StoreMode stores : {StoreMode::kRegular, StoreMode::kStreaming}) {
      std::fill(many.begin(), many.end(), T(0));
      ExpTraits<T>::run(x.data(), many.data(), x.size(), threads, path, stores);
      ASSERT_TRUE(std::equal(one.begin(), one.end(), many.begin()))
          << to_string(path) << " threads=" << threads;
    }
  }
}

TEST_P(CpuExp, F32MultithreadedEqualsSingleThreaded) {
  expect_thread_count_invariant<float>(GetParam());
}
TEST_P(CpuExp, F64MultithreadedEqualsSingleThreaded) {
  expect_thread_count_invariant<double>(GetParam());
}

TEST_P(CpuExp, InPlace) {
  auto x = uniform_inputs<float>(4099, 31);
  std::vector<float> expected(x.size());
  exp_f32(x.data(), expected.data(), x.size(), 2, GetParam());
  exp_f32(x.data(), x.data(), x.size(), 2, GetParam());
  EXPECT_EQ(x, expected);
  auto xd = uniform_inputs<double>(4099, 32);
  std::vector<double> expected_d(xd.size());
  exp_f64(xd.data(), expected_d.data(), xd.size(), 2, GetParam());
  exp_f64(xd.data(), xd.data(), xd.size(), 2, GetParam());
  EXPECT_EQ(xd, expected_d);
}

INSTANTIATE_TEST_SUITE_P(Paths, CpuExp, ::testing::ValuesIn(supported_paths()),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(CpuExpPaths, AllPathsRunHereAndAgree) {
  if (!isa_path_supported(IsaPath::kAvx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  const auto x = uniform_inputs<float>(10007, 41);
  std::vector<float> a(x.size()), b(x.size()), c(x.size());
  exp_f32(x.data(), a.data(), x.size(), 1, IsaPath::kScalar);
  exp_f32(x.data(), b.data(), x.size(), 1, IsaPath::kAvx2Fma);
  exp_f32(x.data(), c.data(), x.size(), 1, IsaPath::kAvx512);
  for (std::size_t i = 0; i < x.size(); ++i) {
    // Same algorithm; FMA and rounding-mode differences move results by at most a couple of ulp.
    ASSERT_NEAR(a[i], c[i], 4e-7 * c[i]) << i;
    ASSERT_NEAR(b[i], c[i], 4e-7 * c[i]) << i;
  }
}

TEST(CpuExpPaths, DefaultOverloadUsesBestPath) {
  const auto x = uniform_inputs<float>(5000, 51);
  std::vector<float> a(x.size()), b(x.size());
  exp_f32(x.data(), a.data(), x.size(), 2);
  exp_f32(x.data(), b.data(), x.size(), 2, best_isa_path());
  EXPECT_EQ(a, b);
  const auto xd = uniform_inputs<double>(5000, 52);
  std::vector<double> ad(xd.size()), bd(xd.size());
  exp_f64(xd.data(), ad.data(), xd.size(), 2);
  exp_f64(xd.data(), bd.data(), xd.size(), 2, best_isa_path());
  EXPECT_EQ(ad, bd);
}

}  // namespace
}  // namespace gpucheck::cpu
