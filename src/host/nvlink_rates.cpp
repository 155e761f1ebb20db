// NVLink error rates written as people read them.
#include "host/nvlink_rates.h"

#include <fmt/format.h>

namespace gpucheck::host {

std::string rate_text(double per_s) {
  if (per_s >= 10) return fmt::format("{:.0f}", per_s);
  if (per_s > 0 && per_s < 0.1) return fmt::format("{:.2g}", per_s);
  return fmt::format("{:.1f}", per_s);
}

}  // namespace gpucheck::host
