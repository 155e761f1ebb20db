// `report compare`: the result records of two bench documents matched by backend, device, op,
// impl, dtype, full shape and transfers, each pair judged SAME, REGRESSION or IMPROVEMENT.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::report {

struct CompareOptions {
  double tolerance = 0.05;       // relative
  bool match_by_name = false;    // devices by name, not UUID / PCI bus id
  bool fail_on_missing = false;  // a MISSING record fails like a regression
};

// "5%", "5 %", "0.05" → 0.05; nullopt for anything else or a negative value.
std::optional<double> parse_tolerance(std::string_view text);

// The "comparison" section without its base/new descriptions: tolerance, match, verdict,
// summary and one row per matched or unmatched record. A change counts when it is beyond
// max(tolerance, 2 × the two records' combined relative stddev), the stddev being that of
// each record's central value (the repetitions' stddev, at most median − min, / √reps).
nlohmann::json compare_results(const nlohmann::json& base_results,
                               const nlohmann::json& new_results, const CompareOptions& options);

// True when the comparison fails: a regression, or a missing record with fail_on_missing.
bool comparison_failed(const nlohmann::json& comparison);

}  // namespace gpucheck::report
