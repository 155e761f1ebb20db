// The workload vocabulary shared by backends, bench, qualify and report: operation, element
// type, layout, shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace gpucheck {

// kP2p and kAllreduce run between devices (a group of CUDA devices in one child), never on one.
enum class Op { kExp, kGemm, kConv, kCopy, kLatency, kSeedloop, kP2p, kAllreduce };
enum class DType { kF32, kTf32, kF16, kBf16, kF64 };
enum class Layout { kNchw, kNhwc };
// kBoth: pinned host-to-device and device-to-host copies at once, on queues of their own.
enum class Direction { kH2d, kD2h, kD2d, kH2h, kBoth };
enum class HostMemory { kPinned, kPageable };
enum class Transfers { kExcluded, kIncluded };

std::string_view to_string(Op v);
std::string_view to_string(DType v);
std::string_view to_string(Layout v);
std::string_view to_string(Direction v);
std::string_view to_string(HostMemory v);
std::string_view to_string(Transfers v);
std::optional<Op> op_from_string(std::string_view s);
std::optional<DType> dtype_from_string(std::string_view s);
std::optional<Layout> layout_from_string(std::string_view s);

// Ops that run between several devices rather than on one.
bool is_group_op(Op op);

// Bytes one element of the dtype occupies in memory (tf32 is stored as f32).
std::size_t element_size(DType d);

struct ExpShape {
  std::uint64_t n = 0;
};
struct GemmShape {
  std::uint64_t m = 0, n = 0, k = 0;  // C[m×n] = A[m×k] · B[k×n], row-major
};
struct ConvShape {
  std::uint64_t n = 0, c = 0, h = 0, w = 0;  // input N×C×H×W
  std::uint64_t k = 0, r = 0, s = 0;         // K filters of C×R×S
  std::uint64_t stride = 1, pad = 0;
  Layout layout = Layout::kNchw;
  std::uint64_t p() const { return (h + 2 * pad - r) / stride + 1; }  // output height
  std::uint64_t q() const { return (w + 2 * pad - s) / stride + 1; }  // output width
};
struct CopyShape {
  std::uint64_t bytes = 0;
  Direction direction = Direction::kH2h;
  HostMemory host_memory = HostMemory::kPageable;
};

}  // namespace gpucheck
