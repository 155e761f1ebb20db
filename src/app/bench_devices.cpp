// Device names: flat ids (cuda0), stable ids (cuda:<uuid>, opencl:<pci>), cpu and all.
#include "app/bench_devices.h"

#include "backends/registry.h"
#include "core/errors.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

namespace gpucheck::app {

namespace k = keys;

namespace {

// The backend a device name belongs to, by its form; empty when the form is unknown.
std::string backend_of(const std::string& name) {
  static const std::regex flat(R"(^(cpu|cuda[0-9]+|opencl[0-9]+|vulkan[0-9]+|test_[a-z]+[0-9]+)$)");
  static const std::regex stable(R"(^(cuda|opencl|vulkan):.+$)");
  std::smatch m;
  if (name == "cpu") return "cpu";
  if (std::regex_match(name, m, flat)) {
    std::string id = m[1];
    return id.substr(0, id.find_first_of("0123456789"));
  }
  if (std::regex_match(name, m, stable)) return m[1];
  return {};
}

// The section's device list by reference (value() would copy, and pointers into it dangle).
const nlohmann::json& devices_of(const nlohmann::json& backend) {
  static const nlohmann::json kNone = nlohmann::json::array();
  auto it = backend.find(k::kDevices);
  return it != backend.end() && it->is_array() ? *it : kNone;
}

std::vector<std::pair<std::string, std::string>> found_devices(const nlohmann::json& backends) {
  std::vector<std::pair<std::string, std::string>> out;  // (flat id, backend)
  for (const auto& b : backends)
    for (const auto& d : devices_of(b))
      out.emplace_back(d.value(std::string(k::kDevice), ""), b.value(std::string(k::kName), ""));
  return out;
}

std::string valid_list(const nlohmann::json& backends) {
  std::vector<std::string> names{"cpu", "all"};
  for (const auto& [id, backend] : found_devices(backends))
    if (std::find(names.begin(), names.end(), id) == names.end()) names.push_back(id);
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  std::string built;
  for (const auto& b : built_backend_names()) built += (built.empty() ? "" : ", ") + b;
  return fmt::format(
      "valid devices here: {} (backends built: {}; stable forms: cuda:<uuid>, "
      "opencl:<pci-bus-id>, vulkan:<pci-bus-id>)",
      out, built);
}

const nlohmann::json* find_device(const nlohmann::json& backends, const std::string& name) {
  for (const auto& b : backends)
    for (const auto& d : devices_of(b))
      if (d.value(std::string(k::kDevice), "") == name ||
          d.value(std::string(k::kStableId), "") == name ||
          (name.find(':') != std::string::npos &&
           name.substr(name.find(':') + 1) == d.value(std::string(k::kDeviceUuid), "-")))
        return &d;
  return nullptr;
}

std::string why_missing(const nlohmann::json& backends, const std::string& name,
                        const std::string& backend) {
  for (const auto& b : backends)
    if (b.value(std::string(k::kName), "") == backend) {
      std::string status = b.value(std::string(k::kStatus), "");
      if (status != "available")
        return fmt::format("device '{}' is not there: the {} backend is {}: {}", name, backend,
                           status, b.value(std::string(k::kReason), ""));
      return fmt::format("device '{}' is not there: the {} backend found {} device(s)", name,
                         backend, devices_of(b).size());
    }
  return fmt::format("device '{}' is not there", name);
}

bool is_opencl_gpu(const nlohmann::json& device) {
  auto type = device.find(k::kProperties);
  if (type == device.end() || !type->contains("cl_device_type")) return false;
  const auto& flags = (*type)["cl_device_type"];
  if (!flags.is_object() || !flags.contains(k::kFlags)) return false;
  for (const auto& f : flags[k::kFlags])
    if (f == "CL_DEVICE_TYPE_GPU") return true;
  return false;
}

}  // namespace

std::vector<BenchTarget> gpu_targets(const nlohmann::json& backends) {
  std::vector<BenchTarget> out;
  std::vector<std::string> taken_buses;  // lower case: CUDA writes hex digits in upper case
  auto lower = [](std::string v) {
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return v;
  };
  for (const auto& b : backends)
    if (b.value(std::string(k::kName), "") == "cuda")
      for (const auto& d : devices_of(b)) {
        out.push_back({d.value(std::string(k::kDevice), ""), "cuda"});
        taken_buses.push_back(lower(d.value(std::string(k::kPciBusId), "")));
      }
  for (const auto& b : backends)
    if (b.value(std::string(k::kName), "") == "opencl")
      for (const auto& d : devices_of(b)) {
        const std::string bus = lower(d.value(std::string(k::kPciBusId), ""));
        if (!is_opencl_gpu(d)) continue;
        if (!bus.empty() &&
            std::find(taken_buses.begin(), taken_buses.end(), bus) != taken_buses.end())
          continue;
        out.push_back({d.value(std::string(k::kDevice), ""), "opencl"});
        if (!bus.empty()) taken_buses.push_back(bus);
      }
  // A Vulkan GPU that no earlier backend reached (AMD without ROCm, Intel without Level Zero).
  for (const auto& b : backends)
    if (b.value(std::string(k::kName), "") == "vulkan")
      for (const auto& d : devices_of(b)) {
        const std::string bus = lower(d.value(std::string(k::kPciBusId), ""));
        const auto type =
            d.value(std::string(k::kProperties), nlohmann::json::object()).value("device_type", "");
        if (type != "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU" &&
            type != "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU")
          continue;
        if (bus.empty() ||
            std::find(taken_buses.begin(), taken_buses.end(), bus) != taken_buses.end())
          continue;
        out.push_back({d.value(std::string(k::kDevice), ""), "vulkan"});
      }
  return out;
}

bool needs_probe(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const auto& n) { return n != "cpu"; });
}

