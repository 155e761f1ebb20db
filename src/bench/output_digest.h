// A 64-bit digest of a result's bytes, so a result bit for bit the same as one already checked
// in float64 is known to be so without checking it again (bench/engine.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpucheck::bench {

// Not cryptographic: it tells apart outputs that differ by accident (a wrong element, a poison
// left, a planted error), which is all a benchmark's own result can do. The same bytes give
// the same digest however many threads share the work.
std::uint64_t output_digest(const void* data, std::size_t bytes);

}  // namespace gpucheck::bench
