// What every op's check shares (verify_parts.h), the GEMM/conv error model (its reasoning is in
// verify.h) and the exact check of copies; each op's own check is in its unit (bench/ops/).
#include "bench/verify.h"

#include "bench/verify_parts.h"
#include "core/json_keys.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/half.h"

namespace gpucheck::bench {

namespace {

constexpr double kGemmLambdaK = 8;
constexpr double kConvLambdaK = 32;
// FP8 tensor cores (Hopper's QGMMA) sum into an accumulator of about 14 significant bits
// (e8m13, truncating), which the library's kernels add into an f32 register every so many
// products when fast accumulation is off (cuBLASLt's default, and torch._scaled_mm's): every
// 128, as CUTLASS's promotion interval of 4 k-blocks and DeepSeek-V3's report have it.
constexpr double kFp8MmaRoundoff = 0x1p-14;
constexpr std::uint64_t kFp8PromotionK = 128;

int precision_bits(DType d) {
  switch (d) {
    case DType::kF64:
      return 53;
    case DType::kF32:
      return 24;
    case DType::kTf32:
    case DType::kF16:
      return 11;
    case DType::kBf16:
      return 8;
    case DType::kFp8:
      return 4;
  }
  return 24;
}

// Unit roundoff of what the dtype stores (tf32 results are stored as f32).
double storage_roundoff(DType d) {
  return d == DType::kTf32 ? 0x1p-24 : unit_roundoff(d);
}

ErrorModel product_model(DType in, DType out, DType compute, std::uint64_t k, double lambda_k) {
  // tf32 data is f32 in memory: its 24 bits are what tf32 math rounds.
  const int in_bits = in == DType::kTf32 ? 24 : precision_bits(in);
  const double u_in = in_bits > precision_bits(compute) ? unit_roundoff(compute) : 0;
  const double u_acc = compute == DType::kTf32 ? 0x1p-24 : unit_roundoff(compute);
  const auto kd = static_cast<double>(k);
  ErrorModel m;
  m.out = 3 * storage_roundoff(out);
  m.prod = 5 * u_in + std::min(2 * kd, lambda_k * std::sqrt(kd)) * u_acc;
  if (in == DType::kFp8) {
    // The tensor core's own sums, each over at most kFp8PromotionK products: the same bound per
    // chunk with the accumulator's roundoff, and the chunks' bounds added (Σ over chunks of
    // Σ|a||b| is the whole Σ|a||b|). Products of two e4m3 values are exact (8 bits).
    const auto chunk = static_cast<double>(std::min<std::uint64_t>(k, kFp8PromotionK));
    m.prod += std::min(2 * chunk, lambda_k * std::sqrt(chunk)) * kFp8MmaRoundoff;
  }
  m.tolerance = m.out + m.prod;
  return m;
}

}  // namespace

namespace verify_parts {

// Difference of two double-double values, rounded once.
double difference(const Acc& s, const Acc& t) {
  return (s.hi - t.hi) + (s.lo - t.lo);
}

// Elements [offset, offset+count) of buf as doubles.
void load(const HostBuffer& buf, std::size_t offset, std::size_t count, double* out) {
  switch (buf.dtype()) {
    case DType::kF64:
      std::memcpy(out, buf.as<double>() + offset, count * sizeof(double));
      return;
    case DType::kF16: {
      const std::uint16_t* p = buf.as<std::uint16_t>() + offset;
      for (std::size_t i = 0; i < count; ++i) out[i] = f16_to_double(p[i]);
      return;
    }
    case DType::kBf16: {
      const std::uint16_t* p = buf.as<std::uint16_t>() + offset;
      for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_double(p[i]);
      return;
    }
    case DType::kFp8: {
      const std::uint8_t* p = buf.as<std::uint8_t>() + offset;
      for (std::size_t i = 0; i < count; ++i) out[i] = e4m3_to_double(p[i]);
      return;
    }
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  const float* p = buf.as<float>() + offset;
  for (std::size_t i = 0; i < count; ++i) out[i] = p[i];
}

std::vector<double> load_all(const HostBuffer& buf) {
  std::vector<double> out(buf.size());
  load(buf, 0, buf.size(), out.data());
  return out;
}

// ---- scan for values no correct result holds

template <class U>
ScanResult scan_bits(const U* p, std::size_t n, U exp_mask, U sign_mask, U poison_bits,
                     bool reject_negative) {
  ScanResult r;
  const U negative_mask = reject_negative ? sign_mask : U{0};
  for (std::size_t i = 0; i < n; ++i) {
    const U v = p[i];
    if ((v & exp_mask) != exp_mask && (v & negative_mask) == 0) continue;
    if (r.bad++ != 0) continue;
    r.first = i;
    if (v == poison_bits)
      r.kind = BadKind::kPoison;
    else if ((v & exp_mask) != exp_mask)
      r.kind = BadKind::kNegative;
    else
      r.kind = (v & static_cast<U>(~(exp_mask | sign_mask))) != 0 ? BadKind::kNan : BadKind::kInf;
  }
  return r;
}

// e4m3 has no infinities and its NaNs fill the exponent and mantissa (S.1111.111): scan_bits's
// masks do not describe it. The poison is the negative NaN.
static ScanResult scan_fp8(const std::uint8_t* p, std::size_t n, bool reject_negative) {
  ScanResult r;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t v = p[i];
    const bool negative = reject_negative && (v & 0x80u) != 0;
    if (!e4m3_is_nan(v) && !negative) continue;
    if (r.bad++ != 0) continue;
    r.first = i;
    r.kind = v == kPoisonFp8  ? BadKind::kPoison
             : e4m3_is_nan(v) ? BadKind::kNan
                              : BadKind::kNegative;
  }
  return r;
}

namespace {

// scan_range over [0, n) on the hardware threads: the counts added, the first bad element the
// lowest range's.
template <class ScanRange>
ScanResult scan_in_ranges(std::size_t n, const ScanRange& scan_range) {
  std::vector<ScanResult> parts(split_ranges(n).size());
  parallel_indexed_ranges(n, std::size_t{1} << 16,
                          [&](std::size_t r, std::size_t begin, std::size_t end) {
                            parts[r] = scan_range(begin, end);
                            parts[r].first += begin;
                          });
  ScanResult all;
  for (const ScanResult& part : parts) {
    if (part.bad != 0 && all.bad == 0) {
      all.first = part.first;
      all.kind = part.kind;
    }
    all.bad += part.bad;
  }
  return all;
}

template <class U>
ScanResult scan_bits_parallel(const U* p, std::size_t n, U exp_mask, U sign_mask, U poison_bits,
                              bool reject_negative) {
  return scan_in_ranges(n, [&](std::size_t begin, std::size_t end) {
    return scan_bits<U>(p + begin, end - begin, exp_mask, sign_mask, poison_bits, reject_negative);
  });
}

}  // namespace

// NaN, ±Inf and poison anywhere in y (and, with reject_negative, anything with its sign set).
ScanResult scan_outputs(const HostBuffer& y, bool reject_negative) {
  const void* p = y.data();
  switch (y.dtype()) {
    case DType::kF64:
      return scan_bits_parallel<std::uint64_t>(static_cast<const std::uint64_t*>(p), y.size(),
                                               0x7FF0000000000000ull, 0x8000000000000000ull,
                                               kPoisonF64, reject_negative);
    case DType::kF16:
      return scan_bits_parallel<std::uint16_t>(static_cast<const std::uint16_t*>(p), y.size(),
                                               0x7C00u, 0x8000u, kPoisonF16, reject_negative);
    case DType::kBf16:
      return scan_bits_parallel<std::uint16_t>(static_cast<const std::uint16_t*>(p), y.size(),
                                               0x7F80u, 0x8000u, kPoisonBf16, reject_negative);
    case DType::kFp8:
      return scan_in_ranges(y.size(), [&](std::size_t begin, std::size_t end) {
        return scan_fp8(static_cast<const std::uint8_t*>(p) + begin, end - begin, reject_negative);
      });
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  return scan_bits_parallel<std::uint32_t>(static_cast<const std::uint32_t*>(p), y.size(),
                                           0x7F800000u, 0x80000000u, kPoisonF32, reject_negative);
}

std::string describe_scan(const ScanResult& s, const HostBuffer& y) {
  std::string what;
  switch (s.kind) {
    case BadKind::kPoison:
      what = "was never written (still the poison value)";
      break;
    case BadKind::kNan:
      what = "is NaN";
      break;
    case BadKind::kInf:
      what = fmt::format("is {}inf", y.get(s.first) < 0 ? "-" : "+");
      break;
    case BadKind::kNegative:
      what = fmt::format("is negative ({})", y.get(s.first));
      break;
  }
  return fmt::format("element {} {}; {} of {} elements NaN, Inf, unwritten or of the wrong sign",
                     s.first, what, s.bad, y.size());
}

// Sample indices in [0, n): `count` draws from the seed plus both ends, sorted and unique.
std::vector<std::uint64_t> sample_indices(std::uint64_t n, std::size_t count, std::uint64_t seed) {
  std::vector<std::uint64_t> idx;
  if (n == 0) return idx;
  idx.reserve(count + 2);
  idx.push_back(0);
  idx.push_back(n - 1);
  for (std::size_t t = 0; t < count; ++t)
    idx.push_back(random_bits(seed, kStreamVerifySamples, t) % n);
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

// The ±1 entry j of Freivalds vector v (0 or 1): independent bits of one draw.
double sign_of(std::uint64_t seed, std::uint64_t j, int v) {
  return ((random_bits(seed, kStreamVerifySigns, j) >> (17 * v)) & 1u) != 0 ? -1.0 : 1.0;
}

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

// Fills a gemm/conv outcome from the tracker of observed/allowed ratios (limit 1) and the count
// of failing projections; max_rel_error is tolerance · the worst ratio.
void finish(Verification& v, const Tracker& t, std::uint64_t checked_rows_failed,
            std::string row_detail, std::string ok_detail) {
  const bool ok = t.bad() == 0 && checked_rows_failed == 0 && t.max() <= 1;
  v.ok = ok;
  v.max_rel_error = v.tolerance * t.max();
  if (!ok && !(v.max_rel_error > v.tolerance)) v.max_rel_error = std::nextafter(v.tolerance, kInf);
  v.first_bad_index = t.first();
  if (ok) {
    v.detail = std::move(ok_detail);
    return;
  }
  std::string d;
  if (t.bad() != 0) d = t.first_what();
  if (!row_detail.empty()) d += (d.empty() ? "" : "; ") + row_detail;
  v.detail = std::move(d);
}

// Allowance of one element with reference value ref (a double-double sum of k products) and
// magnitude mag = Σ|a||b|: the model plus the host's own rounding.
double freivalds_residual(const Acc& s0, const Acc& t0, const Acc& s1, const Acc& t1) {
  return std::max(std::fabs(difference(s0, t0)), std::fabs(difference(s1, t1)));
}

double freivalds_allowance(const ErrorModel& m, double out_min_normal, double out_sq,
                           std::uint64_t width, double in_sq, double other_frob, double host_noise,
                           double abs_terms) {
  return kFreivaldsLambda *
             (m.out * (std::sqrt(out_sq) + std::sqrt(static_cast<double>(width)) * out_min_normal) /
                  (1 - m.out) +
              m.prod * std::sqrt(in_sq) * other_frob) +
         host_noise * abs_terms;
}

double element_allowance(const ErrorModel& m, double out_min_normal, double ref, double mag,
                         std::uint64_t k) {
  const double kk = static_cast<double>(k) + 2;
  return m.out * (std::fabs(ref) + out_min_normal) + m.prod * mag + 2 * kU64 * std::fabs(ref) +
         4 * kk * kk * kU64 * kU64 * mag;
}

}  // namespace verify_parts

double unit_roundoff(DType dtype) {
  return std::ldexp(1.0, -precision_bits(dtype));
}

DType default_compute(DType data) {
  return data == DType::kF16 || data == DType::kBf16 || data == DType::kFp8 ? DType::kF32 : data;
}

ErrorModel gemm_error_model(DType in, DType out, DType compute, std::uint64_t k) {
  return product_model(in, out, compute, k, kGemmLambdaK);
}
ErrorModel conv_error_model(DType in, DType out, DType compute, std::uint64_t crs) {
  return product_model(in, out, compute, crs, kConvLambdaK);
}

Verification verify_exact(const void* expected, const void* got, std::size_t bytes,
                          const std::string& what) {
  Verification v;
  v.method = "exact";
  v.tolerance = 0;
  const auto* e = static_cast<const unsigned char*>(expected);
  const auto* g = static_cast<const unsigned char*>(got);
  // memcmp runs at memory speed; the byte-wise search only when something differs.
  if (bytes == 0 || std::memcmp(g, e, bytes) == 0) {
    v.ok = true;
    v.max_rel_error = 0.0;
    return v;
  }
  const auto diff = std::mismatch(g, g + bytes, e);
  v.ok = diff.first == g + bytes;
  v.max_rel_error = v.ok ? 0.0 : std::numeric_limits<double>::infinity();
  if (!v.ok) {
    v.first_bad_index = static_cast<std::uint64_t>(diff.first - g);
    v.detail = fmt::format("{} (byte {} is 0x{:02x}, expected 0x{:02x})", what, *v.first_bad_index,
                           *diff.first, *diff.second);
  }
  return v;
}

nlohmann::json verification_json(const Verification& v) {
  namespace k = keys;
  nlohmann::json j = {{k::kTolerance, v.tolerance}, {k::kMethod, v.method}};
  // An infinite error (NaN, Inf, poison found) has no JSON number: null says "unbounded".
  j[k::kMaxRelError] = std::isfinite(v.max_rel_error) ? nlohmann::json(v.max_rel_error) : nullptr;
  if (v.first_bad_index) j[k::kFirstBadIndex] = *v.first_bad_index;
  if (!v.detail.empty()) j[k::kDetail] = v.detail;
  return j;
}

}  // namespace gpucheck::bench
