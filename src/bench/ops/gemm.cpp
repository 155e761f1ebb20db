// gemm (its pieces still live in the engine, the plan's JSON and bench's planning).
#include "bench/ops/op_unit.h"

namespace gpucheck::bench {

OpUnit gemm_unit() {
  OpUnit u;
  u.op = Op::kGemm;
  u.in_default_plan = true;
  u.tunes_gemm = true;
  u.end_to_end = true;
  u.default_dtypes = {DType::kF32, DType::kTf32, DType::kF16, DType::kBf16, DType::kF64};
  return u;
}

}  // namespace gpucheck::bench
