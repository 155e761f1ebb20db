// Reading the stack's versions out of the CUDA and OpenCL probe sections.
#include "report/stack_versions.h"

#include "core/json_keys.h"

namespace gpucheck::report {

namespace k = keys;

namespace {

const nlohmann::json& section(const nlohmann::json& backends, std::string_view name) {
  static const nlohmann::json kNone = nlohmann::json::object();
  if (!backends.is_array()) return kNone;
  for (const auto& b : backends)
    if (b.is_object() && b.value(std::string(k::kName), "") == name) return b;
  return kNone;
}

// obj[a][b]... as a string, empty when any step is missing.
std::string at(const nlohmann::json& obj, std::initializer_list<std::string_view> path) {
  const nlohmann::json* v = &obj;
  for (auto key : path) {
    if (!v->is_object()) return {};
    auto it = v->find(key);
    if (it == v->end()) return {};
    v = &*it;
  }
  return v->is_string() ? v->get<std::string>() : std::string();
}

std::string absent_reason(const nlohmann::json& b, std::string_view backend) {
  if (b.empty()) return std::string(backend) + " backend not probed";
  std::string status = b.value(std::string(k::kStatus), "");
  std::string reason = b.value(std::string(k::kReason), "");
  if (status == "available") return "not found";
  return reason.empty() ? std::string(backend) + " " + status : reason;
}

}  // namespace

std::vector<StackVersion> stack_versions(const nlohmann::json& backends) {
  const auto& cuda = section(backends, "cuda");
  const auto& opencl = section(backends, "opencl");
  const std::string cuda_absent = absent_reason(cuda, "cuda");
  auto entry = [](std::string key, std::string label, std::string version, std::string path,
                  const std::string& why) {
    return StackVersion{std::move(key), std::move(label), version, std::move(path),
                        version.empty() ? why : std::string()};
  };
  std::vector<StackVersion> out;
  std::string driver = at(cuda, {k::kNvml, k::kDriverVersion});
  std::string driver_path = at(cuda, {k::kDriver, k::kRealPath});
  if (driver.empty()) {
    // Without NVML, NVIDIA's OpenCL platform tells the driver's version too.
    for (const auto& d : opencl.value(std::string(k::kDevices), nlohmann::json::array()))
      if (at(d, {k::kProperties, "cl_device_vendor"}).rfind("NVIDIA", 0) == 0) {
        driver = at(d, {k::kProperties, "cl_driver_version"});
        driver_path = "read through NVIDIA's OpenCL platform";
        break;
      }
  }
  out.push_back(
      entry(std::string(k::kNvidiaDriver), "NVIDIA driver", driver, driver_path, cuda_absent));
  out.push_back(entry(std::string(k::kCudaDriver), "CUDA driver API",
                      at(cuda, {k::kDriver, k::kCudaVersion}), at(cuda, {k::kDriver, k::kPath}),
                      cuda_absent));
  out.push_back(entry(std::string(k::kCudaRuntime), "CUDA runtime",
                      at(cuda, {k::kRuntime, k::kVersion}), "linked into gpucheck", cuda_absent));
  for (auto [key, label] : {std::pair{k::kCublas, "cuBLAS"}, std::pair{k::kCublaslt, "cuBLASLt"},
                            std::pair{k::kCudnn, "cuDNN"}}) {
    std::string why = at(cuda, {k::kLibraries, key, k::kError});
    out.push_back(entry(std::string(key), label, at(cuda, {k::kLibraries, key, k::kVersion}),
                        at(cuda, {k::kLibraries, key, k::kPath}), why.empty() ? cuda_absent : why));
  }
  std::string nvml_why = at(cuda, {k::kNvml, k::kError});
  out.push_back(entry(std::string(k::kNvml), "NVML", at(cuda, {k::kNvml, k::kNvmlVersion}),
                      at(cuda, {k::kNvml, k::kPath}), nvml_why.empty() ? cuda_absent : nvml_why));
  std::string loader = at(opencl, {k::kLoader, k::kKind});
  if (std::string v = at(opencl, {k::kLoader, k::kVersion}); !v.empty()) loader += " " + v;
  out.push_back(entry(std::string(k::kOpenclLoader), "OpenCL loader", loader,
                      at(opencl, {k::kLoader, k::kPath}), absent_reason(opencl, "opencl")));
  return out;
}

nlohmann::json stack_versions_json(const std::vector<StackVersion>& versions) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& v : versions)
    if (!v.version.empty()) j[v.key] = v.version;
  return j;
}

}  // namespace gpucheck::report
