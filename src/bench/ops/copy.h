// What stress uses of copy's unit (bench/ops/copy.cpp).
#pragma once

#include "backends/device.h"

#include <string>

namespace gpucheck::bench {

// The impl a copy record of the device names (copies carry no dtype: the device is asked for f32).
std::string copy_impl(const Device& device);

}  // namespace gpucheck::bench
