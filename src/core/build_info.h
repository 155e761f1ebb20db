// What this binary was built with: the backends compiled in, and those that are not.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpucheck {

// Names of the backends compiled into this binary, in probe order (core/backend_descriptors.h).
std::vector<std::string> built_backend_names();

// Backends that exist on every platform's report but are not built here, with the reason.
std::vector<std::pair<std::string, std::string>> not_built_backends();

}  // namespace gpucheck
