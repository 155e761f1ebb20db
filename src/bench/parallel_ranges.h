// Host work split over the hardware threads: input generation and the checks of large buffers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace gpucheck::bench {

// Runs body(begin, end) over [0, n) split in contiguous even-aligned ranges on the hardware
// threads (inline when small or when no thread can be started).
template <class F>
void parallel_ranges(std::size_t n, const F& body) {
  constexpr std::size_t kMinPerThread = std::size_t{1} << 16;
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t t = std::min<std::size_t>({hw, 64, (n + kMinPerThread - 1) / kMinPerThread});
  if (t <= 1) {
    body(std::size_t{0}, n);
    return;
  }
  std::size_t chunk = (n + t - 1) / t;
  chunk += chunk & 1u;  // even, so a Box–Muller pair never straddles two ranges
  std::vector<std::thread> threads;
  std::size_t begin = chunk;  // the caller takes [0, chunk)
  try {
    for (; begin < n; begin += chunk) {
      const std::size_t end = std::min(n, begin + chunk);
      threads.emplace_back([&body, begin, end] { body(begin, end); });
    }
  } catch (const std::system_error&) {
    // No more threads: the caller does the rest itself below.
  }
  body(0, std::min(n, chunk));
  for (std::size_t b = begin; b < n; b += chunk) body(b, std::min(n, b + chunk));
  for (auto& th : threads) th.join();
}

}  // namespace gpucheck::bench
