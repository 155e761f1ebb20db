// Moved out of doctor_command.cpp so qualify's doctor step reads the GPUs under load the same way.
#include "app/doctor_facts.h"

#include "core/json_keys.h"
#include "doctor/under_load.h"

#include <spdlog/spdlog.h>

namespace gpucheck::app {

void add_cuda_load_readings(nlohmann::json& backends, double seconds) {
  // PCIe link and clocks-event reasons are read while every CUDA device works (idle GPUs drop
  // their link and report idle reasons); the readings join the CUDA section they belong to.
  for (auto& b : backends)
    if (b.value(std::string(keys::kName), "") == "cuda" &&
        b.value(std::string(keys::kStatus), "") == "available") {
      spdlog::info("doctor: loading each CUDA device for {} s", seconds);
      b[keys::kUnderLoad] = doctor::run_cuda_load(b, seconds);
    }
}

}  // namespace gpucheck::app
