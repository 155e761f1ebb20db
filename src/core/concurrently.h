// std::async's policy for reads that may run beside each other: each on its own thread, or,
// where no thread can be made (a container's pids limit), when its result is asked for, as
// libstdc++ falls back to deferred then instead of throwing.
#pragma once

#include <future>

namespace gpucheck {

inline constexpr std::launch kConcurrently = std::launch::async | std::launch::deferred;

}  // namespace gpucheck
