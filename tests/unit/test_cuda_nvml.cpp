// The NVML probe against the fake libnvidia-ml.so.1: every field, NOT_SUPPORTED as absence,
// errors by name, the throttle-reasons fallback, a missing entry point, and the join to CUDA.
#if GPUCHECK_HAVE_CUDA

#include "backends/cuda/nvml_api.h"
#include "backends/cuda/nvml_probe.h"
#include "backends/cuda/nvml_sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

using namespace gpucheck::cuda;
using ::testing::HasSubstr;

namespace {

// Two GPUs; d1 answers little (NOT_SUPPORTED everywhere but identity) and one error.
constexpr const char* kConfig = R"(driver_version=580.82.07
nvml_version=13.580.82.07
cuda_driver_version=13000
device_count=2
d0.name=NVIDIA H100 80GB HBM3
d0.uuid=GPU-5d3e0b7a-1c2f-4a00-ff10-0123456789ab
d0.pci=00000000:17:00.0
d0.serial=1652123456789
d0.vbios=96.00.99.00.01
d0.inforom=G520.0200.00.05
d0.persistence=1
d0.pstate=0
d0.power_draw=71234
d0.power_limit=700000
d0.power_default_limit=700000
d0.power_enforced_limit=650000
d0.power_constraints=200000,700000
d0.temperature=34
d0.fan=ERR:3
d0.clock.sm=1980
d0.clock.mem=2619
d0.clock.graphics=1980
d0.max_clock.sm=1980
d0.max_clock.mem=2619
d0.memory=85520809984,536870912,84429357056,554582016
d0.utilization=7,1
d0.pcie_gen=4
d0.pcie_width=8
d0.pcie_max_gen=5
d0.pcie_max_width=16
d0.ecc_mode=1,1
d0.ecc.0.0=3
d0.ecc.1.0=1
d0.ecc.0.1=40
d0.ecc.1.1=2
d0.retired.0=0
d0.retired.1=2
d0.retired_pending=1
d0.remapped=5,1,1,0
d0.mig=0,0
d0.compute_mode=3
d0.clocks_event_reasons=0x44
d0.pcie_replay=3
d0.processes=4242,1073741824,4343,2097152
d0.cpu_affinity=0xf0f
d1.name=NVIDIA L4
d1.uuid=GPU-00000000-1111-2222-3333-444444444444
d1.pci=00000000:B3:00.0
d1.temperature=ERR:4
)";

class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    // One file per process: ctest -j runs this suite's tests side by side.
    path_ = std::filesystem::temp_directory_path() /
            ("gpucheck_fake_nvml." + std::to_string(::getpid()) + ".conf");
    write(kConfig);
    ::setenv("GPUCHECK_FAKE_NVML_CONFIG", path_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("GPUCHECK_FAKE_NVML_CONFIG");
    std::filesystem::remove(path_);
  }
  void write(const std::string& text) { std::ofstream(path_) << text; }
  nlohmann::json probe() { return probe_nvml({{kNvmlLibEnv, GPUCHECK_FAKE_NVML}}); }
  std::filesystem::path path_;
};

}  // namespace

TEST(NvmlDeclarations, SizesAndVersions) {
  EXPECT_EQ(sizeof(gpucheck::nvml::PciInfo), 68u);
  EXPECT_EQ(sizeof(gpucheck::nvml::MemoryV2), 40u);
  EXPECT_EQ(sizeof(gpucheck::nvml::ProcessInfo), 24u);
  EXPECT_EQ(gpucheck::nvml::kMemoryV2Version, 0x02000028u);
}

