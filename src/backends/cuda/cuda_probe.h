// deviceQuery-grade facts about each CUDA device, through the runtime (cudaDeviceGetAttribute:
// CUDA 13 dropped several cudaDeviceProp fields), and the helpers that name devices stably.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::cuda {

// "GPU-5d3e0b7a-1c2f-...": the 16 UUID bytes in nvidia-smi's form.
std::string format_gpu_uuid(const std::array<unsigned char, 16>& bytes);

// "0000:17:00.0" (lower-case hex, 4-digit domain) from CUDA's "0000:17:00.0" or NVML's
// "00000000:17:00.0"; nullopt when the text is not a PCI address.
std::optional<std::string> normalize_pci_bus_id(std::string_view text);

// One device's section: device, stable_id, device_name, device_uuid, pci_bus_id, properties.
// Attributes the driver refuses are left out and listed under properties.errors.
nlohmann::json probe_device(int index);

// can_access_peer[i][j] for every pair (false on the diagonal); empty for one device.
nlohmann::json peer_access_matrix(int count);

}  // namespace gpucheck::cuda
