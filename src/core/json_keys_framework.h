// The keys only bench's framework records write (record.framework, record.vs_gpucheck), beside
// core/json_keys.h in the same namespace.
#pragma once

#include "core/json_keys.h"

namespace gpucheck::keys {

inline constexpr K kFramework = "framework";
inline constexpr K kInterpreter = "interpreter";
inline constexpr K kSettings = "settings";
inline constexpr K kPython = "python";
inline constexpr K kVsGpucheck = "vs_gpucheck";
inline constexpr K kRatio = "ratio";
inline constexpr K kFoundIn = "found_in";
inline constexpr K kBf16GemmAccumulation = "bf16_gemm_accumulation";

}  // namespace gpucheck::keys
