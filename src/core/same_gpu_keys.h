// The one rule for "these two devices are one physical GPU", which bench's concurrency waves and
// the report's same-GPU join both apply: equal PCI bus ids (any case), or equal UUIDs once NVIDIA's
// "GPU-" prefix and case are set aside (CUDA writes "GPU-…", OpenCL's cl_khr_device_uuid and
// Vulkan's deviceUUID the bare bytes). Two devices are one GPU when their keys intersect.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A UUID without NVIDIA's "GPU-" prefix, lower case.
inline std::string bare_gpu_uuid(std::string_view uuid) {
  std::string u = ascii_lower(uuid);
  if (u.rfind("gpu-", 0) == 0) u.erase(0, 4);
  return u;
}

// "pci:<bus id>" and "uuid:<bare uuid>", each where known.
inline std::vector<std::string> same_gpu_keys(std::string_view pci_bus_id, std::string_view uuid) {
  std::vector<std::string> keys;
  if (!pci_bus_id.empty()) keys.push_back("pci:" + ascii_lower(pci_bus_id));
  if (std::string u = bare_gpu_uuid(uuid); !u.empty()) keys.push_back("uuid:" + u);
  return keys;
}

inline bool same_gpu(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& k) {
    return std::find(b.begin(), b.end(), k) != b.end();
  });
}

}  // namespace gpucheck
