// OpenBLAS core names by ISA level, and the decision whether gpucheck selects one.
#include "backends/cpu/blas_kernel.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace gpucheck::cpu {

namespace k = keys;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// OpenBLAS's x86-64 core names (driver/others/dynamic.c) and the widest ISA their kernels use.
constexpr std::array<std::pair<std::string_view, int>, 27> kCoreLevels{{
    {"katmai", 0},       {"coppermine", 0},  {"northwood", 0},      {"prescott", 0},
    {"banias", 0},       {"atom", 0},        {"core2", 0},          {"penryn", 0},
    {"dunnington", 0},   {"nehalem", 0},     {"athlon", 0},         {"opteron", 0},
    {"opteron_sse3", 0}, {"barcelona", 0},   {"nano", 0},           {"bobcat", 0},
    {"generic", 0},      {"sandybridge", 1}, {"bulldozer", 1},      {"piledriver", 1},
    {"steamroller", 1},  {"excavator", 1},   {"haswell", 2},        {"zen", 2},
    {"skylakex", 3},     {"cooperlake", 3},  {"sapphirerapids", 3},
}};

bool env_set(const EnvMap& env, const char* name, std::string* value) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return false;
  *value = it->second;
  return true;
}

}  // namespace

BlasIsa blas_isa_from_cpu_json(const nlohmann::json& cpu) {
  BlasIsa isa;
  if (!cpu.is_object()) return isa;
  const auto flags = cpu.value(std::string(k::kIsa), nlohmann::json::object());
  auto has = [&](std::string_view key) {
    auto it = flags.find(std::string(key));
    return it != flags.end() && it->is_boolean() && it->get<bool>();
  };
  isa.avx = has(k::kIsaAvx);
  isa.avx2 = has(k::kIsaAvx2);
  isa.fma = has(k::kIsaFma);
  isa.avx512f = has(k::kIsaAvx512f);
  isa.avx512cd = has(k::kIsaAvx512cd);
  isa.avx512bw = has(k::kIsaAvx512bw);
  isa.avx512dq = has(k::kIsaAvx512dq);
  isa.avx512vl = has(k::kIsaAvx512vl);
  isa.amd = cpu.value(std::string(k::kVendor), std::string()) == "AuthenticAMD";
  return isa;
}

int isa_level(const BlasIsa& isa) {
  if (!isa.avx) return 0;
  if (!(isa.avx2 && isa.fma)) return 1;
  if (isa.avx512f && isa.avx512cd && isa.avx512bw && isa.avx512dq && isa.avx512vl) return 3;
  return 2;
}

std::string_view isa_level_name(int level) {
  switch (level) {
    case 1:
      return "AVX";
    case 2:
      return "AVX2";
    case 3:
      return "AVX-512";
    default:
      return "SSE";
  }
}

std::optional<int> openblas_core_level(std::string_view core) {
  const std::string c = lower(core);
  for (const auto& [name, level] : kCoreLevels)
    if (name == c) return level;
  return std::nullopt;
}

std::string openblas_core_for(const BlasIsa& isa) {
  switch (isa_level(isa)) {
    case 3:
      return "SkylakeX";
    case 2:
      return isa.amd ? "Zen" : "Haswell";
    case 1:
      return "Sandybridge";
    default:
      return {};
  }
}

nlohmann::json KernelDecision::to_json() const {
  nlohmann::json j = {{k::kBlasKernelSource, source}, {k::kBlasKernelBelowIsa, below_isa}};
  if (!reason.empty()) j[k::kBlasKernelReason] = reason;
  if (!recommended.empty()) j[k::kBlasKernelRecommended] = recommended;
  if (!library_kernel.empty()) j[k::kBlasLibraryKernel] = library_kernel;
  if (!environment.empty()) j[k::kBlasKernelEnvironment] = environment;
  return j;
}

KernelDecision decide_openblas_kernel(const BlasIsa& isa, const EnvMap& env,
                                      const std::string& library_kernel, bool dynamic_arch,
                                      bool before_load) {
  KernelDecision d;
  d.source = "library";
  d.library_kernel = library_kernel;
  const int level = isa_level(isa);
  d.recommended = openblas_core_for(isa);
  std::string value;
  if (env_set(env, kOpenblasL2SizeEnv, &value)) d.environment[kOpenblasL2SizeEnv] = value;
  if (env_set(env, kOpenblasCoretypeEnv, &value)) {
    d.environment[kOpenblasCoretypeEnv] = value;
    d.source = "environment";
    d.library_kernel.clear();  // the library did not choose: it was told
    const auto set_level = openblas_core_level(value);
    d.below_isa = set_level && *set_level < level;
    d.reason = fmt::format("OPENBLAS_CORETYPE={} is set in the environment: kept, never overridden",
                           value);
    if (d.below_isa)
      d.reason += fmt::format(" ({} kernels on a CPU with {}, where {} runs faster)",
                              isa_level_name(*set_level), isa_level_name(level), d.recommended);
    return d;
  }
  const auto chosen = openblas_core_level(library_kernel);
  if (!chosen || d.recommended.empty()) {
    d.reason = "the library's own choice";
    return d;
  }
  if (*chosen >= level) {
    d.reason =
        fmt::format("the library's own choice, which uses the CPU's {}", isa_level_name(level));
    return d;
  }
  d.below_isa = true;
  const std::string what =
      fmt::format("OpenBLAS chose {} ({} kernels) on a CPU with {}", library_kernel,
                  isa_level_name(*chosen), isa_level_name(level));
  auto it = env.find(kBlasSelectEnv);
  if (it != env.end() && it->second == "library") {
    d.reason =
        what + "; kept: this run uses the library's own choice (GPUCHECK_BLAS_SELECT=library)";
    return d;
  }
  if (!dynamic_arch) {
    d.reason = what + "; this build has no DYNAMIC_ARCH, so its kernels cannot be switched";
    return d;
  }
  if (!before_load) {
    d.reason = what + fmt::format("; gpucheck's CPU benchmarks select {} (OPENBLAS_CORETYPE={})",
                                  d.recommended, d.recommended);
    return d;
  }
  d.select = d.recommended;
  d.source = "gpucheck";
  d.below_isa = false;
  d.reason = what + fmt::format(": gpucheck set OPENBLAS_CORETYPE={} before loading it", d.select);
  return d;
}

void note_running_kernel(KernelDecision& d, const std::string& running, const BlasIsa& isa) {
  if (d.source != "gpucheck" || lower(running) == lower(d.select)) return;
  const auto level = openblas_core_level(running);
  d.below_isa = level && *level < isa_level(isa);
  d.reason += fmt::format(", but the library runs {} (its build lacks {})", running, d.select);
}

}  // namespace gpucheck::cpu
