// The gpucheck/1 JSON document: every command's output starts as one of these.
#pragma once

#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace gpucheck {

// {"schema": "gpucheck/1", "command": ..., "provenance": {...}}; sections are added by commands.
nlohmann::json make_document(const std::string& command, const std::vector<std::string>& argv,
                             const EnvMap& env);

// Now, in UTC: "2025-11-26T11:07:00Z".
std::string utc_timestamp();

// Provenance: gpucheck version and commit, UTC time, argv, the GPU-relevant environment
// variables (set ones only) and the backends built.
nlohmann::json make_provenance(const std::vector<std::string>& argv, const EnvMap& env);

// That instant, in UTC as RFC 3339 ("2026-11-29T23:00:00Z"): expiry times, not just now.
std::string utc_timestamp(std::chrono::system_clock::time_point t);

}  // namespace gpucheck
