// NVLink, topology, P2P status and fabric through the fake libnvidia-ml.so.1: two GPUs joined by
// 18 NVLinks (one of them down in a second config), a third on PCIe only; the counters read again
// in a later "process" (the fake's generation) grow as configured.
#if GPUCHECK_HAVE_CUDA

#include "backends/cuda/nvml_api.h"
#include "backends/cuda/nvml_links.h"
#include "backends/cuda/nvml_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace gpucheck::cuda;
using ::testing::HasSubstr;

namespace {

// GPU 0 and 1: H200s joined by 18 NVLink-4 links at 26.562 GB/s (the fake's numbers follow
// nvidia-smi nvlink -s on a 2×H200 NV18 machine); GPU 2 has no NVLink. Topology: 0–1 SYS
// (across sockets, as on the GPU machine), 0–2 PHB. Link 3 of GPU 0 has replays that grow.
constexpr const char* kTwoLinked = R"(device_count=3
d0.name=NVIDIA H200
d0.uuid=GPU-aaaaaaaa-0000-0000-0000-000000000000
d0.pci=00000000:17:00.0
d0.nvlinks=18
d0.nvlink.*.state=1
d0.nvlink.*.version=4
d0.nvlink.*.remote_pci=00000000:2A:00.0
d0.nvlink.*.remote_type=0
d0.nvlink.*.speed=26562
d0.nvlink.*.err.0=0
d0.nvlink.*.err.1=0
d0.nvlink.*.err.2=0
d0.nvlink.*.err.3=0
d0.nvlink.*.err.4=0
d0.nvlink.3.err.0=5+7
d0.nvlink_speed_common=26562
d1.name=NVIDIA H200
d1.uuid=GPU-bbbbbbbb-0000-0000-0000-000000000000
d1.pci=00000000:2A:00.0
d1.nvlinks=18
d1.nvlink.*.state=1
d1.nvlink.*.version=4
d1.nvlink.*.remote_pci=00000000:17:00.0
d1.nvlink.*.remote_type=0
d1.nvlink.*.speed=26562
d1.nvlink.*.err.0=0
d2.name=NVIDIA L4
d2.uuid=GPU-cccccccc-0000-0000-0000-000000000000
d2.pci=00000000:B3:00.0
d2.fabric=0,0,0
topo.0.1=50
topo.0.2=30
topo.1.2=50
p2p.0.1=0
p2p.1.0=0
p2p.0.2=1
p2p.2.0=1
p2p.1.2=4
p2p.2.1=4
)";

class FakeNvLink : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per process: ctest runs these tests side by side, each in its own process, and one's
    // configuration must not be another's.
    const auto dir = std::filesystem::temp_directory_path();
    const std::string pid = std::to_string(::getpid());
    conf_ = dir / ("gpucheck_fake_nvlink_" + pid + ".conf");
    state_ = dir / ("gpucheck_fake_nvlink_" + pid + ".state");
    std::filesystem::remove(state_);
    write(kTwoLinked);
    ::setenv("GPUCHECK_FAKE_NVML_CONFIG", conf_.c_str(), 1);
    ::setenv("GPUCHECK_FAKE_NVML_STATE", state_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("GPUCHECK_FAKE_NVML_CONFIG");
    ::unsetenv("GPUCHECK_FAKE_NVML_STATE");
    std::filesystem::remove(conf_);
    std::filesystem::remove(state_);
  }
  void write(const std::string& text) { std::ofstream(conf_) << text; }
  gpucheck::EnvMap env() const { return {{kNvmlLibEnv, GPUCHECK_FAKE_NVML}}; }
  std::filesystem::path conf_, state_;
};

TEST_F(FakeNvLink, LinksPerGpu) {
  auto j = probe_nvml(env());
  ASSERT_EQ(j["devices"].size(), 3u) << j.dump(1);
  const auto& nv = j["devices"][0]["nvlink"];
  ASSERT_EQ(nv["links"].size(), 18u);
  const auto& l3 = nv["links"][3];
  EXPECT_EQ(l3["link"], 3);
  EXPECT_EQ(l3["state"], "active");
  EXPECT_EQ(l3["version"], 4);
  EXPECT_EQ(l3["remote_pci_bus_id"], "0000:2a:00.0");
  EXPECT_EQ(l3["remote_device_type"], "gpu");
  EXPECT_EQ(l3["speed_mbps"], 26562);
  EXPECT_EQ(l3["error_counters"]["replay"], 5);  // first generation: the base value
  EXPECT_EQ(l3["error_counters"]["recovery"], 0);
  EXPECT_EQ(nv["speed_common_mbps"], 26562);
  EXPECT_EQ(nv["link_count"], 18);
  // The PCIe-only GPU lists no link, and its fabric (state 0) is not reported.
  EXPECT_FALSE(j["devices"][2].contains("nvlink"));
  EXPECT_FALSE(j["devices"][2].contains("fabric"));
  EXPECT_FALSE(j["devices"][0].contains("errors")) << j["devices"][0]["errors"].dump();
}

