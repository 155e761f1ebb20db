// Loading the CPU's BLAS with the kernel decision made first, and the facts the probe and the
// bench records carry.
#include "backends/cpu/cpu_blas.h"

#include "core/json_keys.h"
#include "host/cpu_info.h"

#include <fmt/format.h>

#include <cstdlib>

namespace gpucheck::cpu {

namespace k = keys;

nlohmann::json CpuBlas::facts() const {
  nlohmann::json j = library ? library->to_json() : nlohmann::json{{k::kError, error}};
  if (library && library->family() == BlasFamily::kOpenblas) j.update(kernel.to_json());
  if (!tried.empty()) {
    nlohmann::json t = nlohmann::json::array();
    for (const auto& a : tried) t.push_back({{k::kName, a.name}, {k::kError, a.error}});
    j[k::kBlasTried] = t;
  }
  return j;
}

CpuBlas load_cpu_blas(const EnvMap& env, const BlasIsa& isa, const std::string& library_kernel,
                      bool dynamic_arch) {
  CpuBlas out;
  const bool known_before = !library_kernel.empty();
  if (known_before) {
    out.kernel = decide_openblas_kernel(isa, env, library_kernel, dynamic_arch, true);
    // Read by OpenBLAS's constructor when the library loads, a few lines below.
    if (!out.kernel.select.empty()) ::setenv(kOpenblasCoretypeEnv, out.kernel.select.c_str(), 1);
  }
  out.library = BlasLibrary::open(env, &out.error, &out.tried);
  if (!out.library || out.library->family() != BlasFamily::kOpenblas) return out;
  if (known_before)
    note_running_kernel(out.kernel, out.library->kernel(), isa);
  else
    out.kernel =
        decide_openblas_kernel(isa, env, out.library->kernel(), out.library->dynamic_arch(), false);
  return out;
}

BlasIsa running_cpu_isa() {
  return blas_isa_from_cpu_json(host::to_json(host::read_cpu_facts("/")));
}

std::string no_blas_reason(const std::string& error) {
  return fmt::format(
      "no BLAS library: {}; install OpenBLAS (Debian/Ubuntu: apt install libopenblas0-pthread; "
      "RHEL/Fedora: dnf install openblas-threads) or name one with --blas PATH",
      error);
}

}  // namespace gpucheck::cpu
