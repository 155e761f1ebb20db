// The backends compiled into this binary, from the table of backends.
#include "core/build_info.h"

#include "core/backend_descriptors.h"

namespace gpucheck {

std::vector<std::string> built_backend_names() {
  std::vector<std::string> names;
  for (const auto& b : backend_descriptors())
    if (b.built) names.emplace_back(b.name);
  return names;
}

std::vector<std::pair<std::string, std::string>> not_built_backends() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& b : backend_descriptors())
    if (!b.built) out.emplace_back(b.name, b.not_built_reason);
  return out;
}

}  // namespace gpucheck
