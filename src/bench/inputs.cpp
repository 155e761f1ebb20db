// Host buffers, the counter-based input generator, poison, and conv tensor sizes.
#include "bench/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <numbers>
#include <system_error>
#include <thread>
#include <vector>

#include "core/parallel_ranges.h"
#include "core/half.h"

namespace gpucheck::bench {

namespace {

// ---- element codecs: the dtype's storage type, rounding into it and reading it back exactly.

struct F32Codec {
  using T = float;
  static T encode(double v) { return static_cast<float>(v); }
  static double decode(T t) { return t; }
  static bool is_normal(T t) { return std::isnormal(t); }
  static constexpr double kMinNormal = 0x1p-126;
};
struct F64Codec {
  using T = double;
  static T encode(double v) { return v; }
  static double decode(T t) { return t; }
  static bool is_normal(T t) { return std::isnormal(t); }
  static constexpr double kMinNormal = 0x1p-1022;
};
struct F16Codec {
  using T = std::uint16_t;
  static T encode(double v) { return double_to_f16(v); }
  static double decode(T t) { return f16_to_double(t); }
  static bool is_normal(T t) { return (t & 0x7C00u) != 0 && (t & 0x7C00u) != 0x7C00u; }
  static constexpr double kMinNormal = 0x1p-14;
};
struct Bf16Codec {
  using T = std::uint16_t;
  static T encode(double v) { return double_to_bf16(v); }
  static double decode(T t) { return bf16_to_double(t); }
  static bool is_normal(T t) { return (t & 0x7F80u) != 0 && (t & 0x7F80u) != 0x7F80u; }
  static constexpr double kMinNormal = 0x1p-126;
};

// e4m3: round to nearest even, saturating at ±448 (core/half.h); generated inputs never get
// there (normal draws beyond 448 are impossible in practice and would be kept as 448).
struct Fp8Codec {
  using T = std::uint8_t;
  static T encode(double v) { return double_to_e4m3(v); }
  static double decode(T t) { return e4m3_to_double(t); }
  static bool is_normal(T t) { return (t & 0x78u) != 0 && !e4m3_is_nan(t); }
  static constexpr double kMinNormal = 0x1p-6;
};

// Calls f(Codec{}) with the codec of the dtype.
template <class F>
decltype(auto) with_codec(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF64:
      return f(F64Codec{});
    case DType::kFp8:
      return f(Fp8Codec{});
    case DType::kF16:
      return f(F16Codec{});
    case DType::kBf16:
      return f(Bf16Codec{});
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  return f(F32Codec{});
}

// ---- the generator: splitmix64's finaliser over (seed, stream, counter).

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Counter {
 public:
  Counter(std::uint64_t seed, std::uint64_t stream)
      : key_(mix64(mix64(seed) ^ mix64(stream * 0xD1B54A32D192ED03ull + kGolden))) {}
  // The counter's i-th 64-bit draw.
  std::uint64_t at(std::uint64_t i) const { return mix64(key_ + (i + 1) * kGolden); }
  // Draws for redrawing element i (attempt >= 1), independent of every at() value.
  std::uint64_t again(std::uint64_t i, std::uint64_t attempt) const {
    return mix64(key_ ^ mix64((i + 1) * 0xA0761D6478BD642Full + attempt * kGolden));
  }

 private:
  std::uint64_t key_;
};

// A uniform double in the open interval (0, 1): 53 random bits, centred in their cell.
double unit_open(std::uint64_t h) {
  return (static_cast<double>(h >> 11) + 0.5) * 0x1p-53;
}

// Stores v rounded by Codec at out[i], redrawing (redraw(attempt)) while it rounds to zero, a
// subnormal or (never for these distributions) inf.
template <class Codec, class Redraw>
void store_nonzero(typename Codec::T* out, std::size_t i, double v, const Redraw& redraw) {
  auto e = Codec::encode(v);
  for (std::uint64_t attempt = 1; !Codec::is_normal(e); ++attempt)
    e = Codec::encode(redraw(attempt));
  out[i] = e;
}

// dst[layout index] = src[NCHW/KCRS index] for a 4-D tensor of dims d0×d1×d2×d3 stored as
// d0×d2×d3×d1 in dst (channels last).
template <class T>
void to_channels_last(const T* src, T* dst, std::uint64_t d0, std::uint64_t d1, std::uint64_t d2,
                      std::uint64_t d3) {
  for (std::uint64_t a = 0; a < d0; ++a)
    for (std::uint64_t b = 0; b < d1; ++b)
      for (std::uint64_t c = 0; c < d2; ++c)
        for (std::uint64_t d = 0; d < d3; ++d)
          dst[((a * d2 + c) * d3 + d) * d1 + b] = src[((a * d1 + b) * d2 + c) * d3 + d];
}

}  // namespace

std::uint64_t checked_elements(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw std::overflow_error(fmt::format("{}: element count overflows 64 bits", what));
  return r;
}

std::size_t host_size(std::uint64_t n, const char* what) {
  if (n > std::numeric_limits<std::size_t>::max())
    throw std::overflow_error(fmt::format("{}: {} elements do not fit in size_t", what, n));
  return static_cast<std::size_t>(n);
}

void permute_to_channels_last(HostBuffer& buf, std::uint64_t d0, std::uint64_t d1, std::uint64_t d2,
                              std::uint64_t d3) {
  HostBuffer out(buf.dtype(), buf.size());
  with_codec(buf.dtype(), [&](auto codec) {
    using T = typename decltype(codec)::T;
    to_channels_last(buf.as<T>(), out.as<T>(), d0, d1, d2, d3);
  });
  buf = std::move(out);
}

std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  return Counter(seed, stream).at(i);
}

