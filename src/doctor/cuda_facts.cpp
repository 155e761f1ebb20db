// Reading the CUDA section, NVML's GPUs and the kernel's view of NVIDIA hardware.
#include "doctor/cuda_facts.h"

#include "core/json_keys.h"
#include "doctor/check_util.h"

#include <fmt/format.h>

#include <regex>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string trimmed(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<unsigned int> read_hex(const SystemView& view, const std::string& path) {
  auto text = view.read_file(path, 64);
  if (!text) return std::nullopt;
  try {
    return static_cast<unsigned int>(std::stoul(trimmed(*text), nullptr, 16));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string gpu_label(const Json& nvml_fields, const Json* cuda_device) {
  const std::string name = text(nvml_fields, k::kDeviceName);
  const std::string pci = text(nvml_fields, k::kPciBusId);
  std::string who = cuda_device != nullptr
                        ? text(*cuda_device, k::kDevice)
                        : fmt::format("NVML GPU {}", nvml_fields.value(k::kIndex, 0u));
  std::vector<std::string> parts;
  if (!name.empty()) parts.push_back(name);
  if (!pci.empty()) parts.push_back(pci);
  return parts.empty() ? who : fmt::format("{} ({})", who, join(parts, ", "));
}

}  // namespace

const Json& cuda_section(const SystemView& view) {
  const Json& s = view.require_backend("cuda");
  if (text(s, k::kStatus) == "not_built")
    throw NotObservable("gpucheck was built without CUDA (" + text(s, k::kReason) + ")");
  if (!s.contains(k::kDriver))
    throw NotObservable(fmt::format("the CUDA probe {} before it described the driver: {}",
                                    text(s, k::kStatus), text(s, k::kReason)));
  return s;
}

std::vector<NvmlGpu> nvml_gpus(const SystemView& view) {
  const Json& s = cuda_section(view);
  static const Json kNone = Json::object();
  const Json& nvml = s.contains(k::kNvml) ? s[std::string(k::kNvml)] : kNone;
  if (!nvml.value(k::kLoaded, false))
    throw NotObservable(
        fmt::format("NVML (libnvidia-ml.so.1) did not load: {}", text(nvml, k::kError)));
  if (nvml.contains(k::kError))
    throw NotObservable(
        fmt::format("NVML ({}) loaded but {}", text(nvml, k::kPath), text(nvml, k::kError)));
  std::vector<NvmlGpu> out;
  for (const auto& d : array_at(s, k::kDevices)) {
    const auto props = d.find(k::kProperties);
    if (props == d.end() || !props->contains(k::kNvml)) continue;
    const Json& f = (*props)[std::string(k::kNvml)];
    out.push_back({gpu_label(f, &d), &f, &d});
  }
  for (auto key : {k::kDevices, k::kUnmatched})
    for (const auto& f : array_at(nvml, key))
      if (!f.contains(k::kError)) out.push_back({gpu_label(f, nullptr), &f, nullptr});
  if (out.empty())
    throw NotObservable(fmt::format("NVML ({}) reports no GPU", text(nvml, k::kPath)));
  return out;
}

std::string nvml_origin(const SystemView& view) {
  const Json& nvml = cuda_section(view).value(k::kNvml, Json::object());
  return fmt::format("NVML {} (driver {})", text(nvml, k::kPath), text(nvml, k::kDriverVersion));
}

