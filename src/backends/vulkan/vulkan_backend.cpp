// VulkanBackend: probe() reads this process's environment and files (see vulkan_probe.h);
// open_device() runs the compute shaders where this build has them (glslc at build time).
#include "backends/vulkan/vulkan_backend.h"

#include "backends/vulkan/vulkan_probe.h"
#if GPUCHECK_HAVE_VULKAN_BENCH
#include "backends/vulkan/vulkan_device.h"
#endif

#include <stdexcept>

namespace gpucheck {

namespace {

class VulkanBackend final : public Backend {
 public:
  std::string_view name() const override { return "vulkan"; }
  nlohmann::json probe() override { return vulkan::probe_vulkan(vulkan::ProbeOptions{}); }
  std::unique_ptr<Device> open_device(const std::string& device_id,
                                      const DeviceOptions& options) override {
#if GPUCHECK_HAVE_VULKAN_BENCH
    return vulkan::make_vulkan_device(device_id, options);
#else
    (void)device_id, (void)options;
    throw std::runtime_error(
        "this gpucheck was built without glslc, so without the Vulkan compute shaders bench "
        "runs (Debian: apt install glslc, then rebuild)");
#endif
  }
};

}  // namespace

std::unique_ptr<Backend> make_vulkan_backend() {
  return std::make_unique<VulkanBackend>();
}

}  // namespace gpucheck
