// The probe's devices as qualify sees them, which of them a requirement is about, and numeric
// version tuples.
#include "qualify/judge.h"

#include "core/files.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpucheck::qualify {

namespace k = keys;

std::vector<DeviceFacts> list_devices(const nlohmann::json& backends) {
  std::vector<DeviceFacts> out;
  for (const auto& b : backends) {
    if (!b.is_object() || !b.contains(k::kDevices) || !b[k::kDevices].is_array()) continue;
    for (const auto& d : b[k::kDevices]) {
      if (!d.is_object()) continue;
      DeviceFacts f;
      f.device = d.value(std::string(k::kDevice), "");
      f.backend = b.value(std::string(k::kName), "");
      f.name = d.value(std::string(k::kDeviceName), "");
      f.stable_id = d.value(std::string(k::kStableId), "");
      f.uuid = d.value(std::string(k::kDeviceUuid), "");
      f.pci_bus_id = d.value(std::string(k::kPciBusId), "");
      f.properties = d.value(std::string(k::kProperties), nlohmann::json::object());
      if (!f.device.empty() && f.backend.rfind("test_", 0) != 0) out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<DeviceFacts> select_devices(const Requirement& r, const std::vector<DeviceFacts>& all) {
  std::vector<DeviceFacts> out;
  for (const auto& d : all) {
    if (r.selector == Selector::kNamed) {
      auto colon = r.device.find(':');
      bool by_uuid =
          colon != std::string::npos && !d.uuid.empty() && r.device.substr(colon + 1) == d.uuid;
      if (d.device == r.device || d.stable_id == r.device || by_uuid) out.push_back(d);
    } else if (r.backend.empty() || r.backend == d.backend) {
      out.push_back(d);
    }
  }
  return out;
}

std::optional<std::string> read_pci_device_id(const std::string& root, const std::string& bus_id) {
  // A bus id is "0000:00:06.0": nothing in it may climb out of the devices directory.
  if (bus_id.empty() || bus_id.find('/') != std::string::npos ||
      bus_id.find("..") != std::string::npos)
    return std::nullopt;
  auto text =
      read_text_file(std::filesystem::path(root) / "sys/bus/pci/devices" / bus_id / "device", 4096);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string id;
  if (!(in >> id)) return std::nullopt;
  return id;
}

std::string why_no_device(const Requirement& r, const nlohmann::json& backends) {
  std::string backend = r.backend;
  if (r.selector == Selector::kNamed) {
    auto end = r.device.find_first_of(":0123456789");
    backend = r.device.substr(0, end);
  }
  std::string what = r.selector == Selector::kNamed
                         ? fmt::format("device '{}' is not there", r.device)
                     : backend.empty() ? std::string("no device found")
                                       : fmt::format("no {} device found", backend);
  for (const auto& b : backends)
    if (b.value(std::string(k::kName), "") == backend) {
      std::string status = b.value(std::string(k::kStatus), "");
      if (status != "available")
        return fmt::format("{}: the {} backend is {}: {}", what, backend, status,
                           b.value(std::string(k::kReason), ""));
      return fmt::format("{}: the {} backend found {} device(s)", what, backend,
                         b.value(std::string(k::kDevices), nlohmann::json::array()).size());
    }
  return what;
}

std::optional<std::vector<long>> version_tuple(std::string_view text) {
  std::vector<long> parts;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end && (*p < '0' || *p > '9')) ++p;  // "OpenCL 3.0" and "v535" read as numbers
  while (p < end) {
    long v = 0;
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc()) break;
    parts.push_back(v);
    p = r.ptr;
    if (p + 1 < end && *p == '.' && p[1] >= '0' && p[1] <= '9')
      ++p;
    else
      break;
  }
  if (parts.empty()) return std::nullopt;
  return parts;
}

int compare_versions(const std::vector<long>& a, const std::vector<long>& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    long x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace gpucheck::qualify
