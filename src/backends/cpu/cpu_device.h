// The CPU as a bench device: host buffers, OpenBLAS GEMM, vectorised exp, im2col conv.
#pragma once

#include "backends/device.h"

#include <memory>

namespace gpucheck {

std::unique_ptr<Device> make_cpu_device(const DeviceOptions& options);

}  // namespace gpucheck
