// Places on the PCI tree under a root prefix, shared by the InfiniBand readers: a function's path
// below sys/devices and its NUMA node, and the GPUs' distances to the RDMA adapters.
#pragma once

#include "host/infiniband.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::host {

// The path below sys/devices ("pci0000:00", "0000:00:01.0", ..., the function) of the PCI
// function a link leads to; empty when it leads to no PCI host bridge there.
std::vector<std::string> pci_chain(const std::filesystem::path& root,
                                   const std::filesystem::path& link);

// The function's numa_node; nullopt when missing or -1 (no affinity).
std::optional<int> numa_node_of(const std::filesystem::path& function);

// Every NVIDIA or AMD display function of sys/bus/pci/devices with its distance to each adapter
// that has a PCI function, nearest first; empty when no adapter has one.
std::vector<GpuAffinity> read_gpu_affinity(const std::filesystem::path& root,
                                           const std::vector<IbDevice>& devices);

}  // namespace gpucheck::host
