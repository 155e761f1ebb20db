// node-feature-discovery's local feature file (nfd-worker's features.d): doctor's verdict and
// each check's status as node labels, with an expiry so labels of a checker that stopped
// running are dropped instead of advertising an old PASS.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace gpucheck::report {

// NFD's own namespace, written out: unprefixed names are prefixed with it today, but NFD
// deprecates relying on that.
inline constexpr std::string_view kNfdLabelPrefix = "feature.node.kubernetes.io/";

// A Kubernetes label name (the part after the prefix) or value: at most 63 characters of
// [A-Za-z0-9._-], beginning and ending with a letter or digit; a name is never empty.
bool valid_nfd_label_name(std::string_view name);

// The file for a doctor document: "# +expiry-time=T" (RFC 3339, UTC) first (NFD applies it to the
// lines after it), then gpucheck.health=pass|warn|fail and gpucheck.check.<id>=pass|warn|fail|skip.
// An unhealthy verdict is fail; a verdict not reached (a check unanswered) is warn, never pass;
// INFO is pass; an unanswered check is skip.
std::string render_nfd_features(const nlohmann::json& doc,
                                std::chrono::system_clock::time_point expiry);

}  // namespace gpucheck::report