TEST_F(FakeNvml, EveryField) {
  auto j = probe();
  ASSERT_TRUE(j["loaded"].get<bool>()) << j.dump(1);
  EXPECT_EQ(j["driver_version"], "580.82.07");
  EXPECT_EQ(j["nvml_version"], "13.580.82.07");
  EXPECT_EQ(j["cuda_version"], "13.0");
  ASSERT_EQ(j["devices"].size(), 2u);
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["device_name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d["device_uuid"], "GPU-5d3e0b7a-1c2f-4a00-ff10-0123456789ab");
  EXPECT_EQ(d["pci_bus_id"], "0000:17:00.0");
  EXPECT_EQ(d["serial"], "1652123456789");
  EXPECT_EQ(d["vbios_version"], "96.00.99.00.01");
  EXPECT_EQ(d["inforom_image_version"], "G520.0200.00.05");
  EXPECT_EQ(d["persistence_mode"], true);
  EXPECT_EQ(d["performance_state"], "P0");
  EXPECT_EQ(d["power_draw_mw"], 71234);
  EXPECT_EQ(d["power_limit_mw"], 700000);
  EXPECT_EQ(d["power_default_limit_mw"], 700000);
  EXPECT_EQ(d["power_enforced_limit_mw"], 650000);
  EXPECT_EQ(d["power_min_limit_mw"], 200000);
  EXPECT_EQ(d["power_max_limit_mw"], 700000);
  EXPECT_EQ(d["temperature_c"], 34);
  EXPECT_FALSE(d.contains("fan_percent"));  // NOT_SUPPORTED: absent, and no error
  EXPECT_EQ(d["sm_clock_mhz"], 1980);
  EXPECT_EQ(d["mem_clock_mhz"], 2619);
  EXPECT_EQ(d["graphics_clock_mhz"], 1980);
  EXPECT_EQ(d["max_sm_clock_mhz"], 1980);
  EXPECT_EQ(d["max_mem_clock_mhz"], 2619);
  EXPECT_EQ(d["memory_total_bytes"], 85520809984ULL);
  EXPECT_EQ(d["memory_reserved_bytes"], 536870912ULL);
  EXPECT_EQ(d["memory_free_bytes"], 84429357056ULL);
  EXPECT_EQ(d["memory_used_bytes"], 554582016ULL);
  EXPECT_EQ(d["utilization_gpu_percent"], 7);
  EXPECT_EQ(d["utilization_memory_percent"], 1);
  EXPECT_EQ(d["pcie_link_gen_current"], 4);
  EXPECT_EQ(d["pcie_link_width_current"], 8);
  EXPECT_EQ(d["pcie_link_gen_max"], 5);
  EXPECT_EQ(d["pcie_link_width_max"], 16);
  EXPECT_EQ(d["pcie_replay_count"], 3);
  EXPECT_EQ(d["ecc_mode_current"], true);
  EXPECT_EQ(d["ecc_mode_pending"], true);
  EXPECT_EQ(d["ecc_errors"]["volatile_corrected"], 3);
  EXPECT_EQ(d["ecc_errors"]["volatile_uncorrected"], 1);
  EXPECT_EQ(d["ecc_errors"]["aggregate_corrected"], 40);
  EXPECT_EQ(d["ecc_errors"]["aggregate_uncorrected"], 2);
  EXPECT_EQ(d["retired_pages"]["multiple_single_bit"], 0);
  EXPECT_EQ(d["retired_pages"]["double_bit"], 2);
  EXPECT_EQ(d["retired_pages"]["pending"], true);
  EXPECT_EQ(d["remapped_rows"]["correctable"], 5);
  EXPECT_EQ(d["remapped_rows"]["uncorrectable"], 1);
  EXPECT_EQ(d["remapped_rows"]["pending"], true);
  EXPECT_EQ(d["remapped_rows"]["failure"], false);
  EXPECT_EQ(d["mig_mode_current"], false);
  EXPECT_EQ(d["compute_mode"], "exclusive_process");
  // Only the throttle-reasons name exists in the fake: the fallback found it.
  EXPECT_EQ(d["clocks_event_reasons"]["raw"], 0x44);
  EXPECT_EQ(d["clocks_event_reasons"]["names"],
            nlohmann::json({"sw_power_cap", "hw_thermal_slowdown"}));
  ASSERT_EQ(d["processes"].size(), 2u);
  EXPECT_EQ(d["processes"][0]["pid"], 4242);
  EXPECT_EQ(d["processes"][0]["used_memory_bytes"], 1073741824ULL);
  EXPECT_EQ(d["cpu_affinity"], "0-3,8-11");
  EXPECT_FALSE(d.contains("numa_node"));
  EXPECT_FALSE(d.contains("errors")) << d["errors"].dump();
  // The entry point the fake lacks is named.
  EXPECT_THAT(j["missing_functions"].dump(), HasSubstr("nvmlDeviceGetNumaNodeId"));
  EXPECT_THAT(j["missing_functions"].dump(),
              ::testing::Not(HasSubstr("nvmlDeviceGetCurrentClocksThrottleReasons")));

  const auto& l4 = j["devices"][1];
  EXPECT_EQ(l4["pci_bus_id"], "0000:b3:00.0");
  EXPECT_FALSE(l4.contains("power_draw_mw"));
  EXPECT_EQ(l4["errors"]["temperature_c"], "NVML_ERROR_NO_PERMISSION");
}

TEST_F(FakeNvml, InitFailureIsReported) {
  write("init=9\n");
  auto j = probe();
  EXPECT_TRUE(j["loaded"].get<bool>());
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr("NVML_ERROR_DRIVER_NOT_LOADED (9)"));
  EXPECT_FALSE(j.contains("devices"));
}

