// The OpenCL backend as the registry sees it: the loader and every ICD are opened at run time.
#pragma once

#include "backends/backend.h"

#include <memory>

namespace gpucheck {

std::unique_ptr<Backend> make_opencl_backend();

}  // namespace gpucheck
