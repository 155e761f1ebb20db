// Status names as they appear in JSON.
#include "core/status.h"

#include <array>
#include <utility>

namespace gpucheck {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 5> kNames{{
    {Status::kOk, "ok"},
    {Status::kUnsupported, "unsupported"},
    {Status::kSkipped, "skipped"},
    {Status::kFailed, "failed"},
    {Status::kMismatch, "mismatch"},
}};
}  // namespace

std::string_view to_string(Status s) {
  for (const auto& [st, name] : kNames)
    if (st == s) return name;
  return "failed";
}

std::optional<Status> status_from_string(std::string_view s) {
  for (const auto& [st, name] : kNames)
    if (name == s) return st;
  return std::nullopt;
}

}  // namespace gpucheck