std::optional<int> parse_cuda_version(const std::string& text) {
  static const std::regex kVersion(R"(^\s*([0-9]+)\.([0-9]+)(\.[0-9.]+)?\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, kVersion)) return std::nullopt;
  return std::stoi(m[1]) * 1000 + std::stoi(m[2]) * 10;
}

std::string cuda_version_text(int encoded) {
  return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

std::optional<DriverCuda> driver_cuda_version(const SystemView& view) {
  const Json& s = cuda_section(view);
  const Json driver = s.value(k::kDriver, Json::object());
  if (auto v = parse_cuda_version(text(driver, k::kCudaVersion)))
    return DriverCuda{*v, "cuDriverGetVersion"};
  const Json nvml = s.value(k::kNvml, Json::object());
  if (auto v = parse_cuda_version(text(nvml, k::kCudaVersion)))
    return DriverCuda{*v, "nvmlSystemGetCudaDriverVersion_v2"};
  return std::nullopt;
}

std::vector<NvidiaPciDevice> nvidia_pci_devices(const SystemView& view) {
  const std::string dir = "/sys/bus/pci/devices";
  if (!view.is_dir(dir)) throw NotObservable(dir + " cannot be listed");
  std::vector<NvidiaPciDevice> out;
  for (const auto& addr : view.list_dir(dir)) {
    const std::string base = dir + "/" + addr;
    auto vendor = read_hex(view, base + "/vendor");
    auto cls = read_hex(view, base + "/class");
    if (vendor && *vendor == 0x10de && cls)
      out.push_back({addr, *cls, read_hex(view, base + "/device").value_or(0)});
  }
  return out;
}

std::vector<NvidiaPciDevice> nvidia_pci_gpus(const SystemView& view) {
  std::vector<NvidiaPciDevice> out;
  for (const auto& d : nvidia_pci_devices(view))
    if (d.is_gpu()) out.push_back(d);
  return out;
}

std::set<std::string> loaded_modules(const SystemView& view) {
  auto text = view.read_file("/proc/modules");
  if (!text) throw NotObservable("/proc/modules cannot be read");
  std::set<std::string> out;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    const std::string name = line.substr(0, line.find(' '));
    if (!name.empty()) out.insert(name);
  }
  return out;
}

std::optional<std::string> kernel_module_version(const SystemView& view) {
  auto text = view.read_file("/proc/driver/nvidia/version", 4096);
  if (!text) return std::nullopt;
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build ..."
  static const std::regex kModule(R"(NVRM version:.*?\s([0-9]+\.[0-9]+(\.[0-9]+)?)\s)");
  std::smatch m;
  if (!std::regex_search(*text, m, kModule)) return std::nullopt;
  return m[1].str();
}

std::string libcuda_file_version(const std::string& path) {
  static const std::regex kFile(R"(libcuda\.so\.([0-9]+\.[0-9]+(\.[0-9]+)?)$)");
  std::smatch m;
  return std::regex_search(path, m, kFile) ? m[1].str() : std::string();
}

NvidiaExpectation nvidia_expected(const SystemView& view) {
  NvidiaExpectation e;
  try {
    for (const auto& d : nvidia_pci_gpus(view))
      e.evidence.push_back(
          fmt::format("NVIDIA GPU on the PCI bus: {} (class {:06x})", d.address, d.pci_class));
  } catch (const NotObservable&) {
  }
  try {
    if (loaded_modules(view).contains("nvidia")) e.evidence.emplace_back("nvidia module loaded");
  } catch (const NotObservable&) {
  }
  const GpuExpectation gpus = expected_gpu_vendors(view);
  if (gpus.vendors.contains("nvidia"))
    for (const auto& ev : gpus.evidence)
      if (ev.find("nvidia") != std::string::npos || ev.find("NVIDIA") != std::string::npos)
        e.evidence.push_back(ev);
  e.expected = !e.evidence.empty();
  return e;
}

std::string major_minor(const std::string& version) {
  const auto first = version.find('.');
  if (first == std::string::npos) return version;
  const auto second = version.find('.', first + 1);
  return version.substr(0, second);
}

std::string major_minor_patch(const std::string& version) {
  std::size_t dots = 0;
  for (std::size_t i = 0; i < version.size(); ++i)
    if (version[i] == '.' && ++dots == 3) return version.substr(0, i);
  return version;
}

}  // namespace gpucheck::doctor
