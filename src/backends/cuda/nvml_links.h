// NVLink per GPU and link (state, version, remote, speed, error counters read per link), the
// fabric registration of NVSwitch systems, and each ordered pair of GPUs: the PCIe common
// ancestor, the NVLinks joining them (nvidia-smi topo -m's NV#) and NVML's P2P status.
#pragma once

#include "backends/cuda/nvml_api.h"
#include "backends/cuda/nvml_session.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::cuda {

struct NvLinkFns {
  nvml::DeviceLinkIntFn state = nullptr;          // nvmlDeviceGetNvLinkState
  nvml::DeviceLinkUintFn version = nullptr;       // nvmlDeviceGetNvLinkVersion
  nvml::DeviceLinkPciFn remote_pci = nullptr;     // nvmlDeviceGetNvLinkRemotePciInfo_v2
  nvml::DeviceLinkIntFn remote_type = nullptr;    // nvmlDeviceGetNvLinkRemoteDeviceType
  nvml::DeviceLinkCounterFn counter = nullptr;    // nvmlDeviceGetNvLinkErrorCounter
  nvml::DeviceFieldValuesFn fields = nullptr;     // nvmlDeviceGetFieldValues
  nvml::DevicePairTopologyFn topology = nullptr;  // nvmlDeviceGetTopologyCommonAncestor
  nvml::DevicePairP2pFn p2p = nullptr;            // nvmlDeviceGetP2PStatus
  nvml::DeviceFabricInfoFn fabric = nullptr;      // nvmlDeviceGetGpuFabricInfoV
  nvml::DevicePciInfoFn pci = nullptr;            // nvmlDeviceGetPciInfo_v3
  nvml::DeviceStringFn uuid = nullptr;            // nvmlDeviceGetUUID

  static NvLinkFns resolve(NvmlSession& session);
};

// The error counters in NVML's order (nvmlNvLinkErrorCounter_t), by the names the JSON uses.
inline constexpr const char* kNvLinkCounterNames[] = {"replay", "recovery", "crc_flit", "crc_data",
                                                      "ecc_data"};

// {"links": [{"link", "state": "active"|"inactive", "version", "remote_pci_bus_id",
//  "remote_device_type": "gpu"|"switch"|"ibmnpu"|"unknown", "speed_mbps",
//  "errors": {"replay", ...}}], "speed_common_mbps", "link_count"}; an empty object when the GPU
// answers for no link (no NVLink). Calls that fail other than NOT_SUPPORTED land in *errors.
nlohmann::json read_nvlink(const NvLinkFns& f, nvml::Device d, nlohmann::json& errors);

// The error counters of every active link: [{"link", "replay", ...}] (counters NVML answers).
nlohmann::json read_link_counters(const NvLinkFns& f, nvml::Device d);

// {"state": "not_supported"|"not_started"|"in_progress"|"completed", "status", "clique_id",
//  "cluster_uuid", "health_mask"}; empty when the call is missing or NOT_SUPPORTED.
nlohmann::json read_fabric(const NvLinkFns& f, nvml::Device d, nlohmann::json& errors);

struct PairGpu {
  nvml::Device handle = nullptr;
  std::string pci_bus_id;  // normalised, "0000:17:00.0"
  std::string uuid;
  nlohmann::json nvlink;  // read_nvlink's object
};

// One entry per ordered pair (i ≠ j): {"gpu", "peer" (PCI bus ids), "gpu_uuid", "peer_uuid",
// "common_ancestor": "PIX"|"PXB"|"PHB"|"NODE"|"SYS", "nvlinks": N, "topology": "NV18"|<ancestor>,
// "p2p": {"read","write","nvlink","atomics","pci": "ok"|"not_supported"|...}, "errors"}.
nlohmann::json read_gpu_pairs(const NvLinkFns& f, const std::vector<PairGpu>& gpus);

// nvmlGpuTopologyLevel_t as nvidia-smi topo -m names it; "unknown" for other values.
std::string topology_level_name(int level);
// nvmlGpuP2PStatus_t in lower_snake ("ok", "chipset_not_supported", "disabled_by_regkey", ...).
std::string p2p_status_name(int status);

// Active NVLinks of GPU a that reach GPU b: directly (remote PCI bus id = b's), or, when both
// reach NVSwitches, the smaller of their switch-link counts (every GPU of an NVSwitch fabric
// reaches every other through all its links, as nvidia-smi topo -m shows NV18 on HGX H100).
int nvlinks_between(const nlohmann::json& a_nvlink, const std::string& b_pci,
                    const nlohmann::json& b_nvlink);

// For doctor's reading after its load run: {"loaded", "error", "devices": [{"pci_bus_id",
// "device_uuid", "links": read_link_counters}]}.
nlohmann::json probe_nvlink_counters(const EnvMap& env);

}  // namespace gpucheck::cuda
