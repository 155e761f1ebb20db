// Result comparisons for the GEMM stress test.
#include "stress/result_match.h"

#include "bench/verify.h"

#include <cmath>
#include <cstring>

namespace gpucheck::stress {

ElementDiff compare_bitwise(const void* reference, const void* got, std::size_t elements,
                            std::size_t element_bytes) {
  ElementDiff d;
  const std::size_t bytes = elements * element_bytes;
  const auto* r = static_cast<const unsigned char*>(reference);
  const auto* g = static_cast<const unsigned char*>(got);
  if (std::memcmp(r, g, bytes) == 0) return d;
  // Equal 4 KiB blocks are skipped whole; a differing one is walked element by element.
  constexpr std::size_t kBlock = 4096;
  const std::size_t block = kBlock - kBlock % element_bytes;
  for (std::size_t off = 0; off < bytes; off += block) {
    const std::size_t len = std::min(block, bytes - off);
    if (std::memcmp(r + off, g + off, len) == 0) continue;
    for (std::size_t e = off; e < off + len; e += element_bytes) {
      if (std::memcmp(r + e, g + e, element_bytes) == 0) continue;
      if (!d.first_index) d.first_index = e / element_bytes;
      ++d.count;
    }
  }
  return d;
}

ToleranceCompare::ToleranceCompare(const GemmShape& shape, const bench::HostBuffer& a,
                                   const bench::HostBuffer& b, DType compute)
    : shape_(shape), a_rows_(shape.m, 0.0), b_cols_(shape.n, 0.0) {
  const DType out = gemm_output_dtype(a.dtype());
  const auto model = bench::gemm_error_model(a.dtype(), out, compute, shape.k);
  out_ = model.out;
  prod_ = model.prod;
  floor_ = bench::min_normal(out);
  for (std::uint64_t i = 0; i < shape.m; ++i)
    for (std::uint64_t l = 0; l < shape.k; ++l) a_rows_[i] += std::pow(a.get(i * shape.k + l), 2);
  for (std::uint64_t l = 0; l < shape.k; ++l)
    for (std::uint64_t j = 0; j < shape.n; ++j) b_cols_[j] += std::pow(b.get(l * shape.n + j), 2);
  for (auto& v : a_rows_) v = std::sqrt(v);
  for (auto& v : b_cols_) v = std::sqrt(v);
}

ElementDiff ToleranceCompare::compare(const bench::HostBuffer& reference,
                                      const bench::HostBuffer& got) const {
  ElementDiff d;
  for (std::uint64_t i = 0; i < shape_.m; ++i)
    for (std::uint64_t j = 0; j < shape_.n; ++j) {
      const std::uint64_t e = i * shape_.n + j;
      const double r = reference.get(e), g = got.get(e);
      const double allow = 2 * (out_ * (std::fabs(r) + floor_) + prod_ * a_rows_[i] * b_cols_[j]);
      if (std::fabs(g - r) <= allow) continue;  // false for NaN: a mismatch
      if (!d.first_index) d.first_index = e;
      ++d.count;
    }
  return d;
}

}  // namespace gpucheck::stress
