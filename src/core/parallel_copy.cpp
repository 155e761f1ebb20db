#include "core/parallel_copy.h"

#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

namespace gpucheck {

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t pieces = std::min<std::size_t>(
      {kParallelCopyThreads, hw, std::max<std::size_t>(1, bytes / (kParallelCopyMin / 2))});
  if (bytes < kParallelCopyMin || pieces <= 1) {
    if (bytes != 0) std::memcpy(dst, src, bytes);
    return;
  }
  // Pieces of whole 4 KiB pages, the last taking the rest.
  const std::size_t piece = (bytes / pieces) & ~std::size_t{4095};
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  auto copy_piece = [&](std::size_t i) {
    const std::size_t begin = i * piece;
    const std::size_t end = i + 1 == pieces ? bytes : begin + piece;
    std::memcpy(d + begin, s + begin, end - begin);
  };
  std::vector<std::thread> threads;
  std::size_t started = 1;  // piece 0 is the caller's
  try {
    for (; started < pieces; ++started) threads.emplace_back(copy_piece, started);
  } catch (const std::system_error&) {
    // No more threads: the caller copies what is left.
  }
  copy_piece(0);
  for (std::size_t i = started; i < pieces; ++i) copy_piece(i);
  for (auto& t : threads) t.join();
}

}  // namespace gpucheck
