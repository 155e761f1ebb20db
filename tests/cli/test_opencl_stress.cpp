// `gpucheck stress` on opencl0 (pocl in CI): the OpenCL checksum and memory-test kernels agree
// with the host's math (the GEMM test fails its first result otherwise), a healthy run passes,
// and a fault planted on the CPU fails only the CPU while opencl0 runs beside it and passes.
#include "run_gpucheck.h"
#include "stress_cli_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;

namespace {

using Json = nlohmann::json;

bool have_opencl0() {
  auto r = run_gpucheck({"probe", "--json"});
  if (r.exit_code != 0) return false;
  const auto doc = Json::parse(r.out);
  for (const auto& b : doc["backends"])
    if (b["name"] == "opencl")
      for (const auto& d : b.value("devices", Json::array()))
        if (d["device"] == "opencl0") return true;
  return false;
}

std::vector<std::string> quick(std::vector<std::string> args) {
  return gpucheck::testing::stress_quick(std::move(args), 1);
}

const Json& device_entry(const Json& doc, const std::string& device) {
  return gpucheck::testing::stress_device(doc, device);
}

}  // namespace

TEST(OpenClStress, GemmMemoryAndCopyPassOnOpencl0) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(quick({"stress", "--device", "opencl0", "--duration", "4s"}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json doc = Json::parse(r.out);
  const Json& dev = device_entry(doc, "opencl0");
  EXPECT_EQ(dev["verdict"], "pass") << dev.dump();
  ASSERT_EQ(dev["records"].size(), 3u);
  for (const auto& rec : dev["records"]) EXPECT_EQ(rec["status"], "ok") << rec.dump();
  EXPECT_EQ(dev["records"][0]["impl"], "clblast");
  EXPECT_GE(dev["records"][1]["memory"]["passes"].get<int>(), 3);
}

// fp8 on opencl0: its GEMM record says why there is none; nothing crashes.
TEST(OpenClStress, Fp8GemmIsUnsupportedWithTheReason) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(quick(
      {"stress", "--device", "opencl0", "--tests", "gemm", "--dtype", "fp8", "--duration", "2s"}));
  const Json doc = Json::parse(r.out);
  const Json& dev = device_entry(doc, "opencl0");
  ASSERT_EQ(dev["records"].size(), 1u) << dev.dump();
  EXPECT_EQ(dev["records"][0]["status"], "unsupported") << dev.dump();
  EXPECT_EQ(dev["records"][0]["dtype"], "fp8");
  EXPECT_THAT(dev["records"][0]["reason"].get<std::string>(), HasSubstr("no FP8 GEMM here"));
}

TEST(OpenClStress, AFaultOnTheCpuFailsOnlyTheCpu) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(
      quick({"stress", "--device", "cpu,opencl0", "--tests", "gemm,memory", "--duration", "4s"}),
      {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:memory_word@1"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& cpu = device_entry(doc, "cpu");
  const Json& ocl = device_entry(doc, "opencl0");
  EXPECT_EQ(cpu["verdict"], "fail");
  EXPECT_THAT(cpu["reasons"][0].get<std::string>(), HasSubstr("words read back wrong"));
  EXPECT_EQ(ocl["verdict"], "pass") << ocl.dump();
  EXPECT_EQ(ocl["concurrent_with"], Json::array({"cpu"}));
}

TEST(OpenClStress, APlantedMemoryWordIsFoundByTheOpenClKernels) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r = run_gpucheck(
      quick({"stress", "--device", "opencl0", "--tests", "memory", "--duration", "2s"}),
      {{"GPUCHECK_TEST_STRESS_FAULT", "opencl0:memory_word@2"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& dev = device_entry(doc, "opencl0");
  EXPECT_EQ(dev["records"][0]["memory"]["mismatches"], 1);
}

// The host copies' round trip on a device with transfers: the flipped byte is the download's,
// and each direction's rate is reported. 5 s: --duration includes the probe and pocl's set-up,
// and the fault is in the third transfer.
TEST(OpenClStress, AFlippedDownloadByteIsNamedAsTheDownloads) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  auto r =
      run_gpucheck(quick({"stress", "--device", "opencl0", "--tests", "copy", "--duration", "5s"}),
                   {{"GPUCHECK_TEST_STRESS_FAULT", "opencl0:copy_byte@2"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& rec = device_entry(doc, "opencl0")["records"][0];
  const Json& c = rec["copy"];
  EXPECT_EQ(c["mismatches"], 1) << c.dump();
  EXPECT_EQ(c["direction"], "d2h");
  EXPECT_EQ(c["iterations"], 2);
  EXPECT_EQ(c["first_bad_offset"], rec["shape"]["bytes"].get<std::uint64_t>() / 2);
  EXPECT_GT(c["h2d_gbps"].get<double>(), 0.0);
  EXPECT_GT(c["d2h_gbps"].get<double>(), 0.0);
}
