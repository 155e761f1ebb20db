// memcpy of a large buffer on several threads: one core's memcpy (about 10 GB/s) is slower than
// a PCIe Gen5 x16 link, so a copy staged through host memory in one thread cannot reach the link.
#pragma once

#include <cstddef>

namespace gpucheck {

// Copies `bytes` from src to dst (not overlapping). From kParallelCopyMin bytes up, in
// contiguous pieces on up to kParallelCopyThreads threads (fewer where fewer hardware threads
// or none can be started); below it, one memcpy.
void parallel_copy(void* dst, const void* src, std::size_t bytes);

inline constexpr std::size_t kParallelCopyMin = std::size_t{16} << 20;
inline constexpr unsigned kParallelCopyThreads = 8;

}  // namespace gpucheck
