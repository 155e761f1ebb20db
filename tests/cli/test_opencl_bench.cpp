// `gpucheck bench` on opencl0 (pocl in CI): every op verified, both transfer records, speedups,
// planted errors caught. ctest warms pocl's kernel cache first (fixture opencl_kernels).
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;

namespace {

// Skips the test where this machine has no OpenCL device (no pocl, no loader).
bool have_opencl0() {
  auto r = run_gpucheck({"probe", "--json"});
  if (r.exit_code != 0) return false;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& b : doc["backends"])
    if (b["name"] == "opencl")
      for (const auto& d : b.value("devices", nlohmann::json::array()))
        if (d["device"] == "opencl0") return true;
  return false;
}

std::vector<std::string> quick(std::vector<std::string> args) {
  for (const char* a :
       {"--device", "opencl0", "--reps", "2", "--warmup", "1", "--exp", "100003", "--gemm",
        "96x80x72", "--conv", "2,3,9,11,4,3,3,2,1", "--copy", "65536", "--json", "--no-tune"})
    args.emplace_back(a);
  return args;
}

std::vector<nlohmann::json> opencl_records(const std::string& out) {
  std::vector<nlohmann::json> v;
  const auto doc = nlohmann::json::parse(out);
  for (const auto& r : doc["results"])
    if (r["backend"] == "opencl") v.push_back(r);
  return v;
}

}  // namespace

TEST(OpenClBench, ExpGemmConvCopyVerifyWithBothTransferRecords) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(quick({"bench", "--ops", "exp,gemm,conv,copy"}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto recs = opencl_records(r.out);
  std::set<std::string> seen;
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec["status"], "ok");
    EXPECT_GT(rec["time_s"]["median"].get<double>(), 0.0);
    const std::string op = rec["op"];
    seen.insert(op + "/" + rec["transfers"].get<std::string>());
    if (op != "copy") {
      EXPECT_TRUE(rec.contains("speedup_vs_cpu"));
      EXPECT_TRUE(rec.contains("verification"));
    }
  }
  for (const char* want : {"exp/excluded", "exp/included", "gemm/excluded", "gemm/included",
                           "conv/excluded", "conv/included", "copy/excluded"})
    EXPECT_TRUE(seen.contains(want)) << want;
  std::set<std::string> impls;
  for (const auto& rec : recs) impls.insert(rec["impl"]);
  EXPECT_TRUE(impls.contains("kernel"));
  EXPECT_TRUE(impls.contains("clblast"));
  EXPECT_TRUE(impls.contains("im2col+clblast"));
  // h2d and d2h from pinned and pageable memory, and d2d.
  std::set<std::string> copies;
  for (const auto& rec : recs)
    if (rec["op"] == "copy")
      copies.insert(rec["shape"]["direction"].get<std::string>() + "/" +
                    rec["shape"].value("host_memory", ""));
  for (const char* want : {"h2d/pinned", "h2d/pageable", "d2h/pinned", "d2h/pageable"})
    EXPECT_TRUE(copies.contains(want)) << want;
  EXPECT_TRUE(std::any_of(copies.begin(), copies.end(),
                          [](const std::string& c) { return c.starts_with("d2d/"); }));
}

TEST(OpenClBench, F64NhwcAndLatency) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(quick(
      {"bench", "--ops", "exp,gemm,conv,latency", "--dtype", "f32,f64,f16", "--layout", "nhwc"}));
  auto recs = opencl_records(r.out);
  ASSERT_FALSE(recs.empty()) << r.err;
  bool f16_gemm_seen = false;
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    const std::string op = rec["op"];
    const std::string dtype = rec.value("dtype", "");
    EXPECT_EQ(rec["status"], "ok");
    if (op == "exp" && dtype == "f16") {
      EXPECT_EQ(rec["compute_type"], "f32");
    }
    if ((op == "gemm" || op == "conv") && dtype == "f16") {
      // CLBlast's HGEMM (f16 sums) where the device has cl_khr_fp16; else gpucheck's kernel,
      // which needs no extension and sums in float (pocl).
      const bool kernel = rec["impl"] == "kernel" || rec["impl"] == "im2col+kernel";
      EXPECT_EQ(rec["compute_type"], kernel ? "f32" : "f16");
      f16_gemm_seen = true;
    }
    if (op == "conv") {
      EXPECT_EQ(rec["shape"]["layout"], "nhwc");
    }
  }
  EXPECT_TRUE(f16_gemm_seen);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(OpenClBench, Fp8IsUnsupportedWithTheReason) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(quick({"bench", "--ops", "gemm", "--dtype", "fp8"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto recs = opencl_records(r.out);
  ASSERT_EQ(recs.size(), 1u) << r.out;
  EXPECT_EQ(recs[0]["status"], "unsupported");
  EXPECT_THAT(recs[0]["reason"].get<std::string>(), HasSubstr("no FP8 GEMM here"));
}

TEST(OpenClBench, PlantedWrongValueIsAMismatch) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(quick({"bench", "--ops", "exp,gemm"}), {{"GPUCHECK_TEST_PLANT", "wrong"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto recs = opencl_records(r.out);
  ASSERT_FALSE(recs.empty());
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec["status"], "mismatch");
    EXPECT_TRUE(rec["verification"].contains("first_bad_index"));
  }
}

// The end-to-end record computes from the same inputs as the device-time one: where its result
// has the same bits, it takes that check's outcome and says so; a planted error changes the
// bits, so it is checked in full and caught in both records.
TEST(OpenClBench, ARepeatedResultTakesItsCheckAndAPlantedOneIsCheckedInFull) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(quick({"bench", "--ops", "exp", "--dtype", "f32"}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  int repeated = 0;
  for (const auto& rec : opencl_records(r.out)) {
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    if (rec["verification"]["detail"].get<std::string>().find("the same bits") != std::string::npos)
      ++repeated;
  }
  EXPECT_EQ(repeated, 1) << r.out;  // the end-to-end record: every one of its rounds a repeat
  auto p = run_gpucheck(quick({"bench", "--ops", "exp", "--dtype", "f32"}),
                        {{"GPUCHECK_TEST_PLANT", "wrong"}});
  EXPECT_EQ(p.exit_code, 1) << p.err;
  for (const auto& rec : opencl_records(p.out)) EXPECT_EQ(rec["status"], "mismatch") << rec.dump();
}
