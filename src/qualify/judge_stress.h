// Verdicts of the stress requirement: per device of the stress run, the checks that
// no profile may waive (started, Xid, ECC, row remaps), the errors allowed, the temperature, the
// clocks-event reasons allowed, and the sustained GEMM against the card's measured reference.
#pragma once

#include "qualify/judge.h"

#include <vector>

namespace gpucheck::qualify {

std::vector<Verdict> judge_stress(const Requirement& r, const Observations& obs);

}  // namespace gpucheck::qualify
