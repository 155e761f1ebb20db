// Which OpenBLAS kernel set a CPU should run, and whether the one chosen is below it. OpenBLAS's
// DYNAMIC_ARCH builds pick a core at load time from cpuid's family and model; a hypervisor that
// hides the model makes 0.3.21 fall back to Prescott (SSE3) on an AVX-512 Xeon, 5-6x slower.
// Pure functions of the CPU's ISA flags, the environment and what the library said.
#pragma once

#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::cpu {

// The ISA features OpenBLAS's kernel sets need, as the probe's cpu facts name them.
struct BlasIsa {
  bool avx = false, avx2 = false, fma = false;
  bool avx512f = false, avx512cd = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool amd = false;
};

// From the probe's "cpu" object (isa flags from cpuinfo, vendor).
BlasIsa blas_isa_from_cpu_json(const nlohmann::json& cpu);

// 0: SSE only, 1: AVX, 2: AVX2 + FMA, 3: AVX-512 (F, CD, BW, DQ, VL: Skylake-X's set).
int isa_level(const BlasIsa& isa);
std::string_view isa_level_name(int level);  // "SSE", "AVX", "AVX2", "AVX-512"

// The ISA level an OpenBLAS core's kernels use (case-insensitive); nullopt for a core name not
// known here (an aarch64 or POWER core, a newer name), which is never judged.
std::optional<int> openblas_core_level(std::string_view core);

// The core gpucheck selects for the ISA: SkylakeX (AVX-512), Haswell (AVX2; Zen on AMD),
// Sandybridge (AVX); empty below AVX.
std::string openblas_core_for(const BlasIsa& isa);

// Environment variables that fix OpenBLAS's kernel choice; a user's or admin's choice (some
// builds compute wrong results or crash on some processors, and machines set these for that).
inline constexpr const char* kOpenblasCoretypeEnv = "OPENBLAS_CORETYPE";
inline constexpr const char* kOpenblasL2SizeEnv = "OPENBLAS_L2_SIZE";
// Set by gpucheck on a CPU bench child that must keep the library's own choice ("library").
inline constexpr const char* kBlasSelectEnv = "GPUCHECK_BLAS_SELECT";

struct KernelDecision {
  std::string select;          // OPENBLAS_CORETYPE to set before the library loads; empty: none
  std::string recommended;     // the core the ISA allows; empty when none is judged
  std::string library_kernel;  // the core the library chose by itself, where known
  std::string source;          // who chose the kernel that runs: library | gpucheck | environment
  std::string reason;
  bool below_isa = false;  // the kernel that runs is below what the ISA allows
  nlohmann::json environment = nlohmann::json::object();  // OPENBLAS_CORETYPE / _L2_SIZE as set
  // {"kernel_source", "kernel_reason", "kernel_recommended", "library_kernel",
  //  "kernel_below_isa", "kernel_environment"}: merged into the BLAS facts.
  nlohmann::json to_json() const;
};

// For an OpenBLAS whose own choice (library_kernel, read where no OPENBLAS_CORETYPE was set) is
// known. A core set in the environment is kept and reported; with GPUCHECK_BLAS_SELECT=library
// nothing is selected; a build without DYNAMIC_ARCH cannot be switched. before_load: the library
// is not loaded yet, so a selection can still take effect (the CPU bench child); otherwise (the
// probe) the decision says what the bench child would select.
KernelDecision decide_openblas_kernel(const BlasIsa& isa, const EnvMap& env,
                                      const std::string& library_kernel, bool dynamic_arch,
                                      bool before_load);

// After loading: `running` is the core the library reports. Fills in what happened when
// gpucheck's selection was not taken (a core missing from the build).
void note_running_kernel(KernelDecision& d, const std::string& running, const BlasIsa& isa);

}  // namespace gpucheck::cpu
