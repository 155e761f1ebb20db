// NVML telemetry through dlopen (libnvidia-ml.so.1, or GPUCHECK_NVML_LIB), and its join onto
// CUDA's devices by PCI bus id or UUID, never by index (CUDA orders fastest first, NVML by PCI).
#pragma once

#include "core/environment.h"

#include <nlohmann/json.hpp>

namespace gpucheck::cuda {

inline constexpr const char* kNvmlSoname = "libnvidia-ml.so.1";
inline constexpr const char* kNvmlLibEnv = "GPUCHECK_NVML_LIB";

// {"loaded": bool, "path", "error", "driver_version", "nvml_version", "cuda_driver_version",
//  "devices": [{"index", "pci_bus_id", "device_uuid", "device_name", ...fields...}]}.
// A field NVML answers NOT_SUPPORTED for is absent; other failures are listed under "errors";
// entry points the library lacks under "missing_functions".
nlohmann::json probe_nvml(const EnvMap& env);

// Adds each NVML device's fields as properties.nvml of the CUDA device with the same PCI bus id
// (or UUID); returns the NVML devices no CUDA device matched (hidden by CUDA_VISIBLE_DEVICES).
nlohmann::json join_nvml(nlohmann::json& cuda_devices, const nlohmann::json& nvml);

// "GPU idle", "SW power cap", ... for the reason bits; names in lower_snake.
nlohmann::json clocks_event_reason_names(unsigned long long bits);

// "0-3,8" from an affinity bitmask (words of `bits_per_word` bits).
std::string cpu_list_from_mask(const unsigned long* words, unsigned int count);

}  // namespace gpucheck::cuda
