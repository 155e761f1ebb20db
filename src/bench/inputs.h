// Host buffers of any DType, the seeded inputs every device regenerates byte for byte, output
// poisoning, and the tensor layouts of conv (which element of x, w and y sits where).
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
// for f16 and bf16 (core/half.h). 64-byte aligned; contents are unspecified until filled.
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

// v rounded to what the dtype stores (f64 unchanged; f32 and tf32 to float; f16, bf16 RNE).
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

// The open interval exp inputs come from: (−10, 10), or (−8, 8) for f16 and bf16 so that every
// result is finite and normal.
std::pair<double, double> exp_input_range(DType dtype);

HostBuffer make_exp_input(DType dtype, const ExpShape& shape, std::uint64_t seed);

struct GemmInputs {
  HostBuffer a;  // m×k row-major
  HostBuffer b;  // k×n row-major
};
GemmInputs make_gemm_inputs(DType dtype, const GemmShape& shape, std::uint64_t seed);

// conv tensors. NCHW: x N×C×H×W, w K×C×R×S, y N×K×P×Q. NHWC (channels last, as cuDNN's NHWC
// and PyTorch's channels_last): x N×H×W×C, w K×R×S×C, y N×P×Q×K. All packed, last index
// fastest. conv is cross-correlation (no filter flip) with zero padding, as PyTorch's conv2d:
//   y[n,k,p,q] = Σ_{c,r,s} x[n, c, p·stride − pad + r, q·stride − pad + s] · w[k,c,r,s].
// Inputs are generated by logical (NCHW, KCRS) index, so both layouts hold the same tensors.
struct ConvInputs {
  HostBuffer x;
  HostBuffer w;
};
ConvInputs make_conv_inputs(DType dtype, const ConvShape& shape, std::uint64_t seed);

// Element counts of the conv tensors (overflow-checked: std::overflow_error).
std::uint64_t conv_x_elements(const ConvShape& s);
std::uint64_t conv_w_elements(const ConvShape& s);
std::uint64_t conv_y_elements(const ConvShape& s);

// Flat index of a logical element in the shape's layout.
inline std::uint64_t conv_x_index(const ConvShape& sh, std::uint64_t n, std::uint64_t c,
                                  std::uint64_t h, std::uint64_t w) {
  return sh.layout == Layout::kNchw ? ((n * sh.c + c) * sh.h + h) * sh.w + w
                                    : ((n * sh.h + h) * sh.w + w) * sh.c + c;
}
inline std::uint64_t conv_w_index(const ConvShape& sh, std::uint64_t k, std::uint64_t c,
                                  std::uint64_t r, std::uint64_t s) {
  return sh.layout == Layout::kNchw ? ((k * sh.c + c) * sh.r + r) * sh.s + s
                                    : ((k * sh.r + r) * sh.s + s) * sh.c + c;
}
inline std::uint64_t conv_y_index(const ConvShape& sh, std::uint64_t n, std::uint64_t k,
                                  std::uint64_t p, std::uint64_t q) {
  const std::uint64_t pp = sh.p(), qq = sh.q();
  return sh.layout == Layout::kNchw ? ((n * sh.k + k) * pp + p) * qq + q
                                    : ((n * pp + p) * qq + q) * sh.k + k;
}

// Poison: a value no computation produces, stored in outputs before a run so that verification
// can tell "never written" from "wrong". Quiet NaNs with a recognisable payload.
inline constexpr std::uint32_t kPoisonF32 = 0x7FC0DEADu;
inline constexpr std::uint64_t kPoisonF64 = 0x7FF8DEADDEADDEADull;
inline constexpr std::uint16_t kPoisonF16 = 0x7E7Fu;
inline constexpr std::uint16_t kPoisonBf16 = 0x7FDEu;

void poison(HostBuffer& buf);
bool is_poison(const HostBuffer& buf, std::size_t i);
// An output buffer of the dtype, poisoned.
HostBuffer make_output(DType dtype, std::size_t size);

}  // namespace gpucheck::bench
