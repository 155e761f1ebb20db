// dlopen of NVML with nvmlInit_v2, shared by the probe and the NVLink counter reads.
#include "backends/cuda/nvml_session.h"

#include "backends/cuda/library_loader.h"
#include "backends/cuda/nvml_probe.h"
#include "core/sanitize.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace gpucheck::cuda {

std::string nvml_error_name(nvml::Return r) {
  switch (r) {
    case nvml::kErrorUninitialized:
      return "NVML_ERROR_UNINITIALIZED";
    case nvml::kErrorInvalidArgument:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case nvml::kErrorNotSupported:
      return "NVML_ERROR_NOT_SUPPORTED";
    case nvml::kErrorNoPermission:
      return "NVML_ERROR_NO_PERMISSION";
    case nvml::kErrorNotFound:
      return "NVML_ERROR_NOT_FOUND";
    case nvml::kErrorInsufficientSize:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case nvml::kErrorDriverNotLoaded:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case nvml::kErrorFunctionNotFound:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case nvml::kErrorGpuIsLost:
      return "NVML_ERROR_GPU_IS_LOST";
    case nvml::kErrorLibRmVersionMismatch:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case nvml::kErrorUnknown:
      return "NVML_ERROR_UNKNOWN";
    default:
      return fmt::format("NVML_ERROR_{}", r);
  }
}

std::string NvmlSession::library_name(const EnvMap& env) {
  auto it = env.find(kNvmlLibEnv);
  return it != env.end() && !it->second.empty() ? it->second : kNvmlSoname;
}

std::unique_ptr<NvmlSession> NvmlSession::open(const EnvMap& env, std::string* error,
                                               std::string* loaded_path) {
  const std::string lib = library_name(env);
  ::dlerror();
  void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) {
    const char* e = ::dlerror();
    *error = sanitize(e != nullptr ? e : lib + ": dlopen failed");
    return nullptr;
  }
  if (loaded_path) *loaded_path = sanitize(link_map_path(h));
  std::unique_ptr<NvmlSession> s(new NvmlSession(h));
  auto init = reinterpret_cast<nvml::InitFn>(s->symbol("nvmlInit_v2"));
  if (init == nullptr) {
    *error = "nvmlInit_v2 missing from the library";
    return nullptr;
  }
  if (nvml::Return r = init(); r != nvml::kSuccess) {
    *error = fmt::format("nvmlInit_v2 failed: {} ({})", nvml_error_name(r), r);
    return nullptr;
  }
  // Only an initialised session shuts down.
  s->shutdown_ = s->get<nvml::ShutdownFn>("nvmlShutdown");
  return s;
}

NvmlSession::~NvmlSession() {
  if (shutdown_) shutdown_();
}

void* NvmlSession::symbol(const char* name) const {
  return ::dlsym(handle_, name);
}

std::vector<nvml::Device> NvmlSession::devices(std::vector<std::string>* errors) {
  auto count_fn = get_any<nvml::DeviceGetCountFn>({"nvmlDeviceGetCount_v2"});
  auto by_index = get_any<nvml::DeviceGetHandleByIndexFn>({"nvmlDeviceGetHandleByIndex_v2"});
  std::vector<nvml::Device> out;
  unsigned int count = 0;
  if (count_fn == nullptr || by_index == nullptr) return out;
  if (nvml::Return r = count_fn(&count); r != nvml::kSuccess) {
    errors->push_back("nvmlDeviceGetCount_v2: " + nvml_error_name(r));
    return out;
  }
  for (unsigned int i = 0; i < count; ++i) {
    nvml::Device d = nullptr;
    if (nvml::Return r = by_index(i, &d); r != nvml::kSuccess)
      errors->push_back(fmt::format("{}: {}", i, nvml_error_name(r)));
    else
      out.push_back(d);
  }
  return out;
}

}  // namespace gpucheck::cuda
