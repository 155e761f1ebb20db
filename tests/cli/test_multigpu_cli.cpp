// The multi-GPU parts end to end without a GPU: bench --ops p2p/allreduce where there are not
// two CUDA devices (unsupported with the reason, never a crash), bad sizes (exit 2), and doctor's
// NVLink checks against the fake libnvidia-ml, both ways: links up or one down, counters steady
// or growing between the probe and the reading after the load run (two processes).
#include "run_gpucheck.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using Json = nlohmann::json;

TEST(MultiGpuCli, P2pAndAllreduceWithoutTwoCudaDevicesSayWhy) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "p2p,allreduce", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 2u) << doc["results"].dump(1);
  for (const auto& rec : doc["results"]) {
    EXPECT_EQ(rec["status"], "unsupported");
    EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("at least two CUDA devices"));
  }
  EXPECT_EQ(doc["results"][0]["op"], "p2p");
  EXPECT_EQ(doc["results"][1]["op"], "allreduce");
}

TEST(MultiGpuCli, BadSizesAreUsageErrors) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "allreduce", "--allreduce", "1001"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("multiple of 4"));
  r = run_gpucheck({"bench", "--device", "cpu", "--ops", "p2p", "--copy", "0"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_gpucheck({"bench", "--device", "cpu", "--ops", "p2q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("p2p, allreduce"));
}

TEST(MultiGpuCli, CpuOnlyBenchRunsAloneAndSaysNoConcurrency) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--exp", "4096", "--reps", "1",
                         "--warmup", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const Json parsed = Json::parse(r.out); const auto& rec : parsed["results"])
    EXPECT_FALSE(rec.contains("concurrent_with"));
}

#if GPUCHECK_HAVE_CUDA

bool real_driver_installed() {
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY);
  if (h == nullptr) return false;
  ::dlclose(h);
  return true;
}

// Two H100s joined by 18 NVLinks, as NVML describes the GPU machine's (nvidia-smi nvlink -s).
std::string two_linked(const std::string& extra) {
  std::string c =
      "driver_version=580.159.04\ncuda_driver_version=13000\ndevice_count=2\n"
      "d0.name=NVIDIA H100 80GB HBM3\nd0.pci=00000000:00:06.0\n"
      "d0.uuid=GPU-e7e58bd5-923b-52b2-4a70-e1875011ea3a\n"
      "d1.name=NVIDIA H100 80GB HBM3\nd1.pci=00000000:00:07.0\n"
      "d1.uuid=GPU-30660c06-d8fb-8471-800c-a49535995ada\n"
      "p2p.0.1=0\np2p.1.0=0\n";
  c += extra;  // the fake takes a key's first line: case-specific keys come before the defaults
  for (int d = 0; d < 2; ++d) {
    const std::string p = "d" + std::to_string(d) + ".";
    c += p + "nvlinks=18\n" + p + "nvlink.*.state=1\n" + p + "nvlink.*.version=6\n" + p +
         "nvlink.*.remote_type=0\n" + p + "nvlink.*.speed=26562\n" + p +
         "nvlink.*.remote_pci=00000000:00:0" + (d == 0 ? "7" : "6") + ".0\n";
    for (int e = 0; e < 5; ++e) c += p + "nvlink.*.err." + std::to_string(e) + "=0\n";
  }
  return c;
}

class MultiGpuFakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (real_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
    dir_ = fs::temp_directory_path() /
           ("gpucheck-multigpu-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Json doctor(const std::string& config) {
    std::ofstream(dir_ / "nvml.conf") << config;
    auto r = run_gpucheck({"doctor", "--json", "--only", "nvlink_links,nvlink_errors,p2p_access"},
                          {{"LD_LIBRARY_PATH", dir_.string()},
                           {"GPUCHECK_NVML_LIB", GPUCHECK_FAKE_NVML},
                           {"GPUCHECK_FAKE_NVML_CONFIG", (dir_ / "nvml.conf").string()},
                           {"GPUCHECK_FAKE_NVML_STATE", (dir_ / "generation").string()}});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    Json doc = Json::parse(r.out);
    for (const auto& c : doc["checks"]) checks_[c["id"]] = c;
    return doc;
  }
  Json check(const std::string& id) { return checks_.at(id); }
  fs::path dir_;
  std::map<std::string, Json> checks_;
};

