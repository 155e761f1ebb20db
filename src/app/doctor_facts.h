// doctor's readings under load, shared by `doctor` and `qualify`: every available CUDA device
// runs copies and a GEMM while NVML is read, so the PCIe link and clocks checks judge a busy GPU.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>

namespace gpucheck::app {

// Adds backends[cuda].under_load (doctor::run_cuda_load) to an available CUDA section, the peer
// copies between its GPUs (p2p_under_load) with two or more unless !peer_copies, and, where NVML
// lists NVLinks, their error counters read again after the load (counters_after_load); progress
// on stderr unless quiet; each step's wall time at -v.
void add_cuda_load_readings(nlohmann::json& backends, double seconds, bool quiet,
                            bool peer_copies = true);

// Reads the InfiniBand/RoCE port counters under root again and adds them to the facts'
// infiniband section as counters_after_load {interval_s, ports}, interval_s counted from
// `first` (taken before the probe read them): infiniband_errors judges what grew in between.
// Nothing when the section lists no adapter.
void add_infiniband_counters_after(nlohmann::json& facts, const std::filesystem::path& root,
                                   std::chrono::steady_clock::time_point first);

// When OPENBLAS_CORETYPE in the environment holds OpenBLAS below the CPU's ISA (kept: it may work
// around a bug), measures what that costs: GEMM f32 1024 in two CPU bench children, one with the
// environment as it is, one with the core the ISA allows. Adds properties.blas.kernel_cost
// ({kernel, kept_tflops, recommended, recommended_tflops, slowdown}) to the cpu section.
void add_cpu_blas_cost(nlohmann::json& backends);

}  // namespace gpucheck::app
