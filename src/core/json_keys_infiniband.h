// The keys only the InfiniBand / RoCE section writes (the document's "infiniband" object, from
// /sys/class/infiniband), beside core/json_keys.h in the same namespace; keys both share (name,
// state, pci_bus_id, counters, ...) stay there.
#pragma once

#include "core/json_keys.h"

namespace gpucheck::keys {

inline constexpr K kInfiniband = "infiniband";
inline constexpr K kHcaType = "hca_type";
inline constexpr K kNodeType = "node_type";
inline constexpr K kFwVer = "fw_ver";
inline constexpr K kNodeGuid = "node_guid";
inline constexpr K kSysImageGuid = "sys_image_guid";
inline constexpr K kBoardId = "board_id";
inline constexpr K kNumaNode = "numa_node";
inline constexpr K kPorts = "ports";
inline constexpr K kPort = "port";
inline constexpr K kLinkLayer = "link_layer";  // InfiniBand | Ethernet (RoCE)
inline constexpr K kPhysState = "phys_state";
inline constexpr K kRate = "rate";             // as sysfs says it: "400 Gb/sec (4X NDR)"
inline constexpr K kRateGbps = "rate_gbps";    // its number
inline constexpr K kLinkWidth = "link_width";  // "4X"
inline constexpr K kLinkSpeed = "link_speed";  // "NDR"
inline constexpr K kLid = "lid";
inline constexpr K kSmLid = "sm_lid";
inline constexpr K kPkeys = "pkeys";  // the non-zero entries of the PKey table, in index order
inline constexpr K kNetdev = "netdev";
inline constexpr K kUnreadable = "unreadable";  // "ports/1/rate: No such file or directory"
inline constexpr K kGpus = "gpus";
inline constexpr K kHcas = "hcas";
inline constexpr K kClosestHcas = "closest_hcas";
// pcie_switch | host_bridge | numa_node | cpu_interconnect | unknown (nvidia-smi topo's
// PIX/PXB, PHB, NODE, SYS)
inline constexpr K kDistance = "distance";
inline constexpr K kPeerMemoryModules = "peer_memory_modules";  // nvidia_peermem, nv_peer_mem

}  // namespace gpucheck::keys
