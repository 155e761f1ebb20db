// The Vulkan bench device: compute shaders for exp, GEMM, conv (im2col + GEMM) and the empty
// launch, vkCmdCopyBuffer for copies, timestamp queries for device time where the queue has them.
#pragma once

#include "backends/device.h"

#include <memory>
#include <string>

namespace gpucheck::vulkan {

// The device "vulkanN" (the probe's numbering); nullptr when there is no such device. Throws
// when the loader, instance or device cannot be opened or the device lacks Vulkan 1.1.
std::unique_ptr<Device> make_vulkan_device(const std::string& device_id,
                                           const DeviceOptions& options);

}  // namespace gpucheck::vulkan
