// Joining devices across backends by PCI bus id, else by UUID.
#include "report/same_gpu.h"

#include "core/backend_descriptors.h"
#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/same_gpu_keys.h"

#include <algorithm>

namespace gpucheck::report {

namespace k = keys;

void GpuMap::add(Entry e) {
  if (find(e.device)) return;
  e.gpu = gpus_;
  for (const auto& other : entries_) {
    if (other.backend == e.backend) continue;
    if (same_gpu(same_gpu_keys(e.pci_bus_id, e.uuid),
                 same_gpu_keys(other.pci_bus_id, other.uuid))) {
      e.gpu = other.gpu;
      break;
    }
  }
  if (e.gpu == gpus_) ++gpus_;
  entries_.push_back(std::move(e));
}

const GpuMap::Entry* GpuMap::find(const std::string& device) const {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.device == device; });
  return it == entries_.end() ? nullptr : &*it;
}

GpuMap GpuMap::from_backends(const nlohmann::json& backends) {
  GpuMap m;
  if (!backends.is_array()) return m;
  for (const auto& b : backends) {
    const std::string backend = string_member(b, k::kName);
    std::vector<std::string> nvidia_platforms;
    for (const auto& p : b.value(std::string(k::kPlatforms), nlohmann::json::array()))
      if (string_member(p, k::kFamily) == "nvidia" && p.contains(k::kIndex))
        nvidia_platforms.push_back(p[k::kIndex].dump());
    for (const auto& d : b.value(std::string(k::kDevices), nlohmann::json::array())) {
      Entry e{string_member(d, k::kDevice), backend, string_member(d, k::kDeviceName),
              string_member(d, k::kDeviceUuid), string_member(d, k::kPciBusId)};
      e.nvidia =
          backend_vendor(backend) == "nvidia" ||
          (d.contains(k::kPlatform) && std::find(nvidia_platforms.begin(), nvidia_platforms.end(),
                                                 d[k::kPlatform].dump()) != nvidia_platforms.end());
      m.add(std::move(e));
    }
  }
  return m;
}

GpuMap GpuMap::from_results(const nlohmann::json& results) {
  GpuMap m;
  if (!results.is_array()) return m;
  // CUDA records first, so an OpenCL device finds its CUDA twin whatever the record order.
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& r : results) {
      const std::string backend = string_member(r, k::kBackend);
      if (backend_is_first_face(backend) != (pass == 0)) continue;
      Entry e{string_member(r, k::kDevice), backend, string_member(r, k::kDeviceName),
              string_member(r, k::kDeviceUuid), string_member(r, k::kPciBusId)};
      e.nvidia = backend_vendor(backend) == "nvidia" || ascii_lower(e.name).rfind("nvidia", 0) == 0;
      m.add(std::move(e));
    }
  return m;
}

std::vector<std::string> GpuMap::same_as(const std::string& device) const {
  std::vector<std::string> out;
  const Entry* self = find(device);
  if (!self) return out;
  for (const auto& e : entries_)
    if (e.gpu == self->gpu && e.device != device) out.push_back(e.device);
  return out;
}

bool GpuMap::seen_before(const std::string& device, std::vector<std::string>& seen) const {
  const auto same = same_as(device);
  const bool before = std::any_of(same.begin(), same.end(), [&](const std::string& o) {
    return std::find(seen.begin(), seen.end(), o) != seen.end();
  });
  seen.push_back(device);
  return before;
}

std::string GpuMap::uuid(const std::string& device) const {
  const Entry* self = find(device);
  if (!self) return {};
  for (const auto& e : entries_)
    if (e.gpu == self->gpu && backend_is_first_face(e.backend) && !e.uuid.empty()) return e.uuid;
  if (self->uuid.empty()) return {};
  if (self->nvidia) return "GPU-" + bare_gpu_uuid(self->uuid);
  return self->uuid;
}

bool GpuMap::nvidia(const std::string& device) const {
  const Entry* self = find(device);
  return self && std::any_of(entries_.begin(), entries_.end(),
                             [&](const Entry& e) { return e.gpu == self->gpu && e.nvidia; });
}

std::string GpuMap::field(const std::string& device, std::string Entry::*member) const {
  const Entry* self = find(device);
  if (!self) return {};
  if (!(self->*member).empty()) return self->*member;
  for (const auto& e : entries_)
    if (e.gpu == self->gpu && !(e.*member).empty()) return e.*member;
  return {};
}

std::string GpuMap::pci_bus_id(const std::string& device) const {
  return field(device, &Entry::pci_bus_id);
}

std::string GpuMap::name(const std::string& device) const {
  return field(device, &Entry::name);
}

}  // namespace gpucheck::report
