// copy (its pieces still live in the engine, the plan's JSON and bench's planning).
#include "bench/ops/op_unit.h"

namespace gpucheck::bench {

OpUnit copy_unit() {
  OpUnit u;
  u.op = Op::kCopy;
  u.in_default_plan = true;
  u.has_dtype = false;
  return u;
}

}  // namespace gpucheck::bench
