// The CPU as a backend: always available, the baseline every device is compared against.
#pragma once

#include "backends/backend.h"

#include <memory>

namespace gpucheck {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace gpucheck
