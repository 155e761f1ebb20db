// Host work split over the hardware threads: input generation, the checks of large buffers and
// the staged copies' memcpy (core/parallel_copy.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace gpucheck {

// How [0, n) may be split: ranges of at least min_per_range items, at most max_ranges of them
// (and no more than the hardware threads), each a multiple of `align` items but the last.
// Converts from a bare minimum, the form most callers need.
struct Split {
  constexpr Split(std::size_t min = std::size_t{1} << 16,  // NOLINT(google-explicit-constructor)
                  std::size_t max = 64, std::size_t alignment = 2)
      : min_per_range(std::max<std::size_t>(min, 1)),
        max_ranges(std::max<std::size_t>(max, 1)),
        align(std::max<std::size_t>(alignment, 1)) {}
  std::size_t min_per_range;
  std::size_t max_ranges;
  std::size_t align;  // 2 by default, so a Box–Muller pair never straddles two ranges
};

// The contiguous ranges parallel_ranges splits [0, n) into: one per hardware thread within the
// split's bounds; one range when n is small.
inline std::vector<std::pair<std::size_t, std::size_t>> split_ranges(std::size_t n, Split s = {}) {
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t t = std::max<std::size_t>(
      1, std::min<std::size_t>({hw, s.max_ranges, (n + s.min_per_range - 1) / s.min_per_range}));
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  if (n == 0 || t == 1) {
    ranges.emplace_back(0, n);
    return ranges;
  }
  std::size_t chunk = (n + t - 1) / t;
  chunk = (chunk + s.align - 1) / s.align * s.align;
  for (std::size_t begin = 0; begin < n; begin += chunk)
    ranges.emplace_back(begin, std::min(n, begin + chunk));
  return ranges;
}

// Runs body(r, begin, end) for each range r of split_ranges(n, split) on its own thread
// (the caller takes range 0; inline when there is one range or no thread can be started). The
// first exception a range throws is rethrown here once every range has ended.
template <class F>
void parallel_indexed_ranges(std::size_t n, Split split, const F& body) {
  const auto ranges = split_ranges(n, split);
  if (ranges.size() == 1) {
    body(std::size_t{0}, ranges[0].first, ranges[0].second);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run = [&](std::size_t r) {
    try {
      body(r, ranges[r].first, ranges[r].second);
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  std::size_t started = 1;  // range 0 is the caller's
  try {
    for (; started < ranges.size(); ++started) threads.emplace_back(run, started);
  } catch (const std::system_error&) {
    // No more threads: the caller does the rest itself below.
  }
  run(0);
  for (std::size_t r = started; r < ranges.size(); ++r) run(r);
  for (auto& th : threads) th.join();
  if (failure) std::rethrow_exception(failure);
}

// Runs body(begin, end) over [0, n) in the ranges of split_ranges(n, split).
template <class F>
void parallel_ranges(std::size_t n, const F& body, Split split = {}) {
  parallel_indexed_ranges(
      n, split, [&body](std::size_t, std::size_t begin, std::size_t end) { body(begin, end); });
}

}  // namespace gpucheck
