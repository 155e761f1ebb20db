// The backends of this build, listed once.
#include "backends/registry.h"

#include "backends/cpu/cpu_backend.h"
#include "backends/testing/test_backends.h"
#if GPUCHECK_HAVE_OPENCL
#include "backends/opencl/icd_isolation.h"
#include "backends/opencl/opencl_backend.h"
#endif
#if GPUCHECK_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif
#if GPUCHECK_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif

#include "core/json_keys.h"

#include <sstream>

namespace gpucheck {

namespace {

std::vector<std::string> test_backend_names(const EnvMap& env) {
  std::vector<std::string> out;
  auto it = env.find("GPUCHECK_TEST_BACKENDS");
  if (it == env.end()) return out;
  std::stringstream ss(it->second);
  for (std::string item; std::getline(ss, item, ',');)
    if (is_test_backend_kind(item)) out.push_back("test_" + item);
  return out;
}

}  // namespace

std::vector<std::string> active_backend_names(const EnvMap& env) {
  auto names = built_backend_names();
  for (auto& t : test_backend_names(env)) names.push_back(std::move(t));
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const EnvMap& env) {
  if (name == "cpu") return make_cpu_backend();
#if GPUCHECK_HAVE_CUDA
  if (name == "cuda") return make_cuda_backend();
#endif
#if GPUCHECK_HAVE_OPENCL
  if (name == "opencl") return make_opencl_backend();
#endif
#if GPUCHECK_HAVE_VULKAN
  if (name == "vulkan") return make_vulkan_backend();
#endif
  for (const auto& t : test_backend_names(env))
    if (t == name) return make_test_backend(name.substr(5));
  return nullptr;
}

void explain_failed_probe(const std::string& name, nlohmann::json& section, const EnvMap& env,
                          const ChildLimits& limits) {
#if GPUCHECK_HAVE_OPENCL
  if (name == "opencl") {
    auto isolation = opencl::diagnose_failed_probe(env, limits);
    if (auto culprits = opencl::describe_culprits(isolation); !culprits.empty())
      section[keys::kReason] = section[keys::kReason].get<std::string>() + "; " + culprits;
    section[keys::kIcdIsolation] = std::move(isolation);
  }
#else
  (void)name, (void)section, (void)env, (void)limits;
#endif
}

}  // namespace gpucheck
