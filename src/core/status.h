// The status every result record and backend section carries.
#pragma once

#include <optional>
#include <string_view>

namespace gpucheck {

enum class Status { kOk, kUnsupported, kSkipped, kFailed, kMismatch };

std::string_view to_string(Status s);
std::optional<Status> status_from_string(std::string_view s);

}  // namespace gpucheck
