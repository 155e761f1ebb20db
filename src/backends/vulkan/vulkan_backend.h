// The Vulkan backend as the registry sees it: the loader and every driver are opened at run time.
#pragma once

#include "backends/backend.h"

#include <memory>

namespace gpucheck {

std::unique_ptr<Backend> make_vulkan_backend();

}  // namespace gpucheck
