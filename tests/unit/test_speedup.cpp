// Speedups: each accelerator record against the CPU's record of the same workload.
#include "report/speedup.h"

#include <gtest/gtest.h>

namespace {

nlohmann::json rec(const std::string& backend, const std::string& dtype, double median,
                   const std::string& status = "ok", std::uint64_t n = 1024) {
  nlohmann::json r = {{"device", backend == "cpu" ? "cpu" : "cuda0"},
                      {"backend", backend},
                      {"op", "exp"},
                      {"shape", {{"n", n}}},
                      {"status", status},
                      {"time_s", {{"median", median}}}};
  r["dtype"] = dtype;
  return r;
}

}  // namespace

TEST(Speedup, SameDtypeBaseline) {
  nlohmann::json results = {rec("cpu", "f32", 0.010), rec("cuda", "f32", 0.002)};
  gpucheck::report::add_speedups(results);
  EXPECT_DOUBLE_EQ(results[1]["speedup_vs_cpu"].get<double>(), 5.0);
  EXPECT_EQ(results[1]["baseline_dtype"], "f32");
  EXPECT_FALSE(results[0].contains("speedup_vs_cpu"));
}

TEST(Speedup, FallsBackToF32WhenCpuLacksTheDtype) {
  nlohmann::json results = {rec("cpu", "f32", 0.012), rec("cuda", "f16", 0.003)};
  gpucheck::report::add_speedups(results);
  EXPECT_DOUBLE_EQ(results[1]["speedup_vs_cpu"].get<double>(), 4.0);
  EXPECT_EQ(results[1]["baseline_dtype"], "f32");
}

TEST(Speedup, NoBaselineMeansNoKey) {
  nlohmann::json results = {rec("cpu", "f32", 0.01, "mismatch"), rec("cuda", "f32", 0.002),
                            rec("cuda", "f32", 0.002, "ok", 2048)};
  gpucheck::report::add_speedups(results);
  EXPECT_FALSE(results[1].contains("speedup_vs_cpu"));  // the CPU's record is not ok
  EXPECT_FALSE(results[2].contains("speedup_vs_cpu"));  // no CPU record of that shape
}

TEST(Speedup, SeedloopFormsShareTheCpuLoop) {
  auto cpu = rec("cpu", "f32", 0.004);
  cpu["op"] = "seedloop";
  cpu["shape"] = {{"n", 230400}, {"calls", 1000}, {"d2h_each_call", false}};
  auto gpu = cpu;
  gpu["backend"] = "cuda";
  gpu["shape"]["d2h_each_call"] = true;
  gpu["time_s"]["median"] = 0.008;
  nlohmann::json results = {cpu, gpu};
  gpucheck::report::add_speedups(results);
  EXPECT_DOUBLE_EQ(results[1]["speedup_vs_cpu"].get<double>(), 0.5);
}
