// Reading the environment once, and the list of variables worth recording.
#include "core/environment.h"

#include <array>
#include <string_view>

extern char** environ;

namespace gpucheck {

namespace {

constexpr std::array<std::string_view, 14> kExact{"LD_LIBRARY_PATH",
                                                  "LIBRARY_PATH",
                                                  "LD_PRELOAD",
                                                  "PATH",
                                                  "OMP_NUM_THREADS",
                                                  "MKL_NUM_THREADS",
                                                  "OPENCL_VENDOR_PATH",
                                                  "XLA_FLAGS",
                                                  "CONDA_PREFIX",
                                                  "VIRTUAL_ENV",
                                                  "GPU_DEVICE_ORDINAL",
                                                  "HSA_OVERRIDE_GFX_VERSION",
                                                  "PYTORCH_CUDA_ALLOC_CONF",
                                                  "TF_FORCE_GPU_ALLOW_GROWTH"};

constexpr std::array<std::string_view, 13> kPrefixes{
    "CUDA_",     "NVIDIA_", "CUBLAS", "CUDNN_", "NCCL_",     "OCL_ICD_", "POCL_",
    "OPENBLAS_", "GOTO_",   "ROCR_",  "HIP_",   "GPUCHECK_", "NV_"};

}  // namespace

EnvMap current_environment() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

bool is_gpu_relevant_variable(const std::string& name) {
  for (auto e : kExact)
    if (name == e) return true;
  for (auto p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

std::optional<std::filesystem::path> user_cache_dir(const EnvMap& env) {
  auto xdg = env.find("XDG_CACHE_HOME");
  if (xdg != env.end() && !xdg->second.empty() && xdg->second.front() == '/')
    return std::filesystem::path(xdg->second) / "gpucheck";
  auto home = env.find("HOME");
  if (home != env.end() && !home->second.empty())
    return std::filesystem::path(home->second) / ".cache" / "gpucheck";
  return std::nullopt;
}

}  // namespace gpucheck
