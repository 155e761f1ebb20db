// stress's tables for the human-readable views: one row per device and test with the verdict,
// and one row per failed check with its reason.
#pragma once

#include "report/view_model.h"

#include <nlohmann/json.hpp>

namespace gpucheck::report {

TableSection stress_table(const nlohmann::json& stress);
TableSection stress_reasons_table(const nlohmann::json& stress);

}  // namespace gpucheck::report
