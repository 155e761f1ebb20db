// doctor's readings under load, shared by `doctor` and `qualify`: every available CUDA device
// runs copies and a GEMM while NVML is read, so the PCIe link and clocks checks judge a busy GPU.
#pragma once

#include <nlohmann/json.hpp>

namespace gpucheck::app {

// Adds backends[cuda].under_load (doctor::run_cuda_load) to an available CUDA section, with
// progress on stderr unless quiet.
void add_cuda_load_readings(nlohmann::json& backends, double seconds, bool quiet);

}  // namespace gpucheck::app
