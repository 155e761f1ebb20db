// The CPU backend's BLAS as the probe and the CPU device see it: the library loaded (or why none
// could be), the OpenBLAS kernel decision, and the facts both report.
#pragma once

#include "backends/cpu/blas_kernel.h"
#include "backends/cpu/blas_library.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gpucheck::cpu {

struct CpuBlas {
  std::unique_ptr<BlasLibrary> library;  // nullptr: none usable
  std::string error;                     // why none (every attempt)
  std::vector<BlasAttempt> tried;        // the names that failed before the one loaded
  KernelDecision kernel;                 // OpenBLAS only; source "library" otherwise

  // library->to_json() with the kernel decision and the failed attempts, or {"error", "tried"}.
  nlohmann::json facts() const;
};

// Loads the process's BLAS. With the library's own kernel known (library_kernel, from a probe
// child, and dynamic_arch), a better OpenBLAS core is selected (OPENBLAS_CORETYPE) before the
// library loads; otherwise the decision only reports.
CpuBlas load_cpu_blas(const EnvMap& env, const BlasIsa& isa, const std::string& library_kernel,
                      bool dynamic_arch);

// The ISA of the running CPU, from its cpuinfo facts.
BlasIsa running_cpu_isa();

// The reason a CPU GEMM or conv record is unsupported without a BLAS, with how to install one.
std::string no_blas_reason(const std::string& error);

}  // namespace gpucheck::cpu