TEST(Nvml, MissingLibraryIsAFinding) {
  auto j = probe_nvml({{kNvmlLibEnv, "/nonexistent/libnvidia-ml.so.1"}});
  EXPECT_FALSE(j["loaded"].get<bool>());
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
}

TEST_F(FakeNvml, JoinedByPciBusIdNotIndex) {
  auto nvml = probe();
  // CUDA orders fastest first: the L4's PCI address is cuda0 here only if the join is by id.
  nlohmann::json cuda = {{{"device", "cuda0"},
                          {"pci_bus_id", "0000:b3:00.0"},
                          {"properties", nlohmann::json::object()}},
                         {{"device", "cuda1"},
                          {"device_uuid", "GPU-5d3e0b7a-1c2f-4a00-ff10-0123456789ab"},
                          {"properties", nlohmann::json::object()}}};
  auto unmatched = join_nvml(cuda, nvml);
  EXPECT_TRUE(unmatched.empty());
  EXPECT_EQ(cuda[0]["properties"]["nvml"]["device_name"], "NVIDIA L4");
  EXPECT_EQ(cuda[1]["properties"]["nvml"]["device_name"], "NVIDIA H100 80GB HBM3");
  nlohmann::json one = {{{"device", "cuda0"},
                         {"pci_bus_id", "0000:17:00.0"},
                         {"properties", nlohmann::json::object()}}};
  EXPECT_EQ(join_nvml(one, nvml).size(), 1u);  // the L4 is hidden from CUDA
}

// A region that ends before the sampling thread wakes must not leave that thread spinning with
// the lock held: the next begin() would wait forever (a CUDA bench once hung on a 1 MiB copy so).
TEST_F(FakeNvml, SamplerSurvivesRegionsShorterThanItsWakeUp) {
  std::string error;
  auto sampler = NvmlSampler::open({{kNvmlLibEnv, GPUCHECK_FAKE_NVML}},
                                   "GPU-5d3e0b7a-1c2f-4a00-ff10-0123456789ab", "", &error);
  ASSERT_NE(sampler, nullptr) << error;
  auto regions = std::async(std::launch::async, [&] {
    for (int i = 0; i < 2000; ++i) {
      sampler->begin();
      sampler->end();
    }
  });
  ASSERT_EQ(regions.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "begin()/end() blocked: the sampling thread kept its lock";
  const auto summary = sampler->summary();
  EXPECT_GE(summary["nvml_samples"].get<int>(), 1);
  EXPECT_EQ(summary["sm_clock_mhz"]["mean"], 1980);
}

TEST(Nvml, CpuListFromMask) {
  unsigned long words[2] = {0x5UL, 0x1UL};
  EXPECT_EQ(cpu_list_from_mask(words, 2), "0,2,64");
  unsigned long none[1] = {0};
  EXPECT_EQ(cpu_list_from_mask(none, 1), "");
}

#endif  // GPUCHECK_HAVE_CUDA
