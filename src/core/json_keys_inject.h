// The key only doctor --inject writes, beside core/json_keys.h in the same namespace: the faults
// injected (a list at the top of the document) and a check's result it made up (true).
#pragma once

#include "core/json_keys.h"

namespace gpucheck::keys {

inline constexpr K kInjected = "injected";

}  // namespace gpucheck::keys
