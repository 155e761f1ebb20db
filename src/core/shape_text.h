// A result record's shape as people read it ("4096x4096x4096", "64 MiB h2d pinned").
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace gpucheck {

// The shape object of a result record (exp, GEMM, conv, copy, latency, seed loop) as one short
// text; an unknown shape prints as its JSON.
std::string shape_text(const nlohmann::json& shape);

}  // namespace gpucheck
