// stress's tables for the human-readable views: one row per device and test with the verdict,
// and one row per failed check with its reason.
#pragma once

#include "report/text_view.h"
#include "report/view_model.h"

#include <nlohmann/json.hpp>

namespace gpucheck::report {

TableSection stress_table(const nlohmann::json& stress);
TableSection stress_reasons_table(const nlohmann::json& stress);

// The terminal's view of a stress document: one row per device and test, the verdict first,
// a failed device's reasons under it, and the closing verdict line.
void stress_view(TextView& view, const nlohmann::json& doc, const ViewOptions& o);

}  // namespace gpucheck::report
