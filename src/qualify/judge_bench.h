// Verdicts of bench requirements: a record's throughput, time, speedup or fraction of the
// card's reference, with failed and mismatched records unmet.
#pragma once

#include "qualify/judge.h"

#include <vector>

namespace gpucheck::qualify {

std::vector<Verdict> judge_bench(const Requirement& r, const Observations& obs);

// False, with the verdict's outcome and reason set, when the record is not ok: failed,
// mismatch and unsupported are unmet, skipped is a skip.
bool judge_status(const nlohmann::json& rec, Verdict& v);

// min_fraction_of_limit: the record's limit.fraction against the requirement's floor; a skip
// naming the limit's reason when the record has none.
void judge_limit_fraction(const Requirement& r, const nlohmann::json& rec, Verdict& v);

// "gemm bf16 4096x4096x4096 (transfers excluded)"
std::string describe_cell(const Requirement& r);

}  // namespace gpucheck::qualify
