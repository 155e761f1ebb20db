// Verification of exp, GEMM and conv results; the error model and its reasoning are in verify.h.
#include "bench/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/half.h"

namespace gpucheck::bench {

namespace {

constexpr double kU64 = 0x1p-53;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGemmLambdaK = 8;
constexpr double kConvLambdaK = 32;
constexpr std::size_t kBlock = 4096;

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
  m.tolerance = m.out + m.prod;
  return m;
}

// A double-double accumulator: TwoSum for each addition, TwoProduct (fma) for each product, the
// low parts summed plainly (Ogita–Rump–Oishi Sum2/Dot2): the unevaluated hi + lo is off from the
// exact sum by at most γ_n²·Σ|terms|, γ_n = n·2^-53 / (1 − n·2^-53).
struct Acc {
  double hi = 0;
  double lo = 0;
  void add(double v) {
    const double s = hi + v;
    const double bv = s - hi;
    lo += (hi - (s - bv)) + (v - bv);
    hi = s;
  }
  void add_product(double a, double b) {
    const double p = a * b;
    lo += std::fma(a, b, -p);
    add(p);
  }
  double value() const { return hi + lo; }
};

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

enum class BadKind { kNan, kInf, kPoison, kNegative };

struct ScanResult {
  std::uint64_t bad = 0;
  std::uint64_t first = 0;
  BadKind kind = BadKind::kNan;
};

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

// NaN, ±Inf and poison anywhere in y (and, with reject_negative, anything with its sign set).
ScanResult scan_outputs(const HostBuffer& y, bool reject_negative) {
  const void* p = y.data();
  switch (y.dtype()) {
    case DType::kF64:
      return scan_bits<std::uint64_t>(static_cast<const std::uint64_t*>(p), y.size(),
                                      0x7FF0000000000000ull, 0x8000000000000000ull, kPoisonF64,
                                      reject_negative);
    case DType::kF16:
      return scan_bits<std::uint16_t>(static_cast<const std::uint16_t*>(p), y.size(), 0x7C00u,
                                      0x8000u, kPoisonF16, reject_negative);
    case DType::kBf16:
      return scan_bits<std::uint16_t>(static_cast<const std::uint16_t*>(p), y.size(), 0x7F80u,
                                      0x8000u, kPoisonBf16, reject_negative);
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  return scan_bits<std::uint32_t>(static_cast<const std::uint32_t*>(p), y.size(), 0x7F800000u,
                                  0x80000000u, kPoisonF32, reject_negative);
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

// Keeps the worst value, the count of those over the limit and the lowest bad index.
class Tracker {
 public:
  explicit Tracker(double limit) : limit_(limit) {}
  // what() describes the element; called only for a new lowest bad index.
  template <class What>
  void observe(std::uint64_t index, double value, const What& what) {
    if (std::isnan(value)) value = kInf;
    max_ = std::max(max_, value);
    if (value <= limit_) return;
    ++bad_;
    if (!first_ || index < *first_) {
      first_ = index;
      first_what_ = what();
    }
  }
  void raise_max(double value) { max_ = std::max(max_, std::isnan(value) ? kInf : value); }
  double max() const { return max_; }
  std::uint64_t bad() const { return bad_; }
  const std::optional<std::uint64_t>& first() const { return first_; }
  const std::string& first_what() const { return first_what_; }

 private:
  double limit_;
  double max_ = 0;
  std::uint64_t bad_ = 0;
  std::optional<std::uint64_t> first_;
  std::string first_what_;
};

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

std::uint64_t mul_checked(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::invalid_argument("shape overflows 64 bits");
  return r;
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
double element_allowance(const ErrorModel& m, double out_min_normal, double ref, double mag,
                         std::uint64_t k) {
  const double kk = static_cast<double>(k) + 2;
  return m.out * (std::fabs(ref) + out_min_normal) + m.prod * mag + 2 * kU64 * std::fabs(ref) +
         4 * kk * kk * kU64 * kU64 * mag;
}

}  // namespace

double unit_roundoff(DType dtype) {
  return std::ldexp(1.0, -precision_bits(dtype));
}

double exp_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return 1e-14;
    case DType::kF16:
      return 2e-3;
    case DType::kBf16:
      return 1.6e-2;
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  return 2e-6;
}

DType default_compute(DType data) {
  return data == DType::kF16 || data == DType::kBf16 ? DType::kF32 : data;
}

ErrorModel gemm_error_model(DType in, DType out, DType compute, std::uint64_t k) {
  return product_model(in, out, compute, k, kGemmLambdaK);
}
ErrorModel conv_error_model(DType in, DType out, DType compute, std::uint64_t crs) {
  return product_model(in, out, compute, crs, kConvLambdaK);
}

// ---------------------------------------------------------------- exp

Verification verify_exp(const HostBuffer& x, const HostBuffer& y, const VerifyOptions& opt) {
  if (x.size() != y.size())
    throw std::invalid_argument(
        fmt::format("verify_exp: {} inputs but {} outputs", x.size(), y.size()));
  Verification v;
  v.tolerance = exp_tolerance(y.dtype());
  const std::uint64_t n = y.size();
  const bool full = n <= opt.exp_full_max;
  v.method = full ? "elementwise" : "sampled+scan";
  const double floor = min_normal(y.dtype());
  const ScanResult scan = scan_outputs(y, /*reject_negative=*/true);

  Tracker t(v.tolerance);
  auto check = [&](std::uint64_t i, double xi, double yi) {
    if (!std::isfinite(yi)) return;  // the scan names it
    const double e = std::exp(xi);
    const double rel = std::fabs(yi - e) / std::max(e, floor);
    t.observe(i, rel, [&] {
      return fmt::format("element {}: {} where exp({}) = {} (relative error {:.3g} > {:.3g})", i,
                         yi, xi, e, rel, v.tolerance);
    });
  };
  std::uint64_t checked = 0;
  if (full) {
    std::vector<double> xb(kBlock), yb(kBlock);
    for (std::size_t begin = 0; begin < n; begin += kBlock) {
      const std::size_t count = std::min<std::size_t>(kBlock, n - begin);
      load(x, begin, count, xb.data());
      load(y, begin, count, yb.data());
      for (std::size_t j = 0; j < count; ++j) check(begin + j, xb[j], yb[j]);
    }
    checked = n;
  } else {
    for (const std::uint64_t i : sample_indices(n, opt.exp_samples, opt.seed)) {
      check(i, x.get(i), y.get(i));
      ++checked;
    }
  }

  v.max_rel_error = scan.bad != 0 ? kInf : t.max();
  v.ok = scan.bad == 0 && t.bad() == 0;
  v.first_bad_index = t.first();
  if (scan.bad != 0 && (!t.first() || scan.first < *t.first())) v.first_bad_index = scan.first;
  if (v.ok) {
    v.detail = full ? fmt::format("all {} elements within {:.3g}", n, v.tolerance)
                    : fmt::format("{} sampled elements within {:.3g}; scan of {} elements clean",
                                  checked, v.tolerance, n);
    return v;
  }
  // Every kind of failure found, the one at the lowest index first.
  std::vector<std::pair<std::uint64_t, std::string>> parts;
  if (t.bad() != 0)
    parts.emplace_back(*t.first(), fmt::format("{}; {} of {} checked elements out of tolerance",
                                               t.first_what(), t.bad(), checked));
  if (scan.bad != 0) parts.emplace_back(scan.first, describe_scan(scan, y));
  std::sort(parts.begin(), parts.end());
  for (const auto& [index, text] : parts) v.detail += (v.detail.empty() ? "" : "; ") + text;
  return v;
}

// ---------------------------------------------------------------- gemm

Verification verify_gemm(const GemmShape& shape, const HostBuffer& a, const HostBuffer& b,
                         const HostBuffer& c, DType compute, const VerifyOptions& opt) {
  const std::uint64_t m = shape.m, n = shape.n, k = shape.k;
  if (a.size() != mul_checked(m, k) || b.size() != mul_checked(k, n) ||
      c.size() != mul_checked(m, n))
    throw std::invalid_argument(
        fmt::format("verify_gemm: buffers of {}, {}, {} elements for m={} n={} k={}", a.size(),
                    b.size(), c.size(), m, n, k));
  const ErrorModel model = gemm_error_model(a.dtype(), c.dtype(), compute, k);
  Verification v;
  v.tolerance = model.tolerance;
  const bool full = mul_sat(mul_sat(m, n), k) <= opt.full_max_macs;
  v.method = full ? "elementwise" : "freivalds+sampled+scan";
  if (m == 0 || n == 0) {
    v.ok = true;
    v.detail = "empty result";
    return v;
  }
  const ScanResult scan = scan_outputs(c, false);
  if (scan.bad != 0) {
    v.ok = false;
    v.max_rel_error = kInf;
    v.first_bad_index = scan.first;
    v.detail = describe_scan(scan, c);
    return v;
  }
  const double out_mn = min_normal(c.dtype());

  // Row i of A·B in double-double with Σ|a||b|, checked element by element against C.
  std::vector<double> a_row(k), b_row(n), mag(n);
  std::vector<Acc> acc(n);
  auto check_row = [&](std::uint64_t i, Tracker& t) {
    load(a, i * k, k, a_row.data());
    std::fill(acc.begin(), acc.end(), Acc{});
    std::fill(mag.begin(), mag.end(), 0.0);
    for (std::uint64_t l = 0; l < k; ++l) {
      load(b, l * n, n, b_row.data());
      const double al = a_row[l], abs_al = std::fabs(al);
      for (std::uint64_t j = 0; j < n; ++j) {
        acc[j].add_product(al, b_row[j]);
        mag[j] += abs_al * std::fabs(b_row[j]);
      }
    }
    for (std::uint64_t j = 0; j < n; ++j) {
      const double ref = acc[j].value(), got = c.get(i * n + j);
      const double allow = element_allowance(model, out_mn, ref, mag[j], k);
      t.observe(i * n + j, std::fabs(got - ref) / allow, [&] {
        return fmt::format("C[{},{}] (element {}) = {} where float64 gives {} (allowed ±{:.3g})", i,
                           j, i * n + j, got, ref, allow);
      });
    }
  };

  Tracker t(1.0);
  if (full) {
    for (std::uint64_t i = 0; i < m; ++i) check_row(i, t);
    finish(v, t, 0, "", fmt::format("all {} elements within their allowance", m * n));
    return v;
  }

  // Freivalds with two ±1 vectors: y_v = B·x_v (double-double), then per row (A·y_v) − (C·x_v).
  std::vector<double> x[2] = {std::vector<double>(n), std::vector<double>(n)};
  for (std::uint64_t j = 0; j < n; ++j)
    for (int vv = 0; vv < 2; ++vv) x[vv][j] = sign_of(opt.seed, j, vv);
  std::vector<Acc> y[2] = {std::vector<Acc>(k), std::vector<Acc>(k)};
  std::vector<double> b_abs(k);
  double b_frob_sq = 0;
  for (std::uint64_t l = 0; l < k; ++l) {
    load(b, l * n, n, b_row.data());
    Acc s0, s1;
    double abs_sum = 0, sq = 0;
    for (std::uint64_t j = 0; j < n; ++j) {
      const double bv = b_row[j];
      s0.add(x[0][j] * bv);
      s1.add(x[1][j] * bv);
      abs_sum += std::fabs(bv);
      sq += bv * bv;
    }
    y[0][l] = s0;
    y[1][l] = s1;
    b_abs[l] = abs_sum;
    b_frob_sq += sq;
  }
  const double b_frob = std::sqrt(b_frob_sq);
  const double kn = static_cast<double>(k + n + 2);
  const double host_noise = 4 * kn * kn * kU64 * kU64;
  std::vector<double> c_row(n);
  std::vector<std::pair<std::uint64_t, double>> failing_rows;  // row, observed/allowed
  double worst_row = 0;
  std::uint64_t worst_row_index = 0;
  double worst_row_residual = 0, worst_row_allow = 0;
  for (std::uint64_t i = 0; i < m; ++i) {
    load(a, i * k, k, a_row.data());
    load(c, i * n, n, c_row.data());
    Acc t0, t1, s0, s1;
    double p_abs = 0, a_sq = 0, q_abs = 0, c_sq = 0;
    for (std::uint64_t l = 0; l < k; ++l) {
      const double al = a_row[l];
      t0.add_product(al, y[0][l].hi);
      t0.lo += al * y[0][l].lo;
      t1.add_product(al, y[1][l].hi);
      t1.lo += al * y[1][l].lo;
      p_abs += std::fabs(al) * b_abs[l];
      a_sq += al * al;
    }
    for (std::uint64_t j = 0; j < n; ++j) {
      const double cv = c_row[j];
      s0.add(x[0][j] * cv);
      s1.add(x[1][j] * cv);
      q_abs += std::fabs(cv);
      c_sq += cv * cv;
    }
    const double residual = std::max(std::fabs(difference(s0, t0)), std::fabs(difference(s1, t1)));
    const double allow =
        kFreivaldsLambda *
            (model.out * (std::sqrt(c_sq) + std::sqrt(static_cast<double>(n)) * out_mn) /
                 (1 - model.out) +
             model.prod * std::sqrt(a_sq) * b_frob) +
        host_noise * (p_abs + q_abs);
    const double ratio = residual / allow;
    if (!(ratio <= 1)) failing_rows.emplace_back(i, ratio);
    if (std::isnan(ratio) || ratio > worst_row) {
      worst_row = std::isnan(ratio) ? kInf : ratio;
      worst_row_index = i;
      worst_row_residual = residual;
      worst_row_allow = allow;
    }
  }
  t.raise_max(worst_row);

  // Sampled elements, each against its own allowance.
  const auto samples = sample_indices(m * n, opt.samples, opt.seed);
  for (const std::uint64_t idx : samples) {
    const std::uint64_t i = idx / n, j = idx % n;
    Acc s;
    double mg = 0;
    for (std::uint64_t l = 0; l < k; ++l) {
      const double av = a.get(i * k + l), bv = b.get(l * n + j);
      s.add_product(av, bv);
      mg += std::fabs(av * bv);
    }
    const double ref = s.value(), got = c.get(idx);
    const double allow = element_allowance(model, out_mn, ref, mg, k);
    t.observe(idx, std::fabs(got - ref) / allow, [&] {
      return fmt::format("C[{},{}] (element {}) = {} where float64 gives {} (allowed ±{:.3g})", i,
                         j, idx, got, ref, allow);
    });
  }

  // Name the elements of failing rows.
  std::string row_detail;
  if (!failing_rows.empty()) {
    const std::uint64_t bad_before = t.bad();
    const std::size_t localized = std::min(failing_rows.size(), opt.max_localized);
    for (std::size_t r = 0; r < localized; ++r) check_row(failing_rows[r].first, t);
    row_detail = fmt::format(
        "{} of {} rows fail Freivalds' test (row {}: |C·x − A·(B·x)| = {:.3g}, allowed {:.3g})",
        failing_rows.size(), m, worst_row_index, worst_row_residual, worst_row_allow);
    if (t.bad() == bad_before) {
      // No single element of the localized rows is outside its own allowance (errors spread
      // thinly over a row): name the row's first element.
      // Named members, not a structured binding: clang before 16 cannot capture a binding.
      const auto row = failing_rows.front().first;
      const auto ratio = failing_rows.front().second;
      t.observe(row * n, ratio, [&] {
        return fmt::format("row {} of C is off as a whole, no single element beyond its allowance",
                           row);
      });
    }
  }
  finish(v, t, failing_rows.size(), row_detail,
         fmt::format("{} rows × 2 Freivalds vectors and {} sampled elements within allowance", m,
                     samples.size()));
  return v;
}

// ---------------------------------------------------------------- conv

Verification verify_conv(const ConvShape& shape, const HostBuffer& xb, const HostBuffer& wb,
                         const HostBuffer& yb, DType compute, const VerifyOptions& opt) {
  const std::uint64_t N = shape.n, C = shape.c, H = shape.h, W = shape.w;
  const std::uint64_t K = shape.k, R = shape.r, S = shape.s;
  const std::uint64_t stride = shape.stride, pad = shape.pad;
  if (xb.size() != conv_x_elements(shape) || wb.size() != conv_w_elements(shape) ||
      yb.size() != conv_y_elements(shape))
    throw std::invalid_argument(
        fmt::format("verify_conv: buffers of {}, {}, {} elements do not match the shape", xb.size(),
                    wb.size(), yb.size()));
  const std::uint64_t P = shape.p(), Q = shape.q();
  const std::uint64_t crs = C * R * S;
  const ErrorModel model = conv_error_model(xb.dtype(), yb.dtype(), compute, crs);
  Verification v;
  v.tolerance = model.tolerance;
  const bool full = mul_sat(yb.size(), crs) <= opt.full_max_macs;
  v.method = full ? "elementwise" : "freivalds+sampled+scan";
  if (yb.size() == 0) {
    v.ok = true;
    v.detail = "empty result";
    return v;
  }
  const ScanResult scan = scan_outputs(yb, false);
  if (scan.bad != 0) {
    v.ok = false;
    v.max_rel_error = kInf;
    v.first_bad_index = scan.first;
    v.detail = describe_scan(scan, yb);
    return v;
  }
  const double out_mn = min_normal(yb.dtype());

  // x as N×C×H×W and w as K×C×R×S doubles, whatever the layout.
  std::vector<double> x(xb.size()), w(wb.size());
  {
    const auto xs = load_all(xb), ws = load_all(wb);
    for (std::uint64_t n = 0; n < N; ++n)
      for (std::uint64_t c = 0; c < C; ++c)
        for (std::uint64_t h = 0; h < H; ++h)
          for (std::uint64_t q = 0; q < W; ++q)
            x[((n * C + c) * H + h) * W + q] = xs[conv_x_index(shape, n, c, h, q)];
    for (std::uint64_t k = 0; k < K; ++k)
      for (std::uint64_t c = 0; c < C; ++c)
        for (std::uint64_t r = 0; r < R; ++r)
          for (std::uint64_t s = 0; s < S; ++s)
            w[((k * C + c) * R + r) * S + s] = ws[conv_w_index(shape, k, c, r, s)];
  }
  // Calls f(c·R·S + r·S + s, x value) for each in-bounds tap of output position (n, p, q).
  auto for_each_tap = [&](std::uint64_t n, std::uint64_t p, std::uint64_t q, auto&& f) {
    for (std::uint64_t c = 0; c < C; ++c)
      for (std::uint64_t r = 0; r < R; ++r) {
        const std::uint64_t hh = p * stride + r;  // padded coordinate
        if (hh < pad || hh - pad >= H) continue;
        const double* xrow = &x[((n * C + c) * H + (hh - pad)) * W];
        for (std::uint64_t s = 0; s < S; ++s) {
          const std::uint64_t ww = q * stride + s;
          if (ww < pad || ww - pad >= W) continue;
          f((c * R + r) * S + s, xrow[ww - pad]);
        }
      }
  };
  auto check_point = [&](std::uint64_t n, std::uint64_t k, std::uint64_t p, std::uint64_t q,
                         Tracker& t) {
    Acc s;
    double mg = 0;
    const double* wk = &w[k * crs];
    for_each_tap(n, p, q, [&](std::uint64_t tap, double xv) {
      s.add_product(xv, wk[tap]);
      mg += std::fabs(xv * wk[tap]);
    });
    const std::uint64_t idx = conv_y_index(shape, n, k, p, q);
    const double ref = s.value(), got = yb.get(idx);
    const double allow = element_allowance(model, out_mn, ref, mg, crs);
    t.observe(idx, std::fabs(got - ref) / allow, [&] {
      return fmt::format(
          "y[n={},k={},p={},q={}] (element {}) = {} where float64 gives {} "
          "(allowed ±{:.3g})",
          n, k, p, q, idx, got, ref, allow);
    });
  };

  Tracker t(1.0);
  if (full) {
    for (std::uint64_t n = 0; n < N; ++n)
      for (std::uint64_t k = 0; k < K; ++k)
        for (std::uint64_t p = 0; p < P; ++p)
          for (std::uint64_t q = 0; q < Q; ++q) check_point(n, k, p, q, t);
    finish(v, t, 0, "", fmt::format("all {} elements within their allowance", yb.size()));
    return v;
  }

  // Σ_k u_k·y[n,k,p,q] against conv(x, Σ_k u_k·w_k), two ±1 vectors u over the K channels.
  std::vector<double> uk[2] = {std::vector<double>(K), std::vector<double>(K)};
  for (std::uint64_t k = 0; k < K; ++k)
    for (int vv = 0; vv < 2; ++vv) uk[vv][k] = sign_of(opt.seed, k, vv);
  std::vector<Acc> wu[2] = {std::vector<Acc>(crs), std::vector<Acc>(crs)};
  std::vector<double> w_abs(crs, 0.0);
  double w_frob_sq = 0;
  for (std::uint64_t k = 0; k < K; ++k)
    for (std::uint64_t tap = 0; tap < crs; ++tap) {
      const double wv = w[k * crs + tap];
      wu[0][tap].add(uk[0][k] * wv);
      wu[1][tap].add(uk[1][k] * wv);
      w_abs[tap] += std::fabs(wv);
      w_frob_sq += wv * wv;
    }
  const double w_frob = std::sqrt(w_frob_sq);
  const double kk = static_cast<double>(K + crs + 2);
  const double host_noise = 4 * kk * kk * kU64 * kU64;

  struct Position {
    std::uint64_t n, p, q;
  };
  std::vector<std::pair<Position, double>> failing;  // position, observed/allowed
  double worst = 0, worst_residual = 0, worst_allow = 0;
  Position worst_pos{0, 0, 0};
  for (std::uint64_t n = 0; n < N; ++n)
    for (std::uint64_t p = 0; p < P; ++p)
      for (std::uint64_t q = 0; q < Q; ++q) {
        Acc t0, t1, s0, s1;
        double p_abs = 0, patch_sq = 0, q_abs = 0, y_sq = 0;
        for_each_tap(n, p, q, [&](std::uint64_t tap, double xv) {
          t0.add_product(xv, wu[0][tap].hi);
          t0.lo += xv * wu[0][tap].lo;
          t1.add_product(xv, wu[1][tap].hi);
          t1.lo += xv * wu[1][tap].lo;
          p_abs += std::fabs(xv) * w_abs[tap];
          patch_sq += xv * xv;
        });
        for (std::uint64_t k = 0; k < K; ++k) {
          const double yv = yb.get(conv_y_index(shape, n, k, p, q));
          s0.add(uk[0][k] * yv);
          s1.add(uk[1][k] * yv);
          q_abs += std::fabs(yv);
          y_sq += yv * yv;
        }
        const double residual =
            std::max(std::fabs(difference(s0, t0)), std::fabs(difference(s1, t1)));
        const double allow =
            kFreivaldsLambda *
                (model.out * (std::sqrt(y_sq) + std::sqrt(static_cast<double>(K)) * out_mn) /
                     (1 - model.out) +
                 model.prod * std::sqrt(patch_sq) * w_frob) +
            host_noise * (p_abs + q_abs);
        const double ratio = residual / allow;
        if (!(ratio <= 1)) failing.push_back({{n, p, q}, ratio});
        if (std::isnan(ratio) || ratio > worst) {
          worst = std::isnan(ratio) ? kInf : ratio;
          worst_pos = {n, p, q};
          worst_residual = residual;
          worst_allow = allow;
        }
      }
  t.raise_max(worst);

  const auto samples = sample_indices(N * K * P * Q, opt.samples, opt.seed);
  for (const std::uint64_t logical : samples) {
    // A logical N×K×P×Q index, so the sample does not depend on the layout.
    const std::uint64_t q = logical % Q, p = logical / Q % P, k = logical / (P * Q) % K,
                        n = logical / (K * P * Q);
    check_point(n, k, p, q, t);
  }

  std::string pos_detail;
  if (!failing.empty()) {
    const std::uint64_t bad_before = t.bad();
    const std::size_t localized = std::min(failing.size(), opt.max_localized);
    for (std::size_t f = 0; f < localized; ++f)
      for (std::uint64_t k = 0; k < K; ++k)
        check_point(failing[f].first.n, k, failing[f].first.p, failing[f].first.q, t);
    pos_detail = fmt::format(
        "{} of {} output positions fail the channel-projection test (n={}, p={}, q={}: "
        "|Σ_k u_k·y − conv(x, Σ_k u_k·w_k)| = {:.3g}, allowed {:.3g})",
        failing.size(), N * P * Q, worst_pos.n, worst_pos.p, worst_pos.q, worst_residual,
        worst_allow);
    if (t.bad() == bad_before) {
      const auto& f = failing.front().first;
      const auto ratio = failing.front().second;
      t.observe(conv_y_index(shape, f.n, 0, f.p, f.q), ratio, [&] {
        return fmt::format(
            "output position n={}, p={}, q={} is off as a whole, no single channel beyond its "
            "allowance",
            f.n, f.p, f.q);
      });
    }
  }
  finish(v, t, failing.size(), pos_detail,
         fmt::format("{} output positions × 2 projections and {} sampled elements within "
                     "allowance",
                     N * P * Q, samples.size()));
  return v;
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

}  // namespace gpucheck::bench
