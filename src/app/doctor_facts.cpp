// Moved out of doctor_command.cpp so qualify's doctor step reads the GPUs under load the same way.
#include "app/doctor_facts.h"

#include "app/progress.h"
#include "core/json_keys.h"
#include "doctor/under_load.h"

#include <fmt/format.h>

#include <spdlog/spdlog.h>

namespace gpucheck::app {

void add_cuda_load_readings(nlohmann::json& backends, double seconds, bool quiet) {
  // PCIe link and clocks-event reasons are read while every CUDA device works (idle GPUs drop
  // their link and report idle reasons); the readings join the CUDA section they belong to.
  for (auto& b : backends)
    if (b.value(std::string(keys::kName), "") == "cuda" &&
        b.value(std::string(keys::kStatus), "") == "available") {
      spdlog::info("doctor: loading each CUDA device for {} s", seconds);
      Progress progress = Progress::for_stderr("doctor", quiet);
      std::size_t done = 0;
      b[keys::kUnderLoad] = doctor::run_cuda_load(
          b, seconds,
          [&](const std::string& device, const std::string& what, std::size_t started,
              std::size_t total) {
            // Children run at once: a cell started means the one before it finished, roughly.
            done = started > 1 ? started - 1 : 0;
            progress.update({fmt::format("load {}/{}", started, total),
                             fmt::format("{}: {}", device, what), done, total});
          });
    }
}

}  // namespace gpucheck::app
