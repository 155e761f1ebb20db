// The table of backends (GPUCHECK_HAVE_* from CMake say which are built).
#include "core/backend_descriptors.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace gpucheck {

namespace {

using Json = nlohmann::json;

#if GPUCHECK_HAVE_CUDA
constexpr bool kCudaBuilt = true;
#else
constexpr bool kCudaBuilt = false;
#endif
#if GPUCHECK_HAVE_OPENCL
constexpr bool kOpenclBuilt = true;
#else
constexpr bool kOpenclBuilt = false;
#endif
#if GPUCHECK_HAVE_VULKAN
constexpr bool kVulkanBuilt = true;
#else
constexpr bool kVulkanBuilt = false;
#endif

std::optional<double> number_property(const Json& props, const char* key) {
  auto it = props.find(key);
  if (it == props.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string string_property(const Json& props, const char* key) {
  auto it = props.find(key);
  return it != props.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<double> cuda_memory(const Json& props) {
  return number_property(props, "global_memory_bytes");
}

// NVML's, which the CUDA section carries beside its devices.
std::string cuda_driver(const Json& section, const Json& /*props*/) {
  auto nvml = section.find(keys::kNvml);
  if (nvml == section.end() || !nvml->is_object()) return {};
  return nvml->value(std::string(keys::kDriverVersion), "");
}

// cl_device_type is {"value": bits, "flags": ["CL_DEVICE_TYPE_GPU", ...]}.
bool opencl_type_has(const Json& props, std::string_view flag) {
  auto type = props.find("cl_device_type");
  if (type == props.end() || !type->is_object()) return false;
  auto flags = type->find("flags");
  if (flags == type->end() || !flags->is_array()) return false;
  return std::any_of(flags->begin(), flags->end(), [&](const Json& f) { return f == flag; });
}

bool opencl_host_cpu(const Json& props) {
  return opencl_type_has(props, "CL_DEVICE_TYPE_CPU");
}
bool opencl_gpu(const Json& props) {
  return opencl_type_has(props, "CL_DEVICE_TYPE_GPU");
}

std::optional<double> opencl_memory(const Json& props) {
  return number_property(props, "cl_device_global_mem_size");
}

std::string opencl_driver(const Json& /*section*/, const Json& props) {
  return string_property(props, "cl_driver_version");
}

// lavapipe and SwiftShader report VK_PHYSICAL_DEVICE_TYPE_CPU.
bool vulkan_host_cpu(const Json& props) {
  return string_property(props, "device_type") == "VK_PHYSICAL_DEVICE_TYPE_CPU";
}

// A virtual GPU is a GPU a hypervisor hands a VM (virtio-gpu's Venus): the host's GPU, reached
// through it, and benched as one.
bool vulkan_gpu(const Json& props) {
  const std::string type = string_property(props, "device_type");
  return type == "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU" ||
         type == "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU" ||
         type == "VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU";
}

// The largest device-local heap, as the bench device budgets by it.
std::optional<double> vulkan_memory(const Json& props) {
  std::optional<double> bytes;
  auto heaps = props.find("memory_heaps");
  if (heaps == props.end() || !heaps->is_array()) return bytes;
  for (const auto& heap : *heaps) {
    const auto flags = heap.value("flags", Json::array());
    if (heap.value("size", Json()).is_number() &&
        std::find(flags.begin(), flags.end(), "VK_MEMORY_HEAP_DEVICE_LOCAL_BIT") != flags.end())
      bytes = std::max(bytes.value_or(0), heap["size"].get<double>());
  }
  return bytes;
}

std::string vulkan_driver(const Json& /*section*/, const Json& props) {
  return string_property(props, "driver_version");
}

const std::array kDescriptors{
    BackendDescriptor{.name = "cpu",
                      .built = true,
                      .ids = DeviceIds::kName,
                      .kinds = DeviceKinds::kHostCpu,
                      .framework_peers = true},
    BackendDescriptor{
        .name = "cuda",
        .built = kCudaBuilt,
        .not_built_reason = "not built: configure with GPUCHECK_WITH_CUDA=ON and a CUDA toolkit",
        .ids = DeviceIds::kNumbered,
        .stable_id = "<uuid>",
        .kinds = DeviceKinds::kGpu,
        .face = GpuFace::kEvery,
        .memory_bytes = cuda_memory,
        .driver_version = cuda_driver,
        .telemetry = true,
        .group_ops = true,
        .framework_peers = true,
        .vendor = "nvidia",
        .tuning = {.untuned = "cuDNN engines and cuBLASLt algorithms searched in every run",
                   .searched = "its cuDNN engines and cuBLASLt algorithms, kept per device so "
                               "that every run times the same ones"}},
    BackendDescriptor{
        .name = "opencl",
        .built = kOpenclBuilt,
        .not_built_reason = "not built: configure with GPUCHECK_WITH_OPENCL=ON and opencl-headers",
        .ids = DeviceIds::kNumbered,
        .stable_id = "<pci-bus-id>",
        .kinds = DeviceKinds::kEither,
        .host_cpu = opencl_host_cpu,
        .gpu = opencl_gpu,
        .face = GpuFace::kNewBus,
        .memory_bytes = opencl_memory,
        .driver_version = opencl_driver,
        .tuning = {.budget = "default 45, 5 on CPU implementations such as pocl, timing the "
                             "library's defaults included, starting once the library has built "
                             "its own kernels",
                   .untuned = "GEMM and conv with the library's defaults, unsearched",
                   .searched = "its GEMM parameters"}},
    BackendDescriptor{
        .name = "vulkan",
        .built = kVulkanBuilt,
        .not_built_reason =
            "not built: configure with GPUCHECK_WITH_VULKAN=ON and the Vulkan headers",
        .ids = DeviceIds::kNumbered,
        .stable_id = "<pci-bus-id>",
        .kinds = DeviceKinds::kEither,
        .host_cpu = vulkan_host_cpu,
        .gpu = vulkan_gpu,
        // AMD without ROCm, Intel without Level Zero: reached by no earlier backend.
        .face = GpuFace::kKnownNewBus,
        .memory_bytes = vulkan_memory,
        .driver_version = vulkan_driver,
        .tuning = {.budget = "default 10, a CPU implementation (lavapipe) searched only when "
                             "--tune-budget or --retune asks",
                   .untuned = "GEMM and conv with the shader's default parameters, unsearched",
                   .searched = "its GEMM parameters"}},
    // Named on every platform's report so a document from Linux and one from macOS compare.
    BackendDescriptor{.name = "metal",
                      .not_built_reason = "not built on this platform (Metal needs macOS)"},
};

bool all_ascii_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string append_listed(const std::string& a, std::string_view b) {
  return a.empty() ? std::string(b) : a + ", " + std::string(b);
}

}  // namespace

std::string tuning_words(std::string_view TuningWords::*field) {
  std::string out;
  for (const auto& b : kDescriptors) {
    const std::string_view words = b.tuning.*field;
    if (!words.empty()) out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", b.name, words);
  }
  return out;
}

std::span<const BackendDescriptor> backend_descriptors() {
  return kDescriptors;
}

const BackendDescriptor* find_backend_descriptor(std::string_view name) {
  for (const auto& b : kDescriptors)
    if (b.name == name) return &b;
  return nullptr;
}

std::string backend_of_device_name(std::string_view device) {
  for (const auto& b : kDescriptors) {
    if (b.ids == DeviceIds::kName && device == b.name) return std::string(b.name);
    if (b.ids == DeviceIds::kNumbered && device.starts_with(b.name) &&
        all_ascii_digits(device.substr(b.name.size())))
      return std::string(b.name);
  }
  // A stable id: the backend's name, a colon and one line of anything.
  const auto colon = device.find(':');
  if (colon == std::string_view::npos) return {};
  const auto* b = find_backend_descriptor(device.substr(0, colon));
  const std::string_view rest = device.substr(colon + 1);
  if (!b || b->stable_id.empty() || rest.empty() || rest.find_first_of("\n\r") != rest.npos)
    return {};
  return std::string(b->name);
}

bool backend_is_host_cpu(std::string_view backend) {
  const auto* b = find_backend_descriptor(backend);
  return b && b->kinds == DeviceKinds::kHostCpu;
}

bool device_on_host_cpu(std::string_view backend, const nlohmann::json& properties) {
  const auto* b = find_backend_descriptor(backend);
  if (!b) return false;
  if (b->kinds == DeviceKinds::kHostCpu) return true;
  return b->kinds == DeviceKinds::kEither && b->host_cpu(properties);
}

bool device_is_gpu(std::string_view backend, const nlohmann::json& properties) {
  const auto* b = find_backend_descriptor(backend);
  if (!b) return false;
  if (b->kinds == DeviceKinds::kGpu) return true;
  return b->kinds == DeviceKinds::kEither && b->gpu(properties);
}

bool backend_is_first_face(std::string_view backend) {
  const auto* b = find_backend_descriptor(backend);
  return b && b->face == GpuFace::kEvery;
}

std::string_view backend_vendor(std::string_view backend) {
  const auto* b = find_backend_descriptor(backend);
  return b ? b->vendor : std::string_view();
}

bool backend_has_telemetry(std::string_view backend) {
  const auto* b = find_backend_descriptor(backend);
  return b && b->telemetry;
}

bool backend_has_framework_peers(std::string_view backend) {
  const auto* b = find_backend_descriptor(backend);
  return b && b->framework_peers;
}

std::string group_ops_backend() {
  for (const auto& b : kDescriptors)
    if (b.group_ops) return std::string(b.name);
  return {};
}

std::string numbered_device_examples() {
  std::string out;
  for (const auto& b : kDescriptors)
    if (b.ids == DeviceIds::kNumbered) out = append_listed(out, std::string(b.name) + "0");
  return out;
}

std::string stable_device_forms() {
  std::string out;
  for (const auto& b : kDescriptors)
    if (!b.stable_id.empty())
      out = append_listed(out, std::string(b.name) + ":" + std::string(b.stable_id));
  return out;
}

}  // namespace gpucheck
