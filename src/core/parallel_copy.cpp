#include "core/parallel_copy.h"

#include "core/parallel_ranges.h"

#include <cstring>

namespace gpucheck {

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes < kParallelCopyMin) {
    if (bytes != 0) std::memcpy(dst, src, bytes);
    return;
  }
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // Pieces of whole 4 KiB pages (the last takes the rest), at least half the minimum each.
  parallel_ranges(
      bytes,
      [&](std::size_t begin, std::size_t end) { std::memcpy(d + begin, s + begin, end - begin); },
      Split(kParallelCopyMin / 2, kParallelCopyThreads, 4096));
}

}  // namespace gpucheck
