// The CUDA backend: driver diagnosis, deviceQuery-grade probe with NVML, and bench devices.
#pragma once

#include "backends/backend.h"

#include <memory>

namespace gpucheck {

std::unique_ptr<Backend> make_cuda_backend();

}  // namespace gpucheck
