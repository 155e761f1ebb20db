// read_infiniband_facts() on the sysroots of tests/fixtures/sysroots/infiniband (mlx5 InfiniBand
// and RoCE, written by make_infiniband.py), the PCI distances, and one real soft-RoCE device
// where this kernel has one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/json_keys_infiniband.h"
#include "host/infiniband.h"

namespace fs = std::filesystem;
namespace keys = gpucheck::keys;
using gpucheck::host::InfinibandFacts;
using gpucheck::host::PciDistance;
using gpucheck::host::read_infiniband_facts;

namespace {

fs::path ib_root(const char* name) {
  return fs::path(GPUCHECK_FIXTURES_DIR) / "sysroots" / "infiniband" / name;
}

const gpucheck::host::IbDevice* device(const InfinibandFacts& f, const std::string& name) {
  for (const auto& d : f.devices)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace

TEST(Infiniband, ReadsTheAdaptersAndPortsOfAnMlx5Node) {
  const InfinibandFacts f = read_infiniband_facts(ib_root("healthy"));
  EXPECT_TRUE(f.sysfs_class);
  ASSERT_EQ(f.devices.size(), 3u);
  const auto* ib = device(f, "mlx5_0");
  ASSERT_NE(ib, nullptr);
  EXPECT_EQ(ib->hca_type, "MT4129");
  EXPECT_EQ(ib->node_type, "1: CA");
  EXPECT_EQ(ib->fw_ver, "28.39.1002");
  EXPECT_EQ(ib->node_guid, "a088:c203:00b1:3f40");
  EXPECT_EQ(ib->pci_bus_id, "0000:1a:00.0");
  EXPECT_EQ(ib->driver, "mlx5_core");
  EXPECT_EQ(ib->numa_node, 0);
  EXPECT_TRUE(ib->unreadable.empty());
  ASSERT_EQ(ib->ports.size(), 1u);
  const auto& p = ib->ports[0];
  EXPECT_EQ(p.number, 1);
  EXPECT_EQ(p.link_layer, "InfiniBand");
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.phys_state, "LinkUp");
  EXPECT_EQ(p.rate, "400 Gb/sec (4X NDR)");
  EXPECT_EQ(p.rate_gbps, 400.0);
  EXPECT_EQ(p.width, "4X");
  EXPECT_EQ(p.speed, "NDR");
  EXPECT_EQ(p.lid, "0x1a");
  EXPECT_EQ(p.pkeys, (std::vector<std::string>{"0xffff", "0x8001"}));
  EXPECT_EQ(p.netdev, "ibp26s0");  // the IPoIB netdev of the function's net/ folder
  EXPECT_EQ(p.counters.at("port_rcv_data"), 918273645u);
  EXPECT_EQ(p.counters.at("symbol_error"), 0u);

  const auto* roce = device(f, "mlx5_2");
  ASSERT_NE(roce, nullptr);
  ASSERT_EQ(roce->ports.size(), 1u);
  EXPECT_EQ(roce->ports[0].link_layer, "Ethernet");
  EXPECT_EQ(roce->ports[0].netdev, "ens6f0np0");  // from the GID table
  EXPECT_FALSE(roce->ports[0].lid.has_value());   // LIDs mean nothing on Ethernet
  EXPECT_EQ(roce->ports[0].counters.at("symbol_error"), 3u);
  EXPECT_EQ(f.peer_memory_modules, std::vector<std::string>{"nvidia_peermem"});
}

TEST(Infiniband, FindsTheAdapterNearestEachGpu) {
  const InfinibandFacts f = read_infiniband_facts(ib_root("healthy"));
  ASSERT_EQ(f.gpus.size(), 2u);
  EXPECT_EQ(f.gpus[0].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(f.gpus[0].vendor, "nvidia");
  ASSERT_EQ(f.gpus[0].hcas.size(), 3u);
  EXPECT_EQ(f.gpus[0].hcas[0].hca, "mlx5_0");
  EXPECT_EQ(f.gpus[0].hcas[0].distance, PciDistance::kPcieSwitch);
  EXPECT_EQ(f.gpus[0].hcas[1].hca, "mlx5_2");  // another host bridge of socket 0
  EXPECT_EQ(f.gpus[0].hcas[1].distance, PciDistance::kNumaNode);
  EXPECT_EQ(f.gpus[0].hcas[2].distance, PciDistance::kCpuInterconnect);
  EXPECT_EQ(f.gpus[1].hcas[0].hca, "mlx5_1");

  const InfinibandFacts remote = read_infiniband_facts(ib_root("remote_hca"));
  ASSERT_EQ(remote.gpus.size(), 2u);
  EXPECT_EQ(remote.gpus[1].hcas.front().distance, PciDistance::kCpuInterconnect);
  const auto j = to_json(remote);
  EXPECT_EQ(j[keys::kGpus][1][keys::kDistance], "cpu_interconnect");
  EXPECT_EQ(j[keys::kGpus][0][keys::kClosestHcas], nlohmann::json::array({"mlx5_0"}));
}

TEST(Infiniband, PciDistanceFollowsTheTree) {
  using V = std::vector<std::string>;
  const V gpu{"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"};
  const V behind_switch{"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:01.0",
                        "0000:04:00.0"};
  const V other_root_port{"pci0000:00", "0000:00:02.0", "0000:05:00.0"};
  const V other_bridge{"pci0000:80", "0000:80:01.0", "0000:81:00.0"};
  using gpucheck::host::pci_distance;
  EXPECT_EQ(pci_distance(gpu, 0, behind_switch, 0, false), PciDistance::kPcieSwitch);
  EXPECT_EQ(pci_distance(gpu, 0, other_root_port, 0, false), PciDistance::kHostBridge);
  EXPECT_EQ(pci_distance(gpu, 0, other_bridge, 0, false), PciDistance::kNumaNode);
  EXPECT_EQ(pci_distance(gpu, 0, other_bridge, 1, false), PciDistance::kCpuInterconnect);
  EXPECT_EQ(pci_distance(gpu, std::nullopt, other_bridge, 1, false), PciDistance::kUnknown);
  EXPECT_EQ(pci_distance(gpu, std::nullopt, other_bridge, std::nullopt, true),
            PciDistance::kNumaNode);
  EXPECT_EQ(pci_distance({}, 0, other_bridge, 0, false), PciDistance::kUnknown);
}

TEST(Infiniband, ParsesRates) {
  using gpucheck::host::parse_rate;
  auto r = parse_rate("400 Gb/sec (4X NDR)\n");
  EXPECT_EQ(r.gbps, 400.0);
  EXPECT_EQ(r.width, "4X");
  EXPECT_EQ(r.speed, "NDR");
  r = parse_rate("2.5 Gb/sec (1X SDR)");
  EXPECT_EQ(r.gbps, 2.5);
  EXPECT_EQ(r.width, "1X");
  r = parse_rate("garbage");
  EXPECT_FALSE(r.gbps.has_value());
  EXPECT_FALSE(r.width.has_value());
}

// A rate file of inf, 1e308, nan or a negative number is no rate: probe wrote "rate_gbps": null
// for inf (which its own report show rejects) and doctor called the healthy siblings slow.
TEST(Infiniband, RatesOutOfRangeAreNoRate) {
  using gpucheck::host::parse_rate;
  using gpucheck::host::port_rate_gbps;
  for (const char* text : {"inf Gb/sec (4X NDR)", "1e308 Gb/sec (4X NDR)", "nan Gb/sec",
                           "-400 Gb/sec (4X NDR)", "100001 Gb/sec"}) {
    SCOPED_TRACE(text);
    const auto r = parse_rate(text);
    EXPECT_FALSE(r.gbps.has_value());
    EXPECT_EQ(r.width, std::string(text).find('(') == std::string::npos
                           ? std::nullopt
                           : std::optional<std::string>("4X"));
  }
  EXPECT_EQ(parse_rate("800 Gb/sec (4X XDR)").gbps, 800.0);
  // The same range for a document's rate_gbps (a --facts file).
  EXPECT_EQ(port_rate_gbps({{"rate_gbps", 400}}), 400.0);
  EXPECT_FALSE(port_rate_gbps({{"rate_gbps", 1e308}}).has_value());
  EXPECT_FALSE(port_rate_gbps({{"rate_gbps", -1}}).has_value());
  EXPECT_FALSE(port_rate_gbps({{"rate_gbps", nullptr}}).has_value());
  EXPECT_FALSE(port_rate_gbps({{"rate_gbps", "400"}}).has_value());
  EXPECT_FALSE(port_rate_gbps(nlohmann::json::object()).has_value());
}

TEST(Infiniband, MissingFilesAreToleratedAndNamed) {
  const InfinibandFacts f = read_infiniband_facts(ib_root("missing"));
  const auto* d = device(f, "mlx5_0");
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->fw_ver.has_value());
  EXPECT_FALSE(d->hca_type.has_value());
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].state, "ACTIVE");
  EXPECT_FALSE(d->ports[0].rate.has_value());
  EXPECT_TRUE(d->ports[0].counters.empty());
  auto named = [&](const std::string& prefix) {
    for (const auto& u : d->unreadable)
      if (u.rfind(prefix, 0) == 0) return true;
    return false;
  };
  EXPECT_TRUE(named("fw_ver: ")) << ::testing::PrintToString(d->unreadable);
  EXPECT_TRUE(named("hca_type: "));
  EXPECT_TRUE(named("ports/1/rate: "));
  EXPECT_TRUE(named("ports/1/counters: "));
  const auto j = to_json(f);
  EXPECT_EQ(j[keys::kDevices][0][keys::kUnreadable].size(), d->unreadable.size());
  EXPECT_FALSE(j[keys::kDevices][0][keys::kPorts][0].contains(keys::kRate));
}

