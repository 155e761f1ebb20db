// The CPU backend's probe: one device, the kernels' ISA path, and the BLAS the search finds with
// the kernel it chooses.
#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/cpu_blas.h"
#include "backends/cpu/cpu_device.h"
#include "backends/cpu/cpu_isa.h"
#include "core/environment.h"
#include "core/json_keys.h"
#include "host/cpu_info.h"

#include <thread>

namespace gpucheck {

namespace {

namespace k = keys;

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }

  nlohmann::json probe() override {
    auto facts = host::read_cpu_facts("/");
    // The library the search finds and the kernel it chooses by itself (nothing is selected
    // here: the probe reports what programs on this machine get).
    const auto blas = cpu::load_cpu_blas(
        current_environment(), cpu::blas_isa_from_cpu_json(host::to_json(facts)), "", false);
    nlohmann::json props = {
        {"threads", facts.threads.value_or(static_cast<int>(std::thread::hardware_concurrency()))},
        {"exp_isa_path", cpu::to_string(cpu::best_isa_path())},
        {k::kBlas, blas.facts()}};
    nlohmann::json device = {{k::kDevice, "cpu"},
                             {k::kStableId, "cpu"},
                             {k::kDeviceName, facts.model.value_or("unknown CPU")},
                             {k::kProperties, props}};
    return {{k::kName, "cpu"}, {k::kStatus, "available"}, {k::kDevices, {device}}};
  }

  std::unique_ptr<Device> open_device(const std::string& device_id,
                                      const DeviceOptions& options) override {
    return device_id == "cpu" ? make_cpu_device(options) : nullptr;
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace gpucheck
