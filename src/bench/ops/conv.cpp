// conv (its pieces still live in the engine, the plan's JSON and bench's planning).
#include "bench/ops/op_unit.h"

namespace gpucheck::bench {

namespace conv_op {

namespace {

// The device's support depends on the layout too.
std::optional<std::string> refusal(const Cell& cell, Device& device) {
  return device.unsupported_reason(cell.op, cell.dtype, std::get<ConvShape>(cell.shape).layout);
}

}  // namespace

}  // namespace conv_op

OpUnit conv_unit() {
  OpUnit u;
  u.op = Op::kConv;
  u.in_default_plan = true;
  u.tunes_gemm = true;
  u.end_to_end = true;
  u.default_dtypes = {DType::kF32, DType::kTf32, DType::kF16, DType::kBf16};
  u.refusal = conv_op::refusal;
  return u;
}

}  // namespace gpucheck::bench
