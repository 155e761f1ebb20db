// FLOP per clock of the hardware that runs a GEMM: per SM of an NVIDIA GPU by compute capability,
// per core of a CPU by its vector units. Keyed by dtype name ("f32", "bf16", "fp8", ...) so a new
// dtype needs a row here, not a new signature. Shared by the CUDA device (peak_fraction) and
// qualify/limits (each record's limit).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

// Dense FLOP per clock per SM of the matrix path a GEMM of `dtype` takes on compute capability
// major.minor (tensor cores for tf32/f16/bf16/fp8 and, from Ampere, f64; FMA units for f32);
// nullopt for architectures or dtypes without a checked figure.
std::optional<double> dense_flop_per_clock_per_sm(int major, int minor, std::string_view dtype);

// The figure and its basis in words ("AVX-512: 2 FMA units × 16 f32 lanes × 2 FLOP").
struct CpuRate {
  double flop_per_cycle_per_core = 0;
  std::string basis;
};
// Peak FLOP per cycle per core of the CPU's widest FMA path for `dtype`, from the ISA flags of
// the CPU facts (host/cpu_info: avx512f, avx2, fma, neon, ...) and the architecture; f16, bf16,
// tf32 and fp8 count as f32 (the CPU backend computes them in f32). nullopt with `why` set when
// the ISA gives no figure.
std::optional<CpuRate> cpu_flop_per_cycle_per_core(const std::map<std::string, bool>& isa,
                                                   std::string_view arch, std::string_view dtype,
                                                   std::string* why);

}  // namespace gpucheck
