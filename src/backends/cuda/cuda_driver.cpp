// dlopen of libcuda.so.1 and the few driver-API calls that classify the driver.
#include "backends/cuda/cuda_driver.h"

#include "core/dynamic_library.h"
#include "core/sanitize.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace gpucheck::cuda {

namespace {

bool under_stubs_dir(const std::string& path) {
  return path.find("/stubs/") != std::string::npos;
}

template <typename Fn>
Fn sym(void* handle, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(handle, name));
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string cuda_version_string(int encoded) {
  return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

DriverVerdict judge_driver(const DriverObservation& o) {
  if (!o.loaded) return {false, fmt::format("no NVIDIA driver: {}", o.dlerror), "no_driver"};
  const bool stub_file = under_stubs_dir(o.real_path) || under_stubs_dir(o.path);
  const bool stub_code = o.init_result && *o.init_result == CUDA_ERROR_STUB_LIBRARY;
  if (stub_file || stub_code)
    return {false,
            fmt::format("the CUDA driver library loaded is the toolkit's stub ({}): it exists only "
                        "for linking; remove its directory from LD_LIBRARY_PATH (or the ld.so "
                        "configuration) so that the driver's libcuda.so.1 is found",
                        o.real_path.empty() ? o.path : o.real_path),
            "stub"};
  const bool hidden = o.cuda_visible_devices.has_value();
  if (o.init_result && *o.init_result == CUDA_ERROR_NO_DEVICE) {
    if (hidden && !o.dev_nodes.empty())
      return {false,
              fmt::format("CUDA_VISIBLE_DEVICES='{}' hides every device (the driver's device "
                          "nodes are there: {})",
                          *o.cuda_visible_devices, join(o.dev_nodes)),
              "hidden"};
    return {false,
            o.dev_nodes.empty()
                ? std::string("no CUDA device: cuInit reports CUDA_ERROR_NO_DEVICE and there are "
                              "no /dev/nvidia* device nodes (is the nvidia kernel module loaded?)")
                : fmt::format("no CUDA device: cuInit reports CUDA_ERROR_NO_DEVICE (device nodes: "
                              "{})",
                              join(o.dev_nodes)),
            "no_device"};
  }
  if (o.init_result && *o.init_result != CUDA_SUCCESS)
    return {false,
            fmt::format("the NVIDIA driver ({}) failed to initialise: cuInit returned {} ({})",
                        o.real_path, o.init_error_name.empty() ? "?" : o.init_error_name,
                        *o.init_result),
            "init_failed"};
  if (o.driver_version && *o.driver_version < kRequiredDriverCudaVersion)
    return {false,
            fmt::format("the NVIDIA driver supports CUDA {} but this gpucheck's runtime needs "
                        "CUDA {}: update the driver to ≥ {} (CUDA {})",
                        cuda_version_string(*o.driver_version),
                        cuda_version_string(kRequiredDriverCudaVersion), kRequiredDriverBranch,
                        cuda_version_string(kRequiredDriverCudaVersion)),
            "too_old"};
  if (o.device_count && *o.device_count == 0) {
    if (hidden)
      return {false,
              fmt::format("CUDA_VISIBLE_DEVICES='{}' hides every device", *o.cuda_visible_devices),
              "hidden"};
    return {false, "no CUDA device: the driver reports 0 devices", "no_device"};
  }
  return {true, "", "ok"};
}

DriverObservation DriverLibrary::observe(const std::string& soname) {
  DriverObservation o;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) o.cuda_visible_devices = sanitize(v);
  o.dev_nodes = nvidia_dev_nodes();
  ::dlerror();
  // RTLD_GLOBAL + NODELETE: cudart_static opens the same soname later and must get this copy.
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    o.dlerror = sanitize(e != nullptr ? e : "dlopen failed");
    return o;
  }
  o.loaded = true;
  o.path = sanitize(link_map_path(handle));
  o.real_path = sanitize(resolved_path(link_map_path(handle)));
  auto cu_init = sym<decltype(&::cuInit)>(handle, "cuInit");
  auto cu_version = sym<decltype(&::cuDriverGetVersion)>(handle, "cuDriverGetVersion");
  auto cu_count = sym<decltype(&::cuDeviceGetCount)>(handle, "cuDeviceGetCount");
  auto cu_error_name = sym<decltype(&::cuGetErrorName)>(handle, "cuGetErrorName");
  if (cu_init == nullptr) {
    o.init_result = CUDA_ERROR_NOT_FOUND;
    o.init_error_name = "cuInit missing from the library";
    return o;
  }
  CUresult r = cu_init(0);
  o.init_result = static_cast<int>(r);
  if (cu_error_name != nullptr) {
    const char* name = nullptr;
    if (cu_error_name(r, &name) == CUDA_SUCCESS && name != nullptr) o.init_error_name = name;
  }
  int version = 0;
  if (cu_version != nullptr && cu_version(&version) == CUDA_SUCCESS) o.driver_version = version;
  if (r == CUDA_SUCCESS && cu_count != nullptr) {
    int count = 0;
    if (cu_count(&count) == CUDA_SUCCESS) o.device_count = count;
  }
  return o;
}

std::vector<std::string> nvidia_dev_nodes(const std::string& dev_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dev_dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("nvidia", 0) == 0) out.push_back(sanitize(e.path().string()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpucheck::cuda
