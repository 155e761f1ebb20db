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
// kFp8: OCP FP8 E4M3 ("e4m3fn": no infinities, NaN 0x7F/0xFF, largest finite ±448), a GEMM
// input type only: its GEMM writes bf16 (gemm_output_dtype) and reads B K-major (gemm_b_k_major).
enum class DType { kF32, kTf32, kF16, kBf16, kF64, kFp8 };
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
// Whether the op runs between the devices of a group, never on one: for the layers below bench
// (a backend's refusal) and the views that read records without it (bench's unit says the same
// as OpUnit::group, and its test holds the two together).
bool runs_between_devices(Op op);
std::optional<DType> dtype_from_string(std::string_view s);
std::optional<Layout> layout_from_string(std::string_view s);

// Bytes one element of the dtype occupies in memory (tf32 is stored as f32).
std::size_t element_size(DType d);

// The dtype a GEMM of `in` writes C in: bf16 for fp8 (cuBLASLt's FP8 path, f32 accumulation,
// bf16 output, as torch._scaled_mm's out_dtype=bf16), else `in` itself.
DType gemm_output_dtype(DType in);
// True where a GEMM of `in` reads B K-major, as Bᵀ[n×k] row-major (B column-major): fp8, whose
// tensor cores take both operands K-major (cuBLASLt's "TN" rule for FP8; torch._scaled_mm asks
// the same of its second operand). A stays m×k row-major, which is K-major already.
bool gemm_b_k_major(DType in);

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
