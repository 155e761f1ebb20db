// The CPU backend's probe: one device, the kernels' ISA path and the BLAS this process loaded.
#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/cpu_device.h"
#include "backends/cpu/cpu_gemm.h"
#include "backends/cpu/cpu_isa.h"
#include "core/json_keys.h"
#include "core/sanitize.h"
#include "probe/cpu_info.h"

#include <cblas.h>
#include <dlfcn.h>

#include <thread>

namespace gpucheck {

namespace {

namespace k = keys;

// Which BLAS library really serves cblas_sgemm in this process, and what it says of itself.
nlohmann::json blas_facts() {
  nlohmann::json blas = {{"description", sanitize(cpu::blas_description())}};
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) != 0 && info.dli_fname)
    blas[k::kPath] = sanitize(info.dli_fname);
  return blas;
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }

  nlohmann::json probe() override {
    auto facts = probe::read_cpu_facts("/");
    nlohmann::json props = {
        {"threads", facts.threads.value_or(static_cast<int>(std::thread::hardware_concurrency()))},
        {"exp_isa_path", cpu::to_string(cpu::best_isa_path())},
        {"blas", blas_facts()}};
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
