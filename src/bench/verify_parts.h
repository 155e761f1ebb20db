// What every op's float64 check shares (bench/verify.cpp defines it; the ops' units in
// bench/ops/ check their results with it): a double-double accumulator, loading any dtype as
// doubles, the scan for values no correct result holds, the tracker of the worst error, sampled
// indices, Freivalds' signs and the outcome of a GEMM-like check.
#pragma once

#include "bench/inputs.h"
#include "core/parallel_ranges.h"
#include "bench/verify.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::bench::verify_parts {

inline constexpr double kU64 = 0x1p-53;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::size_t kBlock = 4096;

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
double difference(const Acc& s, const Acc& t);

// Elements [offset, offset+count) of buf as doubles.
void load(const HostBuffer& buf, std::size_t offset, std::size_t count, double* out);
std::vector<double> load_all(const HostBuffer& buf);

// ---- scan for values no correct result holds

enum class BadKind { kNan, kInf, kPoison, kNegative };

struct ScanResult {
  std::uint64_t bad = 0;
  std::uint64_t first = 0;
  BadKind kind = BadKind::kNan;
};

// NaN, ±Inf and poison anywhere in y (and, with reject_negative, anything with its sign set).
ScanResult scan_outputs(const HostBuffer& y, bool reject_negative);
std::string describe_scan(const ScanResult& s, const HostBuffer& y);

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
  // Folds in the tracker of other indices (a range checked on another thread): the outcome is
  // the one a single pass over both would have had.
  void merge(const Tracker& other) {
    max_ = std::max(max_, other.max_);
    bad_ += other.bad_;
    if (other.first_ && (!first_ || *other.first_ < *first_)) {
      first_ = other.first_;
      first_what_ = other.first_what_;
    }
  }
  double limit() const { return limit_; }
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

// body(begin, end, tracker) over [0, n) on the hardware threads, each range with a tracker of
// its own, merged into `into`. A check of a large result is a pass over millions of elements
// or rows that are independent of each other: in one thread it was most of a default bench
// run's wall time on a 16-core GPU host.
template <class F>
void tracked_ranges(Tracker& into, std::size_t n, std::size_t min_per_range, const F& body) {
  std::vector<Tracker> parts(split_ranges(n, min_per_range).size(), Tracker(into.limit()));
  parallel_indexed_ranges(n, min_per_range, [&](std::size_t r, std::size_t begin, std::size_t end) {
    body(begin, end, parts[r]);
  });
  for (const Tracker& part : parts) into.merge(part);
}

// Sample indices in [0, n): `count` draws from the seed plus both ends, sorted and unique.
std::vector<std::uint64_t> sample_indices(std::uint64_t n, std::size_t count, std::uint64_t seed);

// The ±1 entry j of Freivalds vector v (0 or 1): independent bits of one draw.
double sign_of(std::uint64_t seed, std::uint64_t j, int v);

// a·b, or the largest value where it overflows (a size compared against a bound).
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b);

// Fills a gemm/conv outcome from the tracker of observed/allowed ratios (limit 1) and the count
// of failing projections; max_rel_error is tolerance · the worst ratio.
void finish(Verification& v, const Tracker& t, std::uint64_t checked_rows_failed,
            std::string row_detail, std::string ok_detail);

// One Freivalds row (or position) of a GEMM-like check: the worse of its two projections'
// residuals, and what it is allowed: λ × (the outputs' rounding over `width` outputs of squared
// norm out_sq, and the products' over an input row of squared norm in_sq against the other
// operand's Frobenius norm) plus the host's own rounding of the |terms| summed (abs_terms).
double freivalds_residual(const Acc& s0, const Acc& t0, const Acc& s1, const Acc& t1);
double freivalds_allowance(const ErrorModel& m, double out_min_normal, double out_sq,
                           std::uint64_t width, double in_sq, double other_frob, double host_noise,
                           double abs_terms);

// Allowance of one element with reference value ref (a double-double sum of k products) and
// magnitude mag = Σ|a||b|: the model plus the host's own rounding.
double element_allowance(const ErrorModel& m, double out_min_normal, double ref, double mag,
                         std::uint64_t k);

}  // namespace gpucheck::bench::verify_parts
