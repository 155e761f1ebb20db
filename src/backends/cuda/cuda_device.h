// A CUDA device as the bench engine sees it: own exp kernel, cuBLASLt GEMM, cuDNN conv, copies,
// empty-kernel latency, CUDA events for device time.
#pragma once

#include "backends/device.h"

#include <memory>
#include <string>

namespace gpucheck::cuda {

// Opens "cuda<N>"; nullptr for a name of another form. Throws when the driver is unusable or
// the index is out of range (the message says why).
std::unique_ptr<Device> make_cuda_device(const std::string& device_id,
                                         const DeviceOptions& options);

}  // namespace gpucheck::cuda

namespace gpucheck {
using cuda::make_cuda_device;
}  // namespace gpucheck
