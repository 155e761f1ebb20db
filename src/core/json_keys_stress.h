// The keys of a stress record's throughput that say how the load began, beside core/json_keys.h
// in the same namespace: the first half second's rate, its actual length (to the first report
// after it) and the sustained rate over it.
#pragma once

#include "core/json_keys.h"

namespace gpucheck::keys {

inline constexpr K kBurst = "burst";
inline constexpr K kBurstS = "burst_s";
inline constexpr K kSustainedOverBurst = "sustained_over_burst";

}  // namespace gpucheck::keys
