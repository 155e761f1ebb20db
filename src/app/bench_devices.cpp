// Device names: flat ids (cuda0), stable ids (cuda:<uuid>, opencl:<pci>), cpu and all.
#include "app/bench_devices.h"

#include "backends/registry.h"
#include "core/backend_descriptors.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "core/same_gpu_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace gpucheck::app {

namespace k = keys;

namespace {

// The backend a device name belongs to, by its form; empty when the form is unknown.
std::string backend_of(const std::string& name) {
  static const std::regex test(R"(^(test_[a-z]+)[0-9]+$)");
  std::smatch m;
  if (std::regex_match(name, m, test)) return m[1];
  return backend_of_device_name(name);
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
  return fmt::format("valid devices here: {} (backends built: {}; stable forms: {})", out, built,
                     stable_device_forms());
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

}  // namespace

std::vector<BenchTarget> gpu_targets(const nlohmann::json& backends) {
  std::vector<BenchTarget> out;
  std::vector<std::string> taken;  // lower case: CUDA writes hex digits in upper case
  auto has = [](const std::vector<std::string>& buses, const std::string& bus) {
    return std::find(buses.begin(), buses.end(), bus) != buses.end();
  };
  for (const auto& backend : backend_descriptors()) {
    if (backend.face == GpuFace::kNone) continue;
    std::vector<std::string> mine;
    for (const auto& b : backends) {
      if (b.value(std::string(k::kName), "") != backend.name) continue;
      for (const auto& d : devices_of(b)) {
        const std::string bus = ascii_lower(d.value(std::string(k::kPciBusId), ""));
        const auto props = d.value(std::string(k::kProperties), nlohmann::json::object());
        if (backend.face != GpuFace::kEvery && !device_is_gpu(backend.name, props)) continue;
        if (backend.face == GpuFace::kNewBus && !bus.empty() && (has(taken, bus) || has(mine, bus)))
          continue;
        if (backend.face == GpuFace::kKnownNewBus && (bus.empty() || has(taken, bus))) continue;
        out.push_back({d.value(std::string(k::kDevice), ""), std::string(backend.name)});
        if (!bus.empty()) mine.push_back(bus);
      }
    }
    taken.insert(taken.end(), mine.begin(), mine.end());
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
