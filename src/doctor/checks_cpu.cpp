// The CPU checks: the vector extensions framework builds assume, and which BLAS serves GEMM in
// gpucheck's own process (its CPU baseline), the kernel it runs, and what programs linked against
// libblas.so.3 get.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"

#include "backends/cpu/blas_kernel.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <regex>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

bool is_reference_blas(const std::string& path) {
  // Debian's netlib BLAS lives in .../blas/libblas.so.3; OpenBLAS in .../openblas*/libblas.so.3.
  return path.find("/blas/libblas.so") != std::string::npos;
}

}  // namespace

// ---- cpu_isa ----

CheckResult check_cpu_isa(const SystemView& view) {
  const Json& cpu = view.require_facts(k::kCpu);
  const Json isa = cpu.value(k::kIsa, Json::object());
  if (isa.empty()) throw NotObservable("the probe's cpu facts have no isa (no cpuinfo flags)");
  const std::string arch = text(cpu, k::kArch);
  if (arch == "aarch64" || isa.contains(k::kIsaNeon)) {
    std::vector<std::string> have;
    for (auto key : {k::kIsaNeon, k::kIsaSve, k::kIsaSve2, k::kIsaBf16, k::kIsaI8mm})
      if (isa.value(key, false)) have.emplace_back(key);
    if (!isa.value(k::kIsaNeon, false))
      return warn("GC-CPU-ISA-MISSING"_gc,
                  "no Advanced SIMD (NEON/asimd): framework builds for aarch64 need it",
                  "use a CPU (or VM CPU model) with Advanced SIMD", {"isa: " + isa.dump()});
    return pass(fmt::format("{} with {}", arch.empty() ? "aarch64" : arch, join(have, ", ")));
  }
  std::vector<std::string> missing, have;
  for (auto key : {k::kIsaAvx, k::kIsaAvx2, k::kIsaFma}) {
    auto it = isa.find(key);
    if (it == isa.end() || !it->is_boolean())
      throw NotObservable(
          fmt::format("the probe's cpu facts do not say whether {} is present", key));
    (it->get<bool>() ? have : missing).emplace_back(key);
  }
  if (isa.value(k::kIsaAvx512f, false)) have.emplace_back(k::kIsaAvx512f);
  std::vector<std::string> evidence{"model: " + text(cpu, k::kModel), "isa: " + isa.dump()};
  if (missing.empty()) return pass("CPU has " + join(have, ", "), evidence);
  const bool vm = view.facts.value(k::kHost, Json::object()).value(k::kHypervisor, false);
  if (vm) evidence.push_back("host.hypervisor: true (a virtual machine)");
  std::string fix =
      vm ? "the VM hides them: give it the host's CPU model (QEMU/libvirt: -cpu host or <cpu "
           "mode='host-passthrough'/>; cloud: an instance type with AVX2)"
         : "use builds made without them (conda-forge or source builds), or a CPU with AVX2 and "
           "FMA (Intel Haswell or AMD Zen and later)";
  return warn("GC-CPU-ISA-MISSING"_gc,
              fmt::format("CPU lacks {}: many framework builds need them (PyTorch, TensorFlow and "
                          "ONNX Runtime wheels stop with 'Illegal instruction')",
                          join(missing, ", ")),
              fix, evidence);
}

// ---- cpu_blas ----

namespace {

constexpr const char* kInstallBlas =
    "install OpenBLAS: sudo apt install libopenblas0-pthread (Debian, Ubuntu) or sudo dnf install "
    "openblas-threads (RHEL, Fedora); or name a BLAS with gpucheck --blas PATH";

// The kernel facts of a document older than structured BLAS facts: "... (core: Prescott)" in the
// description, judged against the CPU's ISA here.
void legacy_kernel_facts(Json& blas, const Json& cpu) {
  if (blas.contains(k::kBlasKernel)) return;
  std::smatch m;
  static const std::regex kCore(R"(\(core: ([^)]+)\))");
  const std::string description = text(blas, k::kBlasDescription);
  if (!std::regex_search(description, m, kCore)) return;
  blas[k::kLibrary] = "openblas";
  blas[k::kBlasKernel] = m[1].str();
  if (description.find("DYNAMIC_ARCH") != std::string::npos) blas[k::kBlasConfig] = description;
  const auto isa = cpu::blas_isa_from_cpu_json(cpu);
  const auto level = cpu::openblas_core_level(m[1].str());
  blas[k::kBlasKernelBelowIsa] = level && *level < cpu::isa_level(isa);
  blas[k::kBlasKernelRecommended] = cpu::openblas_core_for(isa);
  blas[k::kBlasKernelSource] = "legacy";  // the caller says whether the environment chose
}

}  // namespace

