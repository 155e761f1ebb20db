// The arithmetic the stress primitives share across host code and CUDA kernels: the checksum of a
// buffer's 64-bit words and the memory-test patterns. One definition, so the CPU, the CUDA
// kernels and the host's expectations agree bit for bit (kernels/opencl_stress.cl restates it in
// OpenCL C; a test compares the backends' results).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GC_HOST_DEVICE __host__ __device__
#else
#define GC_HOST_DEVICE
#endif

namespace gpucheck::stress_math {

inline constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;  // 2^64 / φ, odd
inline constexpr std::uint64_t kMixMul = 0xBF58476D1CE4E5B9ull;  // splitmix64's first multiplier
inline constexpr std::uint64_t kMixMul2 = 0x94D049BB133111EBull;

// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijection of 64-bit words that mixes.
GC_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * kMixMul;
  z = (z ^ (z >> 27)) * kMixMul2;
  return z ^ (z >> 31);
}

// The term word `index` holding `word` adds to a checksum: splitmix64's finaliser of the word
// xor a multiple of its index. A bijection of the word for a fixed index, so a changed word
// always changes its term; and non-linear, so faults in several words cancel only by a 64-bit
// coincidence (a single multiply would let +2^b in one word cancel −2^b in another). Terms are
// summed modulo 2^64: the order of the sum (threads, blocks) cannot change the result.
GC_HOST_DEVICE inline std::uint64_t checksum_term(std::uint64_t word, std::uint64_t index) {
  return splitmix64(word ^ (index * kGolden));
}

// Memory-test patterns: the value word `index` (counted from the start of the tested region)
// holds. kConstant: param everywhere (walking ones, moving inversions); kAddress: the index xor
// param (address in address, and its complement with param = ~0); kRandom: splitmix64 of param
// and the index (a seeded random pattern no compression or prefetch can guess).
enum class PatternKind : std::uint32_t { kNone = 0, kConstant = 1, kAddress = 2, kRandom = 3 };

GC_HOST_DEVICE inline std::uint64_t pattern_value(PatternKind kind, std::uint64_t param,
                                                  std::uint64_t index) {
  switch (kind) {
    case PatternKind::kConstant:
      return param;
    case PatternKind::kAddress:
      return index ^ param;
    case PatternKind::kRandom:
      return splitmix64(param + index * kGolden);
    default:
      return 0;
  }
}

// Table<Check, Write>::value for kinds known only at run time: a memory-test pass's inner loop is
// compiled once per pair of kinds, with no switch inside it (on the CPU and in CUDA alike).
template <template <PatternKind, PatternKind> class Table, PatternKind Check>
auto pick_write(PatternKind write) {
  switch (write) {
    case PatternKind::kConstant:
      return Table<Check, PatternKind::kConstant>::value;
    case PatternKind::kAddress:
      return Table<Check, PatternKind::kAddress>::value;
    case PatternKind::kRandom:
      return Table<Check, PatternKind::kRandom>::value;
    default:
      return Table<Check, PatternKind::kNone>::value;
  }
}

template <template <PatternKind, PatternKind> class Table>
auto pick_pass(PatternKind check, PatternKind write) {
  switch (check) {
    case PatternKind::kConstant:
      return pick_write<Table, PatternKind::kConstant>(write);
    case PatternKind::kAddress:
      return pick_write<Table, PatternKind::kAddress>(write);
    case PatternKind::kRandom:
      return pick_write<Table, PatternKind::kRandom>(write);
    default:
      return pick_write<Table, PatternKind::kNone>(write);
  }
}

}  // namespace gpucheck::stress_math