void refuse_repeated_device_names(const std::vector<std::string>& names) {
  std::set<std::string_view> seen;
  for (const auto& name : names)
    if (!seen.insert(name).second)
      throw UsageError(fmt::format("--device: '{}' is named twice", name));
}

DeviceResolution resolve_devices(const std::vector<std::string>& names,
                                 const nlohmann::json& backends) {
  refuse_repeated_device_names(names);
  DeviceResolution out;
  // A device named twice (cpu,cpu; cuda0 and its cuda:<uuid>) would be benchmarked twice and
  // its records would pair with each other in report compare: a usage error. "all" overlaps
  // the names beside it by design.
  std::map<std::string, std::string> named;  // device -> the name that chose it
  auto add = [&](const std::string& device, const std::string& backend,
                 const std::string& name = {}) {
    if (!name.empty()) {
      auto [it, fresh] = named.emplace(device, name);
      if (!fresh && it->second == name)
        throw UsageError(fmt::format("--device: '{}' is named twice", name));
      if (!fresh)
        throw UsageError(fmt::format("--device: '{}' is {}, which '{}' named already", name, device,
                                     it->second));
    }
    for (const auto& t : out.targets)
      if (t.device == device) return;
    out.targets.push_back({device, backend});
  };
  auto built = built_backend_names();
  for (const auto& name : names) {
    if (name == "all") {
      add("cpu", "cpu");
      for (const auto& [id, backend] : found_devices(backends))
        if (backend != "cpu" && backend.rfind("test_", 0) != 0) add(id, backend);
      continue;
    }
    std::string backend = backend_of(name);
    if (backend.empty())
      throw UsageError(
          fmt::format("--device: '{}' is not a device name; {}", name, valid_list(backends)));
    bool is_test = backend.rfind("test_", 0) == 0;
    if (!is_test && std::find(built.begin(), built.end(), backend) == built.end())
      throw UsageError(
          fmt::format("--device: '{}': the {} backend is not built into this gpucheck; {}", name,
                      backend, valid_list(backends)));
    if (backend == "cpu") {
      add("cpu", "cpu", name);
      continue;
    }
    const nlohmann::json* d = find_device(backends, name);
    if (!d) {
      out.missing.push_back(why_missing(backends, name, backend));
      out.missing_names.push_back(name);
      continue;
    }
    add(d->value(std::string(k::kDevice), name), backend, name);
  }
  return out;
}

}  // namespace gpucheck::app