CheckResult check_cpu_blas(const SystemView& view) {
  const Json& cpu_backend = view.require_backend("cpu");
  const Json& devices = array_at(cpu_backend, k::kDevices);
  if (devices.empty())
    throw NotObservable("the cpu backend reported no device (" + text(cpu_backend, k::kReason) +
                        ")");
  const Json props = devices[0].value(k::kProperties, Json::object());
  auto blas_it = props.find(k::kBlas);
  if (blas_it == props.end() || !blas_it->is_object())
    throw NotObservable("the cpu backend did not report its BLAS");
  Json blas = *blas_it;
  const bool legacy = !blas.contains(k::kLibrary) && !blas.contains(k::kError);
  const Json cpu_facts = view.facts.value(k::kCpu, Json::object());
  const auto coretype = view.env_value(cpu::kOpenblasCoretypeEnv);
  legacy_kernel_facts(blas, cpu_facts);
  if (blas.value(k::kBlasKernelSource, "") == "legacy")
    blas[k::kBlasKernelSource] = coretype ? "environment" : "library";

  const std::string path = text(blas, k::kPath);
  std::vector<std::string> evidence;
  if (blas.contains(k::kError)) {
    evidence.push_back("search: " + text(blas, k::kError));
    return warn("GC-CPU-BLAS-MISSING"_gc,
                "no BLAS library loads: gpucheck's CPU GEMM and conv records are unsupported, so "
                "there is no CPU baseline for them",
                kInstallBlas, evidence);
  }
  const std::string description = text(blas, k::kBlasDescription);
  evidence.push_back("gpucheck's BLAS: " + path);
  evidence.push_back("description: " + description);
  if (blas.contains(k::kBlasKernelReason))
    evidence.push_back("kernel: " + text(blas, k::kBlasKernelReason));

  // What programs linked against libblas.so.3 get (Debian/Ubuntu alternatives).
  std::string alternative_target;
  for (const auto& link : view.glob("/etc/alternatives/libblas.so.3*")) {
    if (auto target = view.read_link(link)) {
      evidence.push_back(fmt::format("{} -> {}", link, *target));
      if (is_reference_blas(*target)) alternative_target = *target;
    }
  }
  if (coretype) evidence.push_back(std::string(cpu::kOpenblasCoretypeEnv) + "=" + *coretype);
  if (auto l2 = view.env_value(cpu::kOpenblasL2SizeEnv))
    evidence.push_back(std::string(cpu::kOpenblasL2SizeEnv) + "=" + *l2);

  // Neither OpenBLAS, BLIS nor MKL, through a libblas.so: the reference BLAS, or like it.
  const bool unknown_libblas = (blas.value(k::kLibrary, "") == "other" || description.empty()) &&
                               path.find("libblas.so") != std::string::npos;
  if (is_reference_blas(path) || unknown_libblas)
    return warn("GC-CPU-BLAS-REFERENCE"_gc,
                fmt::format("gpucheck's CPU GEMM runs on the reference (netlib) BLAS {}: 10-50x "
                            "slower than OpenBLAS, MKL or BLIS, so CPU baselines are too slow",
                            path),
                "sudo apt install libopenblas0-pthread && sudo update-alternatives --config "
                "libblas.so.3-x86_64-linux-gnu",
                evidence);

  const std::string kernel = text(blas, k::kBlasKernel);
  const std::string recommended = text(blas, k::kBlasKernelRecommended);
  if (blas.value(k::kBlasKernelBelowIsa, false) && !recommended.empty()) {
    const std::string source = text(blas, k::kBlasKernelSource);
    if (source == "environment") {
      std::string cost = "GEMM is several times slower";
      const Json measured = blas.value(k::kBlasKernelCost, Json::object());
      if (measured.contains(k::kBlasSlowdown))
        cost = fmt::format(
            "measured GEMM f32 1024: {:.3g} TFLOP/s, {:.3g} on {}'s kernels ({:.1f}x)",
            measured.value(k::kBlasKeptTflops, 0.0), measured.value(k::kBlasRecommendedTflops, 0.0),
            recommended, measured.value(k::kBlasSlowdown, 0.0));
      return warn("GC-CPU-BLAS-CORETYPE"_gc,
                  fmt::format("OPENBLAS_CORETYPE={} in the environment keeps OpenBLAS on {}'s "
                              "kernels where this CPU runs {}'s: {} (gpucheck keeps it too, and "
                              "says so in its records)",
                              coretype.value_or(kernel), kernel, recommended, cost),
                  fmt::format("unless it was set to avoid a bug of this OpenBLAS build on this "
                              "CPU, unset OPENBLAS_CORETYPE (or set OPENBLAS_CORETYPE={})",
                              recommended),
                  evidence);
    }
    if (text(blas, k::kBlasConfig).find("DYNAMIC_ARCH") == std::string::npos)
      return warn("GC-CPU-BLAS-OLD-BUILD"_gc,
                  fmt::format("OpenBLAS is built for {} only, below what this CPU runs ({}): "
                              "GEMM is several times slower",
                              kernel, recommended),
                  "install a DYNAMIC_ARCH build: sudo apt install libopenblas0-pthread (Debian, "
                  "Ubuntu) or sudo dnf install openblas-threads (RHEL, Fedora)",
                  evidence);
    return warn("GC-CPU-BLAS-OLD-BUILD"_gc,
                fmt::format("OpenBLAS chooses its {} kernels on this CPU, which runs {}'s (its "
                            "CPU detection fails, e.g. in a VM that hides the CPU model): GEMM in "
                            "programs using it (numpy, R, ...) is several times slower; "
                            "gpucheck's own CPU benchmarks select {}",
                            kernel, recommended, recommended),
                fmt::format("export OPENBLAS_CORETYPE={} for your programs (a profile.d file or "
                            "the job's environment)",
                            recommended),
                evidence);
  }
  if (!alternative_target.empty())
    return warn("GC-CPU-BLAS-ALTERNATIVE"_gc,
                fmt::format("programs linked against libblas.so.3 (Debian's numpy, R, Octave) get "
                            "the reference BLAS {}",
                            alternative_target),
                "sudo update-alternatives --config libblas.so.3-x86_64-linux-gnu (choose OpenBLAS "
                "or BLIS)",
                evidence);
  std::string name = description;
  if (legacy) {
    // A document older than structured facts: "OpenBLAS 0.3.21 NO_LAPACKE ... (core: X)".
    if (auto cut = name.find(' '); cut != std::string::npos)
      name = name.substr(0, name.find(' ', cut + 1)) +
             (kernel.empty() ? "" : " (core: " + kernel + ")");
  }
  return pass(fmt::format("BLAS: {} from {}", name.empty() ? "unknown" : name, path), evidence);
}

}  // namespace gpucheck::doctor