AllocationError::AllocationError(std::uint64_t bytes, const std::string& what)
    : std::runtime_error(what), bytes_(bytes) {}

void HostBuffer::Free::operator()(std::byte* p) const noexcept {
  ::operator delete (p, std::align_val_t{kAlignment});
}

HostBuffer::HostBuffer(DType dtype, std::size_t size) : dtype_(dtype), size_(size) {
  const std::size_t esize = element_size(dtype);
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(size, esize, &bytes) ||
      bytes > std::numeric_limits<std::size_t>::max() - kAlignment) {
    throw AllocationError(
        std::numeric_limits<std::uint64_t>::max(),
        fmt::format("host buffer of {} {} elements: byte count overflows", size, to_string(dtype)));
  }
  if (bytes == 0) return;
  // Rounded up to whole cache lines, so vector code may read the last line in full.
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = ::operator new (rounded, std::align_val_t{kAlignment}, std::nothrow);
  if (p == nullptr) {
    throw AllocationError(
        bytes, fmt::format("cannot allocate {} bytes ({:.2f} GiB) of host memory "
                           "for {} {} elements",
                           bytes, static_cast<double>(bytes) / (1u << 30), size, to_string(dtype)));
  }
  data_.reset(static_cast<std::byte*>(p));
}

void HostBuffer::check_storage(std::size_t type_size, bool is_float, bool is_double) const {
  bool ok = false;
  switch (dtype_) {
    case DType::kF32:
    case DType::kTf32:
      ok = is_float;
      break;
    case DType::kF64:
      ok = is_double;
      break;
    case DType::kF16:
    case DType::kBf16:
      ok = type_size == 2 && !is_float && !is_double;
      break;
    case DType::kFp8:
      ok = type_size == 1 && !is_float && !is_double;
      break;
  }
  if (!ok)
    throw std::logic_error(fmt::format("HostBuffer of {} viewed as a {}-byte {} type",
                                       to_string(dtype_), type_size,
                                       is_float || is_double ? "floating" : "integer"));
}

double HostBuffer::get(std::size_t i) const {
  const void* p = data_.get();
  switch (dtype_) {
    case DType::kF64:
      return static_cast<const double*>(p)[i];
    case DType::kF16:
      return f16_to_double(static_cast<const std::uint16_t*>(p)[i]);
    case DType::kBf16:
      return bf16_to_double(static_cast<const std::uint16_t*>(p)[i]);
    case DType::kFp8:
      return e4m3_to_double(static_cast<const std::uint8_t*>(p)[i]);
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  return static_cast<const float*>(p)[i];
}

void HostBuffer::set(std::size_t i, double v) {
  void* p = data_.get();
  switch (dtype_) {
    case DType::kF64:
      static_cast<double*>(p)[i] = v;
      return;
    case DType::kF16:
      static_cast<std::uint16_t*>(p)[i] = double_to_f16(v);
      return;
    case DType::kBf16:
      static_cast<std::uint16_t*>(p)[i] = double_to_bf16(v);
      return;
    case DType::kFp8:
      static_cast<std::uint8_t*>(p)[i] = double_to_e4m3(v);
      return;
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  static_cast<float*>(p)[i] = static_cast<float>(v);
}

HostBuffer HostBuffer::clone() const {
  HostBuffer copy(dtype_, size_);
  if (size_ != 0) std::memcpy(copy.data(), data(), size_bytes());
  return copy;
}

double round_to_storage(DType dtype, double v) {
  return with_codec(dtype, [v](auto codec) {
    using C = decltype(codec);
    return C::decode(C::encode(v));
  });
}

double min_normal(DType dtype) {
  return with_codec(dtype, [](auto codec) { return decltype(codec)::kMinNormal; });
}

void fill_uniform(HostBuffer& buf, double lo, double hi, std::uint64_t seed, std::uint64_t stream) {
  if (!(lo < hi)) throw std::invalid_argument("fill_uniform: needs lo < hi");
  const Counter ctr(seed, stream);
  const double width = hi - lo;
  with_codec(buf.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* out = buf.as<typename C::T>();
    parallel_ranges(buf.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        store_nonzero<C>(out, i, lo + width * unit_open(ctr.at(i)), [&](std::uint64_t attempt) {
          return lo + width * unit_open(ctr.again(i, attempt));
        });
      }
    });
  });
}

