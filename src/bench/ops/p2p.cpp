// p2p (its pieces still live in the engine, the plan's JSON and bench's planning).
#include "bench/ops/op_unit.h"

namespace gpucheck::bench {

OpUnit p2p_unit() {
  OpUnit u;
  u.op = Op::kP2p;
  u.group = true;
  return u;
}

}  // namespace gpucheck::bench
