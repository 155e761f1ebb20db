// Shared helpers of the checks.
#include "doctor/check_util.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/json_keys.h"

#include <fmt/format.h>

namespace gpucheck::doctor {

namespace k = keys;

std::string text(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const nlohmann::json& array_at(const nlohmann::json& obj, std::string_view key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

CheckResult not_applicable(std::string why, std::vector<std::string> evidence) {
  CheckResult r;
  r.status = CheckStatus::kSkip;
  r.finding = "does not apply here: " + why;
  r.evidence = std::move(evidence);
  return r;
}

const nlohmann::json& opencl_section(const SystemView& view) {
  const nlohmann::json& s = view.require_backend("opencl");
  if (text(s, k::kStatus) == "not_built")
    throw NotObservable("gpucheck was built without OpenCL (" + text(s, k::kReason) + ")");
  return s;
}

const nlohmann::json& opencl_field(const SystemView& view, std::string_view key) {
  const nlohmann::json& s = opencl_section(view);
  auto it = s.find(key);
  if (it == s.end())
    throw NotObservable(fmt::format("the OpenCL probe {} before it reported '{}': {}",
                                    text(s, k::kStatus), key, text(s, k::kReason)));
  return *it;
}

std::string vendor_display_name(std::string_view vendor) {
  if (vendor == "nvidia") return "NVIDIA";
  if (vendor == "amd") return "AMD";
  if (vendor == "intel") return "Intel";
  if (vendor == "mesa_clover") return "Mesa Clover";
  if (vendor == "mesa_rusticl") return "Mesa rusticl";
  return std::string(vendor);
}

std::string vendor_display_names(const std::set<std::string>& vendors) {
  std::vector<std::string> names;
  for (const auto& v : vendors) names.push_back(vendor_display_name(v));
  return join(names, ", ");
}

std::vector<std::string> libcuda_locations(const SystemView& view) {
  std::vector<std::string> out;
  for (const char* p :
       {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib/aarch64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1", "/usr/lib/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
        "/usr/lib/wsl/lib/libcuda.so.1"})
    if (view.exists(p)) out.emplace_back(p);
  return out;
}

std::vector<std::string> device_nodes(const SystemView& view, std::string_view pattern) {
  return view.glob(pattern);
}

GpuExpectation expected_gpu_vendors(const SystemView& view) {
  GpuExpectation e;
  auto expect = [&](const std::string& vendor, std::string why) {
    e.vendors.insert(vendor);
    e.evidence.push_back(std::move(why));
  };
  if (auto v = view.env_value("NVIDIA_VISIBLE_DEVICES");
      v && !v->empty() && *v != "void" && *v != "none")
    expect("nvidia", "NVIDIA_VISIBLE_DEVICES=" + *v);
  for (const auto& p : libcuda_locations(view)) expect("nvidia", p + " (NVIDIA driver library)");
  for (const auto& p : device_nodes(view, "/dev/nvidia[0-9]*")) expect("nvidia", p);
  if (view.exists("/dev/kfd")) expect("amd", "/dev/kfd");
  for (const auto& p : view.glob("/opt/rocm*"))
    if (view.is_dir(p)) expect("amd", p + " (ROCm)");
  if (const nlohmann::json* cl = view.backend("opencl")) {
    for (const auto& lib : array_at(*cl, k::kUnregisteredVendorLibraries)) {
      const std::string vendor = text(lib, k::kVendor);
      if (vendor == "nvidia" || vendor == "amd" || vendor == "intel")
        expect(vendor,
               text(lib, k::kPath) + " (" + vendor_display_name(vendor) + "'s OpenCL library)");
    }
  }
  return e;
}

CheckResult combine(const std::vector<Finding>& findings, std::vector<std::string> evidence,
                    const std::string& all_clear) {
  if (findings.empty()) return pass(all_clear, std::move(evidence));
  CheckStatus worst = CheckStatus::kPass;
  const FaultCode* fault = nullptr;
  std::vector<std::string> texts, fixes;
  for (const auto& f : findings) {
    if (f.status != worst && worse(worst, f.status) == f.status) fault = nullptr;
    worst = worse(worst, f.status);
    if (f.status == worst && fault == nullptr) fault = f.code.get();
    texts.push_back(f.text);
    if (!f.fix.empty() && std::find(fixes.begin(), fixes.end(), f.fix) == fixes.end())
      fixes.push_back(f.fix);
  }
  CheckResult r = worst == CheckStatus::kFail   ? fail(join(texts, "; "), join(fixes, "; "))
                  : worst == CheckStatus::kWarn ? warn(join(texts, "; "), join(fixes, "; "))
                  : worst == CheckStatus::kInfo ? info(join(texts, "; "))
                                                : pass(join(texts, "; "));
  r.fault = fault;
  r.evidence = std::move(evidence);
  return r;
}

std::optional<std::string> dpkg_owner(const SystemView& view, std::string_view path) {
  std::vector<std::string> names{std::string(path)};
  if (path.starts_with("/usr/lib/") || path.starts_with("/usr/bin/"))
    names.push_back(std::string(path.substr(4)));
  else if (path.starts_with("/lib/") || path.starts_with("/bin/"))
    names.push_back("/usr" + std::string(path));
  for (const auto& list : view.glob("/var/lib/dpkg/info/*.list")) {
    auto text = view.read_file(list, std::size_t{64} << 20);
    if (!text) continue;
    for (const auto& name : names) {
      const std::string line = name + "\n";
      if (text->starts_with(line) || text->find("\n" + line) != std::string::npos) {
        std::string file = list.substr(list.rfind('/') + 1);
        return file.substr(0, file.size() - 5);  // "cuda-opencl-13-0.list" -> the package
      }
    }
  }
  return std::nullopt;
}

std::vector<PciGpu> pci_gpus(const SystemView& view) {
  const std::string dir = "/sys/bus/pci/devices";
  if (!view.is_dir(dir)) throw NotObservable(dir + " cannot be listed");
  static const std::map<std::string, std::string> kVendors{
      {"0x10de", "nvidia"}, {"0x1002", "amd"}, {"0x8086", "intel"}};
  std::vector<PciGpu> out;
  for (const auto& addr : view.list_dir(dir)) {
    auto vendor = view.read_file(dir + "/" + addr + "/vendor");
    auto cls = view.read_file(dir + "/" + addr + "/class");
    if (!vendor || !cls) continue;
    std::string v = vendor->substr(0, vendor->find_first_of(" \n"));
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    auto it = kVendors.find(v);
    if (it != kVendors.end() && cls->starts_with("0x03")) out.push_back({addr, it->second});
  }
  return out;
}

std::string gpu_list(const std::vector<PciGpu>& gpus) {
  std::vector<std::string> parts;
  for (const auto& g : gpus) parts.push_back(vendor_display_name(g.vendor) + " " + g.address);
  return join(parts, ", ");
}

}  // namespace gpucheck::doctor
