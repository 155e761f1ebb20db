// cpuid and XCR0 checks behind the ISA dispatch of the CPU kernels.
#include "backends/cpu/cpu_isa.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define GC_CPU_X86 1
#endif

namespace gpucheck::cpu {

namespace {

#if defined(GC_CPU_X86)
// XCR0 state-component bits: SSE (1), AVX upper halves (2), AVX-512 opmask (5),
// ZMM0-15 upper halves (6), ZMM16-31 (7).
constexpr std::uint64_t kXcr0Avx = 0x6;
constexpr std::uint64_t kXcr0Avx512 = 0xE6;

// XCR0, or 0 when the OS has not enabled XSAVE (xgetbv would fault).
std::uint64_t read_xcr0() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  if (!(ecx & bit_OSXSAVE)) return 0;
  std::uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

struct Support {
  bool avx2_fma = false;
  bool avx512 = false;
};

Support detect() {
  __builtin_cpu_init();
  const std::uint64_t xcr0 = read_xcr0();
  Support s;
  s.avx2_fma = (xcr0 & kXcr0Avx) == kXcr0Avx && __builtin_cpu_supports("avx") &&
               __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  s.avx512 = s.avx2_fma && (xcr0 & kXcr0Avx512) == kXcr0Avx512 && __builtin_cpu_supports("avx512f");
  return s;
}
#endif

}  // namespace

bool isa_path_supported(IsaPath path) {
#if defined(GC_CPU_X86)
  static const Support support = detect();
  switch (path) {
    case IsaPath::kScalar:
      return true;
    case IsaPath::kAvx2Fma:
      return support.avx2_fma;
    case IsaPath::kAvx512:
      return support.avx512;
  }
  return false;
#else
  return path == IsaPath::kScalar;
#endif
}

IsaPath best_isa_path() {
  static const IsaPath best = isa_path_supported(IsaPath::kAvx512)    ? IsaPath::kAvx512
                              : isa_path_supported(IsaPath::kAvx2Fma) ? IsaPath::kAvx2Fma
                                                                      : IsaPath::kScalar;
  return best;
}

std::string_view to_string(IsaPath path) {
  switch (path) {
    case IsaPath::kScalar:
      return "scalar";
    case IsaPath::kAvx2Fma:
      return "avx2_fma";
    case IsaPath::kAvx512:
      return "avx512";
  }
  return "unknown";
}

std::optional<IsaPath> isa_path_from_string(std::string_view s) {
  for (IsaPath p : {IsaPath::kScalar, IsaPath::kAvx2Fma, IsaPath::kAvx512})
    if (to_string(p) == s) return p;
  return std::nullopt;
}

}  // namespace gpucheck::cpu
