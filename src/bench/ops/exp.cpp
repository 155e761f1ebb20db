// exp (its pieces still live in the engine, the plan's JSON and bench's planning).
#include "bench/ops/op_unit.h"

namespace gpucheck::bench {

OpUnit exp_unit() {
  OpUnit u;
  u.op = Op::kExp;
  u.in_default_plan = true;
  u.computes_in_dtype = true;
  u.end_to_end = true;
  u.default_dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBf16};
  return u;
}

}  // namespace gpucheck::bench
