// The CPU checks: the vector extensions framework builds assume, and which BLAS serves GEMM in
// gpucheck's own process (its CPU baseline) and for programs linked against libblas.so.3.
#include "doctor/check_util.h"
#include "doctor/checks.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <array>
#include <regex>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// OpenBLAS kernel sets older than AVX2: chosen when its CPU detection fails (an unknown CPU,
// a VM that hides cpuid leaves, or OPENBLAS_CORETYPE set so).
constexpr std::array<std::string_view, 12> kGenericOpenblasCores{
    "prescott", "core2",      "katmai", "coppermine", "northwood",   "banias",
    "penryn",   "dunnington", "atom",   "nehalem",    "sandybridge", "generic"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

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
      return warn("no Advanced SIMD (NEON/asimd): framework builds for aarch64 need it",
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
  return warn(fmt::format("CPU lacks {}: many framework builds need them (PyTorch, TensorFlow and "
                          "ONNX Runtime wheels stop with 'Illegal instruction')",
                          join(missing, ", ")),
              fix, evidence);
}

// ---- cpu_blas ----

CheckResult check_cpu_blas(const SystemView& view) {
  const Json& cpu_backend = view.require_backend("cpu");
  const Json& devices = array_at(cpu_backend, k::kDevices);
  if (devices.empty())
    throw NotObservable("the cpu backend reported no device (" + text(cpu_backend, k::kReason) +
                        ")");
  const Json props = devices[0].value(k::kProperties, Json::object());
  auto blas_it = props.find("blas");
  if (blas_it == props.end() || !blas_it->is_object())
    throw NotObservable("the cpu backend did not report its BLAS");
  const std::string description = text(*blas_it, "description");
  const std::string path = text(*blas_it, k::kPath);
  std::vector<std::string> evidence{"gpucheck's BLAS: " + path, "description: " + description};

  // What programs linked against libblas.so.3 get (Debian/Ubuntu alternatives).
  std::string alternative_target;
  for (const auto& link : view.glob("/etc/alternatives/libblas.so.3*")) {
    if (auto target = view.read_link(link)) {
      evidence.push_back(fmt::format("{} -> {}", link, *target));
      if (is_reference_blas(*target)) alternative_target = *target;
    }
  }
  if (auto core = view.env_value("OPENBLAS_CORETYPE"))
    evidence.push_back("OPENBLAS_CORETYPE=" + *core);

  if (is_reference_blas(path) ||
      (description.empty() && path.find("libblas.so") != std::string::npos))
    return warn(fmt::format("gpucheck's CPU GEMM runs on the reference (netlib) BLAS {}: 10-50x "
                            "slower than OpenBLAS, MKL or BLIS, so CPU baselines are too slow",
                            path),
                "sudo apt install libopenblas0-pthread && sudo update-alternatives --config "
                "libblas.so.3-x86_64-linux-gnu",
                evidence);

  const Json isa = view.facts.value(k::kCpu, Json::object()).value(k::kIsa, Json::object());
  std::smatch m;
  static const std::regex kCore(R"(\(core: ([^)]+)\))");
  std::string core;
  if (std::regex_search(description, m, kCore)) core = m[1].str();
  if (!core.empty() && isa.value(k::kIsaAvx2, false)) {
    const std::string c = lower(core);
    for (auto generic : kGenericOpenblasCores) {
      if (c != generic) continue;
      return warn(fmt::format("OpenBLAS runs its {} kernels on a CPU with AVX2: GEMM is several "
                              "times slower than it should be",
                              core),
                  "set OPENBLAS_CORETYPE=Haswell (or SkylakeX with AVX-512), or install a "
                  "DYNAMIC_ARCH build: sudo apt install libopenblas0-pthread",
                  evidence);
    }
  }
  if (!alternative_target.empty())
    return warn(fmt::format("programs linked against libblas.so.3 (Debian's numpy, R, Octave) get "
                            "the reference BLAS {}",
                            alternative_target),
                "sudo update-alternatives --config libblas.so.3-x86_64-linux-gnu (choose OpenBLAS "
                "or BLIS)",
                evidence);
  std::string name = description;
  if (auto cut = name.find(' '); cut != std::string::npos) {
    // "OpenBLAS 0.3.21 NO_LAPACKE ... (core: X)": keep the name, version and core.
    auto second = name.find(' ', cut + 1);
    name = name.substr(0, second) + (core.empty() ? "" : " (core: " + core + ")");
  }
  return pass(fmt::format("BLAS: {} from {}", name.empty() ? "unknown" : name, path), evidence);
}

}  // namespace gpucheck::doctor