TEST(Infiniband, NoSysfsClassIsNoAdapterWithAReason) {
  const InfinibandFacts f = read_infiniband_facts(ib_root("does-not-exist"));
  EXPECT_FALSE(f.sysfs_class);
  EXPECT_TRUE(f.devices.empty());
  EXPECT_TRUE(f.gpus.empty());
  const auto j = to_json(f);
  EXPECT_TRUE(j[keys::kDevices].empty());
  EXPECT_NE(j.value(keys::kReason, "").find("/sys/class/infiniband"), std::string::npos);
}

TEST(Infiniband, SecondReadingHasEveryPortsCounters) {
  const auto j = gpucheck::host::read_infiniband_counters(ib_root("healthy"));
  ASSERT_TRUE(j.contains("mlx5_1/1"));
  EXPECT_EQ(j["mlx5_2/1"]["symbol_error"], 3u);
  EXPECT_EQ(j.size(), 3u);
}

// A real soft-RoCE device (rdma_rxe over an Ethernet netdev), where the kernel and the
// administrator made one: `modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0`.
TEST(Infiniband, RealSoftRoceDevice) {
  const InfinibandFacts f = read_infiniband_facts("/");
  const gpucheck::host::IbDevice* rxe = nullptr;
  for (const auto& d : f.devices)
    if (d.name.rfind("rxe", 0) == 0) rxe = &d;
  if (rxe == nullptr)
    GTEST_SKIP() << (f.sysfs_class ? "no rxe device in /sys/class/infiniband"
                                   : "no /sys/class/infiniband on this kernel")
                 << ": soft-RoCE needs the rdma_rxe module and root to run `rdma link add rxe0 "
                    "type rxe netdev <eth>` (this test does not create one)";
  EXPECT_FALSE(rxe->pci_bus_id.has_value());  // a software device has no PCI function
  ASSERT_FALSE(rxe->ports.empty());
  EXPECT_EQ(rxe->ports[0].link_layer, "Ethernet");
  EXPECT_TRUE(rxe->ports[0].netdev.has_value());
  EXPECT_TRUE(rxe->ports[0].state.has_value());
}
