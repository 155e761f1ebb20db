// allreduce (its pieces still live in the engine, the plan's JSON and bench's planning).
#include "bench/ops/op_unit.h"

namespace gpucheck::bench {

OpUnit allreduce_unit() {
  OpUnit u;
  u.op = Op::kAllreduce;
  u.group = true;
  return u;
}

}  // namespace gpucheck::bench
