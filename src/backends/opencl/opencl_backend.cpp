// OpenClBackend: probe() reads this process's environment and files (see opencl_probe.h).
#include "backends/opencl/opencl_backend.h"

#include "backends/opencl/opencl_device.h"
#include "backends/opencl/opencl_probe.h"

namespace gpucheck {

namespace {

class OpenClBackend final : public Backend {
 public:
  std::string_view name() const override { return "opencl"; }
  nlohmann::json probe() override { return opencl::probe_opencl(opencl::ProbeOptions{}); }
  std::unique_ptr<Device> open_device(const std::string& device_id,
                                      const DeviceOptions& options) override {
    return opencl::make_opencl_device(device_id, options);
  }
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend() {
  return std::make_unique<OpenClBackend>();
}

}  // namespace gpucheck
