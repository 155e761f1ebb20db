// Break-even sweeps: the ranges, the size flags, the break-even rule with exact numbers, and the
// analysis of fabricated records.
#include "bench/sweep.h"
#include "core/errors.h"

#include <gtest/gtest.h>

namespace {

using namespace gpucheck;
using namespace gpucheck::bench;

TEST(SweepRange, FullRangesDoubleFromFirstToLast) {
  auto exp = make_sweep("exp", "");
  ASSERT_EQ(exp.sizes.size(), 19u);  // 2^10 … 2^28
  EXPECT_EQ(exp.sizes.front(), 1024u);
  EXPECT_EQ(exp.sizes.back(), std::uint64_t{1} << 28);
  auto gemm = make_sweep("gemm", "");
  EXPECT_EQ(gemm.sizes, (std::vector<std::uint64_t>{64, 128, 256, 512, 1024, 2048, 4096, 8192}));
  auto conv = make_sweep("conv", "");
  EXPECT_EQ(conv.sizes, (std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
}

TEST(SweepRange, MaxCutsTheRangeAndNeverExtendsIt) {
  EXPECT_EQ(make_sweep("exp", "2^12").sizes, (std::vector<std::uint64_t>{1024, 2048, 4096}));
  EXPECT_EQ(make_sweep("gemm", "300").sizes, (std::vector<std::uint64_t>{64, 128, 256}));
  EXPECT_EQ(make_sweep("conv", "1").sizes, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(make_sweep("gemm", "100000").sizes.back(), 8192u);
}

TEST(SweepRange, BadInputIsAUsageError) {
  EXPECT_THROW(make_sweep("copy", ""), UsageError);
  EXPECT_THROW(make_sweep("latency", ""), UsageError);
  EXPECT_THROW(make_sweep("exp", "1000"), UsageError);  // below 2^10
  EXPECT_THROW(make_sweep("gemm", "x"), UsageError);
  EXPECT_THROW(make_sweep("gemm", "64,128"), UsageError);
  EXPECT_THROW(make_sweep("conv", "0"), UsageError);
}

TEST(SweepRange, SizeFlagsInTheFormsTheSizeFlagsTake) {
  EXPECT_EQ(sweep_size_flag(make_sweep("exp", "2^11")), "1024,2048");
  EXPECT_EQ(sweep_size_flag(make_sweep("gemm", "128")), "64,128");
  EXPECT_EQ(sweep_size_flag(make_sweep("conv", "2")),
            "1,64,56,56,64,3,3,1,1;2,64,56,56,64,3,3,1,1");
}

// size, device median/min/max, CPU median/min/max
SweepPoint pt(std::uint64_t size, double med, double lo, double hi, double cmed, double clo,
              double chi) {
  return {size, med, lo, hi, cmed, clo, chi};
}

TEST(BreakEven, NeedsASmallerMedianAndDisjointRanges) {
  EXPECT_TRUE(beats_cpu(pt(1, 1.0, 0.9, 1.1, 2.0, 1.9, 2.1)));
  EXPECT_FALSE(beats_cpu(pt(1, 1.0, 0.9, 2.0, 2.0, 1.9, 2.1)));  // device max above CPU min
  EXPECT_FALSE(beats_cpu(pt(1, 2.0, 1.9, 2.1, 1.0, 0.9, 1.1)));  // the CPU is faster
  EXPECT_FALSE(beats_cpu(pt(1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)));  // a tie is no win
}

TEST(BreakEven, SmallestSizeFromWhichEveryLargerSizeWins) {
  std::vector<SweepPoint> p = {pt(64, 5, 4, 6, 1, 1, 1), pt(128, 1, 1, 1, 2, 2, 2),  // wins once
                               pt(256, 3, 3, 3, 2, 2, 2),                            // loses
                               pt(512, 1, 1, 1, 4, 4, 4), pt(1024, 1, 1, 1, 8, 8, 8)};
  EXPECT_EQ(break_even(p), std::optional<std::uint64_t>(512));
}

TEST(BreakEven, NoneInRangeWhenTheLargestSizeLosesOrOverlaps) {
  std::vector<SweepPoint> p = {pt(64, 1, 1, 1, 2, 2, 2), pt(128, 1, 0.5, 2.5, 2, 2, 2)};
  EXPECT_EQ(break_even(p), std::nullopt);
  EXPECT_EQ(break_even({}), std::nullopt);
}

TEST(BreakEven, WinningEverywhereIsTheFirstSize) {
  std::vector<SweepPoint> p = {pt(64, 1, 1, 1, 2, 2, 2), pt(128, 1, 1, 1, 3, 3, 3)};
  EXPECT_EQ(break_even(p), std::optional<std::uint64_t>(64));
}

nlohmann::json rec(const std::string& device, std::uint64_t n, double med, double lo, double hi,
                   const std::string& transfers = "excluded", const std::string& status = "ok",
                   const std::string& dtype = "f32") {
  nlohmann::json r = {{"device", device},
                      {"backend", device == "cpu" ? "cpu" : "opencl"},
                      {"device_name", device == "cpu" ? "CPU" : "GPU \"x\""},
                      {"op", "exp"},
                      {"dtype", dtype},
                      {"shape", {{"n", n}}},
                      {"transfers", transfers},
                      {"status", status}};
  if (status == "ok") r["time_s"] = {{"median", med}, {"min", lo}, {"max", hi}};
  return r;
}

TEST(SweepAnalysis, SeriesPerTransfersWithCpuTimesAndBreakEven) {
  SweepSpec spec{Op::kExp, {1024, 2048, 4096}};
  nlohmann::json results = {rec("cpu", 1024, 1, 1, 1),
                            rec("cpu", 2048, 2, 2, 2),
                            rec("cpu", 4096, 4, 4, 4),
                            rec("opencl0", 1024, 3, 3, 3),
                            rec("opencl0", 1024, 9, 9, 9, "included"),
                            rec("opencl0", 2048, 1, 1, 1),
                            rec("opencl0", 2048, 9, 9, 9, "included"),
                            rec("opencl0", 4096, 1, 1, 1),
                            rec("opencl0", 4096, 0, 0, 0, "included", "skipped")};
  auto s = analyze_sweep(spec, results);
  EXPECT_EQ(s["op"], "exp");
  EXPECT_EQ(s["parameter"], "elements");
  EXPECT_EQ(s["sizes"], nlohmann::json({1024, 2048, 4096}));
  ASSERT_EQ(s["series"].size(), 2u);
  const auto& dev = s["series"][0];
  EXPECT_EQ(dev["transfers"], "excluded");
  EXPECT_EQ(dev["device_name"], "GPU \"x\"");
  EXPECT_EQ(dev["break_even"], 2048);
  ASSERT_EQ(dev["points"].size(), 3u);
  EXPECT_EQ(dev["points"][0]["beats_cpu"], false);
  EXPECT_DOUBLE_EQ(dev["points"][2]["speedup_vs_cpu"].get<double>(), 4.0);
  EXPECT_EQ(dev["points"][2]["cpu"]["median"], 4);
  const auto& e2e = s["series"][1];
  EXPECT_EQ(e2e["transfers"], "included");
  EXPECT_TRUE(e2e["break_even"].is_null());
  EXPECT_EQ(e2e["points"][2]["status"], "skipped");
  EXPECT_FALSE(e2e["points"][2].contains("beats_cpu"));
}

TEST(SweepAnalysis, AnF16DeviceIsJudgedAgainstTheCpusF32WhenTheCpuLacksF16) {
  SweepSpec spec{Op::kExp, {1024}};
  nlohmann::json results = {rec("cpu", 1024, 2, 2, 2),
                            rec("cpu", 1024, 0, 0, 0, "excluded", "unsupported", "f16"),
                            rec("opencl0", 1024, 1, 1, 1, "excluded", "ok", "f16")};
  auto s = analyze_sweep(spec, results);
  ASSERT_EQ(s["series"].size(), 1u);
  EXPECT_EQ(s["series"][0]["points"][0]["cpu"]["dtype"], "f32");
  EXPECT_EQ(s["series"][0]["break_even"], 1024);
}

}  // namespace
