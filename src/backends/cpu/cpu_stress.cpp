// Checksums and memory-test passes over host memory, split over the thread pool in page-sized
// blocks. Each block keeps its own count and lowest bad index; they are merged under a mutex
// once per block, so the inner loops stay free of atomics and vectorise.
#include "backends/cpu/cpu_stress.h"

#include "backends/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>

namespace gpucheck::cpu {

namespace sm = stress_math;

namespace {

constexpr std::size_t kBlockWords = 4096 / 8 * 64;  // 256 KiB per block
constexpr std::size_t kMinParallelWords = std::size_t{1} << 15;

int threads_for(std::size_t n, int threads) {
  return n < kMinParallelWords ? 1 : threads;
}

// One pass over words [b, e), with the pattern kinds fixed at compile time so that the loop
// holds no switch.
template <sm::PatternKind Check, sm::PatternKind Write>
void pass_range(std::uint64_t* w, std::size_t b, std::size_t e, std::uint64_t first,
                std::uint64_t check_param, std::uint64_t write_param, std::uint64_t& bad,
                std::uint64_t& lowest) {
  std::uint64_t count = 0;
  std::uint64_t low = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = b; i < e; ++i) {
    const std::uint64_t index = first + i;
    if constexpr (Check != sm::PatternKind::kNone) {
      const std::uint64_t expect = sm::pattern_value(Check, check_param, index);
      if (w[i] != expect) {
        ++count;
        low = std::min(low, index);
      }
    }
    if constexpr (Write != sm::PatternKind::kNone)
      w[i] = sm::pattern_value(Write, write_param, index);
  }
  bad = count;
  lowest = low;
}

using PassFn = void (*)(std::uint64_t*, std::size_t, std::size_t, std::uint64_t, std::uint64_t,
                        std::uint64_t, std::uint64_t&, std::uint64_t&);

template <sm::PatternKind Check, sm::PatternKind Write>
struct PassTable {
  static constexpr PassFn value = pass_range<Check, Write>;
};

}  // namespace

std::uint64_t checksum_words(const std::uint64_t* words, std::size_t n, int threads) {
  std::atomic<std::uint64_t> total{0};
  const std::size_t blocks = (n + kBlockWords - 1) / kBlockWords;
  parallel_for(blocks, threads_for(n, threads), [&](std::size_t b, std::size_t e) {
    std::uint64_t sum = 0;
    const std::size_t end = std::min(e * kBlockWords, n);
    for (std::size_t i = b * kBlockWords; i < end; ++i) sum += sm::checksum_term(words[i], i);
    total.fetch_add(sum, std::memory_order_relaxed);  // wraps modulo 2^64, as the sum should
  });
  return total.load();
}

void memtest_words(std::uint64_t* words, std::size_t n, std::uint64_t first_word, MemPattern check,
                   MemPattern write, std::uint64_t result[2], int threads) {
  const PassFn fn = sm::pick_pass<PassTable>(check.kind, write.kind);
  std::mutex mu;
  const std::size_t blocks = (n + kBlockWords - 1) / kBlockWords;
  parallel_for(blocks, threads_for(n, threads), [&](std::size_t b, std::size_t e) {
    std::uint64_t bad = 0, lowest = 0;
    fn(words, b * kBlockWords, std::min(e * kBlockWords, n), first_word, check.param, write.param,
       bad, lowest);
    if (bad == 0) return;
    std::lock_guard lock(mu);
    result[0] += bad;
    result[1] = std::min(result[1], lowest);
  });
}

}  // namespace gpucheck::cpu