TEST_F(MultiGpuFakeNvml, HealthyLinksPassAndTheCountersAreReadTwice) {
  const Json doc = doctor(two_linked(""));
  EXPECT_EQ(check("nvlink_links")["status"], "pass") << check("nvlink_links").dump(1);
  EXPECT_THAT(check("nvlink_links")["finding"].get<std::string>(),
              HasSubstr("every NVLink of 2 GPUs is active, at version 6 and 26.562 GB/s each"));
  EXPECT_EQ(check("nvlink_errors")["status"], "pass") << check("nvlink_errors").dump(1);
  EXPECT_THAT(check("nvlink_errors")["finding"].get<std::string>(),
              HasSubstr("0000:00:07.0): 18 links, no error counter grew"));
  EXPECT_EQ(check("nvlink_errors")["code"], "GC-NVLINK-ERRORS");
  EXPECT_EQ(check("nvlink_errors")["action"], "none");
  // No CUDA here: no peer-access matrix, so only NVML's view is judged.
  EXPECT_EQ(check("p2p_access")["status"], "pass") << check("p2p_access").dump(1);
  bool read_again = false;
  for (const auto& b : doc["backends"])
    if (b["name"] == "cuda") read_again = b["counters_after_load"]["loaded"].get<bool>();
  EXPECT_TRUE(read_again);
}

// --quick reads and never loads: the probe reads the counters once and nvlink_errors judges
// them against the state file, with no second reading in a child as after a load.
TEST_F(MultiGpuFakeNvml, QuickReadsTheCountersOnceAgainstTheStateFile) {
  std::ofstream(dir_ / "nvml.conf") << two_linked("");
  auto quick = [&] {
    auto r = run_gpucheck({"doctor", "--quick", "--json", "--state", (dir_ / "state.json").string(),
                           "--only", "nvlink_links,nvlink_errors"},
                          {{"LD_LIBRARY_PATH", dir_.string()},
                           {"GPUCHECK_NVML_LIB", GPUCHECK_FAKE_NVML},
                           {"GPUCHECK_FAKE_NVML_CONFIG", (dir_ / "nvml.conf").string()},
                           {"GPUCHECK_FAKE_NVML_STATE", (dir_ / "generation").string()}});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.exit_code << r.err;
    const Json doc = Json::parse(r.out);
    for (const auto& b : doc["backends"])
      if (b["name"] == "cuda") {
        EXPECT_FALSE(b.contains("counters_after_load")) << b.dump(1);
      }
    for (const auto& c : doc["checks"])
      if (c["id"] == "nvlink_errors") return c;
    ADD_FAILURE() << "no nvlink_errors";
    return Json();
  };
  const Json first = quick();
  EXPECT_EQ(first["status"], "skip") << first.dump(1);
  const Json second = quick();
  EXPECT_EQ(second["status"], "pass") << second.dump(1);
  EXPECT_THAT(second["finding"].get<std::string>(), HasSubstr("since the last run (state file"));
}

TEST_F(MultiGpuFakeNvml, ALinkDownFails) {
  doctor(two_linked("d1.nvlink.11.state=0\n"));
  EXPECT_EQ(check("nvlink_links")["status"], "fail");
  EXPECT_THAT(check("nvlink_links")["finding"].get<std::string>(),
              HasSubstr("NVLink 11 is inactive (17 of its 18 links are active)"));
}

TEST_F(MultiGpuFakeNvml, ReplaysOrARecoveryBetweenTheReadingsFailWithTheirCodes) {
  // Each process's nvmlInit_v2 is one generation: the probe reads 2, the reading after reads 9.
  doctor(two_linked("d0.nvlink.5.err.0=2+7\n"));
  const Json replay = check("nvlink_errors");
  EXPECT_EQ(replay["status"], "fail") << replay.dump(1);
  EXPECT_EQ(replay["code"], "GC-NVLINK-REPLAY");
  EXPECT_EQ(replay["action"], "drain_and_diagnose");
  // No CUDA here: the GPUs are named as NVML lists them.
  EXPECT_THAT(replay["finding"].get<std::string>(),
              HasSubstr("NVML GPU 0 (NVIDIA H100 80GB HBM3, 0000:00:06.0): 18 links, replay +7 ("));
  EXPECT_THAT(replay["finding"].get<std::string>(),
              HasSubstr("replay errors during doctor's run (no load ran) fail"));
  EXPECT_THAT(replay["evidence"].dump(),
              HasSubstr("NVLink 5 to NVML GPU 1 (NVIDIA H100 80GB HBM3, 0000:00:07.0): replay +7"));
  doctor(two_linked("d1.nvlink.0.err.1=0+1\n"));
  EXPECT_EQ(check("nvlink_errors")["status"], "fail") << check("nvlink_errors").dump(1);
  EXPECT_EQ(check("nvlink_errors")["code"], "GC-NVLINK-RECOVERY");
  EXPECT_THAT(check("nvlink_errors")["finding"].get<std::string>(), HasSubstr("recovery +1 ("));
}

TEST_F(MultiGpuFakeNvml, NvlinkedGpusWithoutNvlinkP2pFail) {
  doctor(two_linked("p2p.0.1.2=5\n"));
  EXPECT_EQ(check("p2p_access")["status"], "fail") << check("p2p_access").dump(1);
  EXPECT_THAT(check("p2p_access")["finding"].get<std::string>(),
              HasSubstr("NVML's NVLink P2P status is not_supported"));
}

#endif  // GPUCHECK_HAVE_CUDA

}  // namespace
