// Helpers every device implementation shares.
#include "backends/device.h"

#include <fmt/format.h>

#include <stdexcept>

namespace gpucheck {

void check_buffer_range(const DeviceBuffer& b, std::size_t offset, std::size_t bytes) {
  if (offset > b.bytes() || bytes > b.bytes() - offset)
    throw std::logic_error(
        fmt::format("bytes [{}, {}) outside a {}-byte buffer", offset, offset + bytes, b.bytes()));
}

}  // namespace gpucheck
