// doctor's readings under load, shared by `doctor` and `qualify`: every available CUDA device
// runs copies and a GEMM while NVML is read, so the PCIe link and clocks checks judge a busy GPU.
#pragma once

#include <nlohmann/json.hpp>

namespace gpucheck::app {

// Adds backends[cuda].under_load (doctor::run_cuda_load) to an available CUDA section, the peer
// copies between its GPUs (p2p_under_load) with two or more, and, where NVML lists NVLinks, their
// error counters read again after the load (counters_after_load).
void add_cuda_load_readings(nlohmann::json& backends, double seconds);

// When OPENBLAS_CORETYPE in the environment holds OpenBLAS below the CPU's ISA (kept: it may work
// around a bug), measures what that costs: GEMM f32 1024 in two CPU bench children, one with the
// environment as it is, one with the core the ISA allows. Adds properties.blas.kernel_cost
// ({kernel, kept_tflops, recommended, recommended_tflops, slowdown}) to the cpu section.
void add_cpu_blas_cost(nlohmann::json& backends);

}  // namespace gpucheck::app
