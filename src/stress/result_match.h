// Element-by-element comparison of a GEMM result with the first result of the same inputs:
// bit for bit where the library is reproducible, else within twice the dtype's error model.
#pragma once

#include "bench/inputs.h"
#include "core/workload.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gpucheck::stress {

struct ElementDiff {
  std::uint64_t count = 0;
  std::optional<std::uint64_t> first_index;
};

// Elements of `element_bytes` each whose bytes differ.
ElementDiff compare_bitwise(const void* reference, const void* got, std::size_t elements,
                            std::size_t element_bytes);

// For libraries whose results may differ in rounding from run to run: two results of C = A·B,
// each within the error model of float64's, differ by at most twice its allowance, with Σ|a||b|
// bounded by ‖a_i‖₂·‖b_:j‖₂ (Cauchy–Schwarz). A NaN is always a mismatch.
class ToleranceCompare {
 public:
  ToleranceCompare(const GemmShape& shape, const bench::HostBuffer& a, const bench::HostBuffer& b,
                   DType compute);
  ElementDiff compare(const bench::HostBuffer& reference, const bench::HostBuffer& got) const;

 private:
  GemmShape shape_;
  double out_ = 0, prod_ = 0, floor_ = 0;
  std::vector<double> a_rows_, b_cols_;
};

}  // namespace gpucheck::stress
