// A probe child's own step times, {step: seconds}, under this key of its section: the parent
// logs them at -v and drops the key, so no document carries them.
#pragma once

#include <string_view>

namespace gpucheck {

inline constexpr std::string_view kProbeStepsKey = "probe_steps";

}  // namespace gpucheck
