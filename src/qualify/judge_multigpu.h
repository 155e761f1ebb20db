// Verdicts of the requirements on the GPUs of a machine together: a peer copy per
// pair, an all-reduce's bus bandwidth, and how far a GPU may fall below its siblings.
#pragma once

#include "qualify/judge.h"

#include <vector>

namespace gpucheck::qualify {

std::vector<Verdict> judge_p2p(const Requirement& r, const Observations& obs);
std::vector<Verdict> judge_allreduce(const Requirement& r, const Observations& obs);
std::vector<Verdict> judge_siblings(const Requirement& r, const Observations& obs);

// The pairs a p2p requirement is about, among the CUDA devices here: its list, or every ordered
// pair (every unordered one, first < second, for a bidirectional copy).
std::vector<std::pair<std::string, std::string>> p2p_pairs(const Requirement& r,
                                                           const std::vector<DeviceFacts>& cuda);

}  // namespace gpucheck::qualify
