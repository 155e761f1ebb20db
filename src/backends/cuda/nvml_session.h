// One opened and initialised NVML (libnvidia-ml.so.1, or GPUCHECK_NVML_LIB): typed entry points
// by name, the names the library lacks, the error codes by name, and nvmlShutdown at the end.
#pragma once

#include "backends/cuda/nvml_api.h"
#include "core/environment.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace gpucheck::cuda {

// "NVML_ERROR_NOT_SUPPORTED" for its code; "NVML_ERROR_<n>" for codes not named here.
std::string nvml_error_name(nvml::Return r);

class NvmlSession {
 public:
  // The library's path or soname from the environment (GPUCHECK_NVML_LIB wins).
  static std::string library_name(const EnvMap& env);
  // Loads and initialises NVML. nullptr with *error set ("libnvidia-ml.so.1: cannot open ...",
  // "nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9)"); *loaded_path is set once dlopen
  // succeeded, even when the initialisation then failed.
  static std::unique_ptr<NvmlSession> open(const EnvMap& env, std::string* error,
                                           std::string* loaded_path = nullptr);
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  template <typename Fn>
  Fn get(const char* name) {
    void* p = symbol(name);
    if (p == nullptr) missing_.push_back(name);
    return reinterpret_cast<Fn>(p);
  }
  // The first of several names that exists (newer name first); all listed when none does.
  template <typename Fn>
  Fn get_any(std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (void* p = symbol(n)) return reinterpret_cast<Fn>(p);
    for (const char* n : names) missing_.push_back(n);
    return nullptr;
  }
  const std::vector<std::string>& missing() const { return missing_; }

  // The GPUs NVML lists, in its order (PCI order); a handle NVML refuses is left out and its
  // index and error are in *errors ("1: NVML_ERROR_GPU_IS_LOST").
  std::vector<nvml::Device> devices(std::vector<std::string>* errors);

 private:
  explicit NvmlSession(void* handle) : handle_(handle) {}
  void* symbol(const char* name) const;
  void* handle_;
  nvml::ShutdownFn shutdown_ = nullptr;
  std::vector<std::string> missing_;
};

}  // namespace gpucheck::cuda
