// Verdicts of an infiniband requirement: each enabled port of the link layer active at the
// profile's rate, and enough such ports, from the probe's infiniband section.
#pragma once

#include "qualify/judge.h"

#include <vector>

namespace gpucheck::qualify {

std::vector<Verdict> judge_infiniband(const Requirement& r, const Observations& obs);

}  // namespace gpucheck::qualify
