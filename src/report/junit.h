// JUnit XML (the Ant/Jenkins shape CI servers read) of a qualify document: one <testcase> per
// verdict, <failure> for unmet, <skipped/> for skip.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpucheck::report {

// The document must hold a "qualify" section; throws std::invalid_argument otherwise.
std::string render_junit(const nlohmann::json& doc);

}  // namespace gpucheck::report