void fill_normal(HostBuffer& buf, std::uint64_t seed, std::uint64_t stream) {
  const Counter ctr(seed, stream);
  constexpr double kTwoPi = 2 * std::numbers::pi;
  // Elements 2j and 2j+1 are the cosine and sine halves of Box–Muller over draws 2j and 2j+1.
  auto pair = [&](std::uint64_t j, double& z0, double& z1) {
    const double radius = std::sqrt(-2.0 * std::log(unit_open(ctr.at(2 * j))));
    const double angle = kTwoPi * unit_open(ctr.at(2 * j + 1));
    z0 = radius * std::cos(angle);
    z1 = radius * std::sin(angle);
  };
  with_codec(buf.dtype(), [&](auto codec) {
    using C = decltype(codec);
    auto* out = buf.as<typename C::T>();
    parallel_ranges(buf.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end;) {
        auto redraw = [&ctr, &i](std::uint64_t attempt) {
          const double radius = std::sqrt(-2.0 * std::log(unit_open(ctr.again(i, 2 * attempt))));
          return radius * std::cos(kTwoPi * unit_open(ctr.again(i, 2 * attempt + 1)));
        };
        double z0 = 0, z1 = 0;
        pair(i / 2, z0, z1);
        if (i % 2 == 0 && i + 1 < end) {
          store_nonzero<C>(out, i, z0, redraw);
          ++i;
          store_nonzero<C>(out, i, z1, redraw);
          ++i;
        } else {
          store_nonzero<C>(out, i, i % 2 == 0 ? z0 : z1, redraw);
          ++i;
        }
      }
    });
  });
}

void poison(HostBuffer& buf) {
  switch (buf.dtype()) {
    case DType::kF64:
      std::fill_n(static_cast<std::uint64_t*>(buf.data()), buf.size(), kPoisonF64);
      return;
    case DType::kF16:
      std::fill_n(buf.as<std::uint16_t>(), buf.size(), kPoisonF16);
      return;
    case DType::kBf16:
      std::fill_n(buf.as<std::uint16_t>(), buf.size(), kPoisonBf16);
      return;
    case DType::kFp8:
      std::fill_n(buf.as<std::uint8_t>(), buf.size(), kPoisonFp8);
      return;
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  // Stored as bits: a NaN passed through a float register may not keep its payload everywhere.
  auto* p = static_cast<std::uint32_t*>(buf.data());
  std::fill_n(p, buf.size(), kPoisonF32);
}

bool is_poison(const HostBuffer& buf, std::size_t i) {
  const void* p = buf.data();
  switch (buf.dtype()) {
    case DType::kF64:
      return static_cast<const std::uint64_t*>(p)[i] == kPoisonF64;
    case DType::kF16:
      return static_cast<const std::uint16_t*>(p)[i] == kPoisonF16;
    case DType::kBf16:
      return static_cast<const std::uint16_t*>(p)[i] == kPoisonBf16;
    case DType::kFp8:
      return static_cast<const std::uint8_t*>(p)[i] == kPoisonFp8;
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  return static_cast<const std::uint32_t*>(p)[i] == kPoisonF32;
}

HostBuffer make_output(DType dtype, std::size_t size) {
  HostBuffer out(dtype, size);
  poison(out);
  return out;
}

}  // namespace gpucheck::bench
