// Names of the bench vocabulary as they appear on the command line and in JSON.
#include "core/workload.h"

#include <array>
#include <utility>

namespace gpucheck {

namespace {

template <typename E, std::size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

constexpr NameTable<Op, 8> kOps{{{Op::kExp, "exp"},
                                 {Op::kGemm, "gemm"},
                                 {Op::kConv, "conv"},
                                 {Op::kCopy, "copy"},
                                 {Op::kLatency, "latency"},
                                 {Op::kSeedloop, "seedloop"},
                                 {Op::kP2p, "p2p"},
                                 {Op::kAllreduce, "allreduce"}}};
constexpr NameTable<DType, 6> kDTypes{{{DType::kF32, "f32"},
                                       {DType::kTf32, "tf32"},
                                       {DType::kF16, "f16"},
                                       {DType::kBf16, "bf16"},
                                       {DType::kF64, "f64"},
                                       {DType::kFp8, "fp8"}}};
constexpr NameTable<Layout, 2> kLayouts{{{Layout::kNchw, "nchw"}, {Layout::kNhwc, "nhwc"}}};
constexpr NameTable<Direction, 5> kDirections{{{Direction::kH2d, "h2d"},
                                               {Direction::kD2h, "d2h"},
                                               {Direction::kD2d, "d2d"},
                                               {Direction::kH2h, "h2h"},
                                               {Direction::kBoth, "both"}}};
constexpr NameTable<HostMemory, 2> kHostMemory{
    {{HostMemory::kPinned, "pinned"}, {HostMemory::kPageable, "pageable"}}};
constexpr NameTable<Transfers, 2> kTransfers{
    {{Transfers::kExcluded, "excluded"}, {Transfers::kIncluded, "included"}}};

template <typename E, std::size_t N>
std::string_view name_of(const NameTable<E, N>& t, E v) {
  for (const auto& [e, name] : t)
    if (e == v) return name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse(const NameTable<E, N>& t, std::string_view s) {
  for (const auto& [e, name] : t)
    if (name == s) return e;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Op v) {
  return name_of(kOps, v);
}
std::string_view to_string(DType v) {
  return name_of(kDTypes, v);
}
std::string_view to_string(Layout v) {
  return name_of(kLayouts, v);
}
std::string_view to_string(Direction v) {
  return name_of(kDirections, v);
}
std::string_view to_string(HostMemory v) {
  return name_of(kHostMemory, v);
}
std::string_view to_string(Transfers v) {
  return name_of(kTransfers, v);
}
std::optional<Op> op_from_string(std::string_view s) {
  return parse(kOps, s);
}

bool runs_between_devices(Op op) {
  return op == Op::kP2p || op == Op::kAllreduce;
}

std::optional<DType> dtype_from_string(std::string_view s) {
  return parse(kDTypes, s);
}
std::optional<Layout> layout_from_string(std::string_view s) {
  return parse(kLayouts, s);
}

std::size_t element_size(DType d) {
  switch (d) {
    case DType::kFp8:
      return 1;
    case DType::kF16:
    case DType::kBf16:
      return 2;
    case DType::kF64:
      return 8;
    case DType::kF32:
    case DType::kTf32:
      return 4;
  }
  return 4;
}

DType gemm_output_dtype(DType in) {
  return in == DType::kFp8 ? DType::kBf16 : in;
}

bool gemm_b_k_major(DType in) {
  return in == DType::kFp8;
}

}  // namespace gpucheck
