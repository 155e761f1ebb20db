// InfiniBand and RoCE adapters for `gpucheck probe` and doctor: every /sys/class/infiniband
// device and port (link layer, state, rate, firmware, GUID, PKeys, the netdev a RoCE port sits
// on, error counters), the peer-memory modules GPUDirect RDMA needs, and which adapter is
// closest to each GPU on the PCI tree. Read under a root prefix, so tests use fabricated sysroots.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpucheck::host {

// A field is absent when its file is missing or malformed; the device's `unreadable` says which.
struct IbPort {
  int number = 0;
  std::optional<std::string> link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
  std::optional<std::string> state;       // "ACTIVE" of "4: ACTIVE"
  std::optional<std::string> phys_state;  // "LinkUp" of "5: LinkUp"
  std::optional<std::string> rate;        // "400 Gb/sec (4X NDR)"
  std::optional<double> rate_gbps;        // 400
  std::optional<std::string> width;       // "4X"
  std::optional<std::string> speed;       // "NDR"
  std::optional<std::string> lid, sm_lid;
  std::vector<std::string> pkeys;  // non-zero PKey table entries in index order
  std::optional<std::string> netdev;
  std::map<std::string, std::uint64_t> counters;  // counters/* as named by the kernel
};

struct IbDevice {
  std::string name;  // mlx5_0, rxe0
  std::optional<std::string> hca_type, node_type, fw_ver, node_guid, sys_image_guid, board_id;
  std::optional<std::string> pci_bus_id;  // the PCI function behind the `device` link
  std::optional<std::string> driver;      // its driver (mlx5_core)
  std::optional<int> numa_node;           // -1 (no affinity) stays absent
  std::vector<std::string> pci_chain;     // sys/devices path of the function, for distances
  std::vector<IbPort> ports;
  std::vector<std::string> unreadable;  // "fw_ver: No such file or directory"
};

// How far apart two PCI functions are, nearest first (nvidia-smi topo: PIX/PXB, PHB, NODE, SYS).
enum class PciDistance { kPcieSwitch, kHostBridge, kNumaNode, kCpuInterconnect, kUnknown };
std::string_view to_string(PciDistance d);

struct GpuHcaDistance {
  std::string hca;  // IbDevice::name
  PciDistance distance = PciDistance::kUnknown;
};

// A display-class PCI function of NVIDIA or AMD and its distance to each adapter on the PCI bus.
struct GpuAffinity {
  std::string pci_bus_id;
  std::string vendor;  // "nvidia" | "amd"
  std::optional<int> numa_node;
  std::vector<GpuHcaDistance> hcas;  // nearest first
};

struct InfinibandFacts {
  bool sysfs_class = false;  // /sys/class/infiniband exists (an RDMA core module is loaded)
  std::vector<IbDevice> devices;
  std::vector<GpuAffinity> gpus;  // with at least one adapter on the PCI bus, else empty
  std::vector<std::string> peer_memory_modules;  // loaded: nvidia_peermem, nv_peer_mem
};

// Never throws for missing, unreadable or malformed files.
InfinibandFacts read_infiniband_facts(const std::filesystem::path& root);

// The distance between two functions from their sys/devices paths ("pci0000:00",
// "0000:00:01.0", ...) and NUMA nodes; single_node: the host has at most one NUMA node.
PciDistance pci_distance(const std::vector<std::string>& a, std::optional<int> a_node,
                         const std::vector<std::string>& b, std::optional<int> b_node,
                         bool single_node);

// No port runs faster than this (XDR 12x is 2,400 Gb/sec): a larger rate, like inf, nan or a
// negative one, is a kernel file that cannot be believed, and is no rate.
inline constexpr double kMaxPortRateGbps = 100000;

// "400 Gb/sec (4X NDR)" -> 400, "4X", "NDR"; nullopt parts when they do not parse (a rate
// outside [0, kMaxPortRateGbps] does not).
struct ParsedRate {
  std::optional<double> gbps;
  std::optional<std::string> width, speed;
};
ParsedRate parse_rate(std::string_view text);

// A port's "rate_gbps" from a document (a probe's, or --facts): nullopt when it is absent or no
// number in [0, kMaxPortRateGbps], so a hand-made or damaged document is judged as one without.
std::optional<double> port_rate_gbps(const nlohmann::json& port);

// The document's "infiniband" object.
nlohmann::json to_json(const InfinibandFacts& facts);

// Only the error counters again, for a second reading: {"mlx5_0/1": {"symbol_error": 0, ...}}.
nlohmann::json read_infiniband_counters(const std::filesystem::path& root);

}  // namespace gpucheck::host
