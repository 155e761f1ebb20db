// Host work split over the hardware threads: input generation and the checks of large buffers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace gpucheck::bench {

// The contiguous, even-aligned ranges parallel_ranges splits [0, n) into: one per hardware
// thread (at most 64), each at least min_per_range items, one range when n is small.
inline std::vector<std::pair<std::size_t, std::size_t>> split_ranges(
    std::size_t n, std::size_t min_per_range = std::size_t{1} << 16) {
  min_per_range = std::max<std::size_t>(min_per_range, 1);
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t t = std::max<std::size_t>(
      1, std::min<std::size_t>({hw, 64, (n + min_per_range - 1) / min_per_range}));
  std::size_t chunk = (n + t - 1) / t;
  chunk += chunk & 1u;  // even, so a Box–Muller pair never straddles two ranges
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  if (n == 0 || t == 1) {
    ranges.emplace_back(0, n);
    return ranges;
  }
  for (std::size_t begin = 0; begin < n; begin += chunk)
    ranges.emplace_back(begin, std::min(n, begin + chunk));
  return ranges;
}

// Runs body(r, begin, end) for each range r of split_ranges(n, min_per_range) on its own thread
// (the caller takes range 0; inline when there is one range or no thread can be started). The
// first exception a range throws is rethrown here once every range has ended.
template <class F>
void parallel_indexed_ranges(std::size_t n, std::size_t min_per_range, const F& body) {
  const auto ranges = split_ranges(n, min_per_range);
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

// Runs body(begin, end) over [0, n) in the ranges of split_ranges(n, min_per_range).
template <class F>
void parallel_ranges(std::size_t n, const F& body,
                     std::size_t min_per_range = std::size_t{1} << 16) {
  parallel_indexed_ranges(
      n, min_per_range,
      [&body](std::size_t, std::size_t begin, std::size_t end) { body(begin, end); });
}

}  // namespace gpucheck::bench