TEST_F(FakeNvLink, PairsAsTopoMShowsThem) {
  auto j = probe_nvml(env());
  const auto& pairs = j["pairs"];
  ASSERT_EQ(pairs.size(), 6u);  // ordered pairs of three GPUs
  auto find = [&](const std::string& a, const std::string& b) {
    for (const auto& p : pairs)
      if (p["gpu"] == a && p["peer"] == b) return p;
    return nlohmann::json();
  };
  const auto p01 = find("0000:17:00.0", "0000:2a:00.0");
  EXPECT_EQ(p01["topology"], "NV18");
  EXPECT_EQ(p01["nvlinks"], 18);
  EXPECT_EQ(p01["common_ancestor"], "SYS");
  EXPECT_EQ(p01["p2p"]["read"], "ok");
  EXPECT_EQ(p01["p2p"]["nvlink"], "ok");
  EXPECT_EQ(p01["gpu_uuid"], "GPU-aaaaaaaa-0000-0000-0000-000000000000");
  const auto p02 = find("0000:17:00.0", "0000:b3:00.0");
  EXPECT_EQ(p02["topology"], "PHB");
  EXPECT_EQ(p02["nvlinks"], 0);
  EXPECT_EQ(p02["p2p"]["read"], "chipset_not_supported");
  const auto p12 = find("0000:2a:00.0", "0000:b3:00.0");
  EXPECT_EQ(p12["topology"], "SYS");
  EXPECT_EQ(p12["p2p"]["write"], "disabled_by_regkey");
}

TEST_F(FakeNvLink, InactiveLinkAndNvSwitch) {
  // GPU 0 has link 2 down; both reach NVSwitches; GPU 1 has not finished fabric registration.
  write(R"(device_count=2
d0.pci=00000000:17:00.0
d0.nvlinks=4
d0.nvlink.*.state=1
d0.nvlink.2.state=0
d0.nvlink.*.version=4
d0.nvlink.*.remote_type=2
d0.nvlink.*.remote_pci=00000000:C0:00.0
d1.pci=00000000:2A:00.0
d1.nvlinks=4
d1.nvlink.*.state=1
d1.nvlink.*.version=4
d1.nvlink.*.remote_type=2
d1.nvlink.*.remote_pci=00000000:C1:00.0
d0.fabric=3,0,7
d1.fabric=1,0,7
)");
  auto j = probe_nvml(env());
  const auto& links = j["devices"][0]["nvlink"]["links"];
  ASSERT_EQ(links.size(), 4u);
  EXPECT_EQ(links[2]["state"], "inactive");
  EXPECT_FALSE(links[2].contains("remote_pci_bus_id"));  // a down link has no remote
  EXPECT_EQ(links[0]["remote_device_type"], "switch");
  // Through NVSwitches: the smaller of the two GPUs' switch links (3 active on GPU 0).
  EXPECT_EQ(j["pairs"][0]["topology"], "NV3");
  EXPECT_EQ(j["devices"][0]["fabric"]["state"], "completed");
  EXPECT_EQ(j["devices"][0]["fabric"]["status"], "success");
  EXPECT_EQ(j["devices"][0]["fabric"]["clique_id"], 7);
  EXPECT_EQ(j["devices"][1]["fabric"]["state"], "not_started");
}

TEST_F(FakeNvLink, CountersReadAgainHaveGrown) {
  auto first = probe_nvml(env());  // generation 0
  ASSERT_EQ(first["devices"][0]["nvlink"]["links"][3]["error_counters"]["replay"], 5);
  auto later = probe_nvlink_counters(env());  // generation 1
  ASSERT_TRUE(later["loaded"].get<bool>()) << later.dump(1);
  ASSERT_EQ(later["devices"].size(), 3u);
  EXPECT_EQ(later["devices"][0]["pci_bus_id"], "0000:17:00.0");
  EXPECT_EQ(later["devices"][0]["device_uuid"], "GPU-aaaaaaaa-0000-0000-0000-000000000000");
  const auto& links = later["devices"][0]["links"];
  ASSERT_EQ(links.size(), 18u);
  EXPECT_EQ(links[3]["replay"], 12);
  EXPECT_EQ(links[4]["replay"], 0);
  EXPECT_TRUE(later["devices"][2]["links"].empty());
}

TEST(NvLinkNames, TopologyAndP2pStatus) {
  EXPECT_EQ(topology_level_name(gpucheck::nvml::kTopologyInternal), "PIX");
  EXPECT_EQ(topology_level_name(gpucheck::nvml::kTopologySingle), "PIX");
  EXPECT_EQ(topology_level_name(gpucheck::nvml::kTopologyMultiple), "PXB");
  EXPECT_EQ(topology_level_name(gpucheck::nvml::kTopologyHostBridge), "PHB");
  EXPECT_EQ(topology_level_name(gpucheck::nvml::kTopologyNode), "NODE");
  EXPECT_EQ(topology_level_name(gpucheck::nvml::kTopologySystem), "SYS");
  EXPECT_EQ(topology_level_name(7), "unknown");
  EXPECT_EQ(p2p_status_name(gpucheck::nvml::kP2pStatusOk), "ok");
  EXPECT_EQ(p2p_status_name(gpucheck::nvml::kP2pStatusIohTopologyNotSupported),
            "ioh_topology_not_supported");
  EXPECT_EQ(p2p_status_name(42), "unknown");
}

TEST(NvLinkCounters, MissingLibraryIsReported) {
  auto j = probe_nvlink_counters({{kNvmlLibEnv, "/nonexistent/libnvidia-ml.so.1"}});
  EXPECT_FALSE(j["loaded"].get<bool>());
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
}

TEST(NvmlDeclarations, FieldValueAndFabricLayout) {
  // Checked against nvml.h on the GPU machine by tests/device/nvml_layout_check.cpp too.
  EXPECT_EQ(sizeof(gpucheck::nvml::FieldValue), 40u);
  EXPECT_EQ(sizeof(gpucheck::nvml::GpuFabricInfoV3), 40u);
  EXPECT_EQ(gpucheck::nvml::kGpuFabricInfoV3Version, 0x03000028u);
}

}  // namespace

#endif  // GPUCHECK_HAVE_CUDA
