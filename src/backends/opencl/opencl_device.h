// The OpenCL bench device: own exp and im2col kernels (kernels/*.cl), CLBlast GEMM, copies
// through pinned (CL_MEM_ALLOC_HOST_PTR, mapped) or pageable host memory.
#pragma once

#include "backends/device.h"

#include <memory>
#include <string>

namespace gpucheck::opencl {

// The device "openclN" (the probe's flat index over all platforms); nullptr when there is no
// such device. Throws when the loader cannot be opened or lacks the entry points bench needs.
std::unique_ptr<Device> make_opencl_device(const std::string& device_id,
                                           const DeviceOptions& options);

}  // namespace gpucheck::opencl
