// VulkanBackend: probe() reads this process's environment and files (see vulkan_probe.h). It
// opens no device yet: bench through compute shaders is not built, and saying so beats a stub.
#include "backends/vulkan/vulkan_backend.h"

#include "backends/vulkan/vulkan_probe.h"

namespace gpucheck {

namespace {

class VulkanBackend final : public Backend {
 public:
  std::string_view name() const override { return "vulkan"; }
  nlohmann::json probe() override { return vulkan::probe_vulkan(vulkan::ProbeOptions{}); }
};

}  // namespace

std::unique_ptr<Backend> make_vulkan_backend() {
  return std::make_unique<VulkanBackend>();
}

}  // namespace gpucheck
