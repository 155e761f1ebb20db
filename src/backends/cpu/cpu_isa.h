// Which vector instruction set the CPU kernels run with: cpuid for the features, xgetbv for the
// operating system saving the wider register state.
#pragma once

#include <optional>
#include <string_view>

namespace gpucheck::cpu {

enum class IsaPath {
  kScalar,   // portable C++, the compiler's baseline (SSE2 on x86-64)
  kAvx2Fma,  // 256-bit AVX2 + FMA3
  kAvx512,   // 512-bit AVX-512F
};

// True when the CPU has the path's instructions and the OS enables their register state.
bool isa_path_supported(IsaPath path);

// The widest supported path; computed once.
IsaPath best_isa_path();

// "scalar", "avx2_fma", "avx512".
std::string_view to_string(IsaPath path);
std::optional<IsaPath> isa_path_from_string(std::string_view s);

}  // namespace gpucheck::cpu
