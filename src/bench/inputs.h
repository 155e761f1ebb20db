// Host buffers of any DType, the seeded fills every device regenerates byte for byte, and output
// poisoning; each op's own inputs are in its unit (bench/ops/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/workload.h"

namespace gpucheck::bench {

// Host memory could not be had: names the bytes asked for and what they were for.
class AllocationError : public std::runtime_error {
 public:
  AllocationError(std::uint64_t bytes, const std::string& what);
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t bytes_;
};

// Typed host storage for one tensor: float for f32 and tf32, double for f64, std::uint16_t bits
// for f16 and bf16, std::uint8_t bits for fp8 (e4m3; core/half.h). 64-byte aligned; contents are
// unspecified until filled.
class HostBuffer {
 public:
  static constexpr std::size_t kAlignment = 64;

  HostBuffer() = default;  // empty f32 buffer
  // Throws AllocationError when size·element_size(dtype) overflows or the memory is not there.
  HostBuffer(DType dtype, std::size_t size);
  HostBuffer(HostBuffer&&) noexcept = default;
  HostBuffer& operator=(HostBuffer&&) noexcept = default;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  DType dtype() const { return dtype_; }
  std::size_t size() const { return size_; }  // elements
  std::size_t size_bytes() const { return size_ * element_size(dtype_); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }

  // The storage as T*; T must be the dtype's storage type (std::logic_error otherwise).
  template <class T>
  T* as();
  template <class T>
  const T* as() const;

  // Element i as a double (exact for every dtype); i < size() is the caller's duty.
  double get(std::size_t i) const;
  // Stores v rounded to the dtype (nearest even; tf32 is stored as f32, so rounded to f32).
  void set(std::size_t i, double v);

  HostBuffer clone() const;

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte[], Free> data_;
  DType dtype_ = DType::kF32;
  std::size_t size_ = 0;
  void check_storage(std::size_t type_size, bool is_float, bool is_double) const;
};

template <class T>
T* HostBuffer::as() {
  check_storage(sizeof(T), std::is_same_v<T, float>, std::is_same_v<T, double>);
  return reinterpret_cast<T*>(data_.get());
}
template <class T>
const T* HostBuffer::as() const {
  check_storage(sizeof(T), std::is_same_v<T, float>, std::is_same_v<T, double>);
  return reinterpret_cast<const T*>(data_.get());
}

// v rounded to what the dtype stores (f64 unchanged; f32 and tf32 to float; f16, bf16 RNE; fp8
// RNE saturating at ±448).
double round_to_storage(DType dtype, double v);
// The smallest positive normal value of the dtype's storage.
double min_normal(DType dtype);

// Stream ids: each tensor of a cell draws from its own stream of the seed.
inline constexpr std::uint64_t kStreamExpX = 1;
inline constexpr std::uint64_t kStreamGemmA = 2;
inline constexpr std::uint64_t kStreamGemmB = 3;
inline constexpr std::uint64_t kStreamConvX = 4;
inline constexpr std::uint64_t kStreamConvW = 5;
inline constexpr std::uint64_t kStreamVerifySamples = 101;  // which elements verification samples
inline constexpr std::uint64_t kStreamVerifySigns = 102;    // Freivalds' random ±1 vectors
inline constexpr std::uint64_t kDefaultSeed = 20240601;

// The generator's i-th raw 64-bit draw of (seed, stream); every fill below is built on it.
std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t i);

// Element i of a fill is a pure function of (seed, stream, i) — a counter-based generator
// (splitmix64 finaliser of seed, stream and counter) — so a fill is byte-identical across runs,
// processes and thread counts, and the first n elements of a longer fill equal a fill of n.
// Every stored value is rounded to the dtype, and one that rounds to zero or a subnormal is
// redrawn: inputs are never zero. Large fills run on all hardware threads.

// Uniform in the open interval (lo, hi).
void fill_uniform(HostBuffer& buf, double lo, double hi, std::uint64_t seed, std::uint64_t stream);
// Standard normal (Box–Muller over pairs of counters), as PyTorch's randn.
void fill_normal(HostBuffer& buf, std::uint64_t seed, std::uint64_t stream);

// a·b as an element count; std::overflow_error naming `what` when it overflows 64 bits.
std::uint64_t checked_elements(std::uint64_t a, std::uint64_t b, const char* what);
// n elements as a host buffer's size; std::overflow_error naming `what` when it does not fit.
std::size_t host_size(std::uint64_t n, const char* what);
// The d0×d1×d2×d3 tensor in buf (NCHW or KCRS order) stored channels last: d0×d2×d3×d1.
void permute_to_channels_last(HostBuffer& buf, std::uint64_t d0, std::uint64_t d1, std::uint64_t d2,
                              std::uint64_t d3);

// Poison: a value no computation produces, stored in outputs before a run so that verification
// can tell "never written" from "wrong". Quiet NaNs with a recognisable payload.
inline constexpr std::uint32_t kPoisonF32 = 0x7FC0DEADu;
inline constexpr std::uint64_t kPoisonF64 = 0x7FF8DEADDEADDEADull;
inline constexpr std::uint16_t kPoisonF16 = 0x7E7Fu;
inline constexpr std::uint16_t kPoisonBf16 = 0x7FDEu;
// e4m3 has one NaN per sign and no payload to mark it: poison is the negative NaN (0xFF), which
// the saturating conversion never writes (it writes 0x7F for a NaN). Only inputs are ever fp8.
inline constexpr std::uint8_t kPoisonFp8 = 0xFFu;

void poison(HostBuffer& buf);
bool is_poison(const HostBuffer& buf, std::size_t i);
// An output buffer of the dtype, poisoned.
HostBuffer make_output(DType dtype, std::size_t size);

}  // namespace gpucheck::bench
