// The per-clock FLOP tables: NVIDIA's whitepaper figures per SM, the CPU's vector units per core.
#include "core/flop_rates.h"

#include <fmt/format.h>

namespace gpucheck {

std::optional<double> dense_flop_per_clock_per_sm(int major, int minor, std::string_view dtype) {
  // Per SM per clock, dense, from NVIDIA's A100 and H100 whitepapers (peak ÷ SMs ÷ boost clock).
  struct Row {
    int major, minor;
    double f32, tf32, f16, f64, fp8;  // 0: the architecture has no such path
  };
  static constexpr Row kRows[] = {
      // A100: 19.5 / 156 / 312 / 19.5 TFLOP/s, 108 SMs, 1410 MHz; no FP8.
      {8, 0, 128, 1024, 2048, 128, 0},
      // H100 SXM: 67 / 495 / 989 / 67 / 1979 TFLOP/s, 132 SMs.
      {9, 0, 256, 2048, 4096, 256, 8192},
  };
  for (const auto& r : kRows) {
    if (r.major != major || r.minor != minor) continue;
    double v = 0;
    if (dtype == "f32") v = r.f32;
    if (dtype == "tf32") v = r.tf32;
    if (dtype == "f16" || dtype == "bf16") v = r.f16;
    if (dtype == "f64") v = r.f64;
    if (dtype == "fp8") v = r.fp8;
    if (v > 0) return v;
  }
  return std::nullopt;
}

std::optional<CpuRate> cpu_flop_per_cycle_per_core(const std::map<std::string, bool>& isa,
                                                   std::string_view arch, std::string_view dtype,
                                                   std::string* why) {
  auto has = [&](const char* flag) {
    auto it = isa.find(flag);
    return it != isa.end() && it->second;
  };
  if (dtype != "f64" && dtype != "f32" && dtype != "f16" && dtype != "bf16" && dtype != "tf32" &&
      dtype != "fp8") {
    if (why) *why = fmt::format("no CPU FLOP rate for dtype {}", dtype);
    return std::nullopt;
  }
  const bool f64 = dtype == "f64";
  const char* lanes_of = f64 ? "f64" : "f32";
  // Two FMA pipes per core of the vector width is what Intel's Skylake-SP Gold 6xxx and later
  // server cores, AMD's Zen 2 and later (256-bit; Zen 5 512-bit) and Arm's Neoverse N1/V1 have;
  // a core with fewer or narrower ones reaches less, which the flags cannot tell.
  auto fma = [&](int bits, const char* name) {
    const int lanes = bits / (f64 ? 64 : 32);
    return CpuRate{2.0 * lanes * 2,
                   fmt::format("{}: 2 FMA units × {} {} lanes × 2 FLOP", name, lanes, lanes_of)};
  };
  if (arch == "x86_64") {
    if (has("avx512f")) {
      CpuRate r = fma(512, "AVX-512");
      r.basis +=
          "; half on cores that run AVX-512 on one 512-bit or two 256-bit FMA units "
          "(AMD Zen 4, Xeon Bronze and Silver)";
      return r;
    }
    if (has("avx2") && has("fma")) return fma(256, "AVX2+FMA");
    if (has("avx")) {
      const int lanes = f64 ? 4 : 8;
      return CpuRate{2.0 * lanes,
                     fmt::format("AVX: 1 add + 1 multiply unit × {} {} lanes", lanes, lanes_of)};
    }
    if (has("sse4_2")) {
      const int lanes = f64 ? 2 : 4;
      return CpuRate{2.0 * lanes,
                     fmt::format("SSE: 1 add + 1 multiply unit × {} {} lanes", lanes, lanes_of)};
    }
    if (why) *why = "the CPU's flags name no SSE4.2, AVX or AVX-512";
    return std::nullopt;
  }
  if (arch == "aarch64") {
    // SVE's vector length is not in cpuinfo; NEON's 128 bits are the floor every SVE core has.
    if (has("neon")) return fma(128, "NEON");
    if (why) *why = "the CPU's features name no Advanced SIMD";
    return std::nullopt;
  }
  if (why)
    *why = fmt::format("no FLOP per cycle known for the {} architecture",
                       arch.empty() ? std::string("unknown") : std::string(arch));
  return std::nullopt;
}

}  // namespace gpucheck
