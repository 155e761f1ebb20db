// The worker pool behind parallel_for: C++20 atomic wait/notify (a futex on Linux) after a short
// spin, so back-to-back regions (benchmark repetitions) wake workers without a syscall.
#include "backends/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace gpucheck::cpu {

namespace {

// Spin iterations before parking; a pause is tens of cycles, so this is tens of microseconds.
constexpr int kSpinIterations = 4000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// True while this thread runs a range of some region; nested regions then run serially
// instead of deadlocking on the pool's mutex or oversubscribing the cores.
thread_local bool t_in_region = false;

// Range `part` of `parts` over [0, n): the first n % parts ranges are one longer.
std::pair<std::size_t, std::size_t> part_range(std::size_t n, std::size_t parts, std::size_t part) {
  const std::size_t base = n / parts, extra = n % parts;
  const std::size_t begin = part * base + std::min(part, extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

template <class T>
void wait_while_equal(const std::atomic<T>& a, T value) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (a.load(std::memory_order_acquire) != value) return;
    cpu_relax();
  }
  while (a.load(std::memory_order_acquire) == value) a.wait(value, std::memory_order_acquire);
}

}  // namespace

int resolve_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(threads, 1, kMaxThreads);
}

struct ThreadPool::State {
  std::mutex run_mutex;  // one region at a time
  // The current region; written by the caller before `generation` is bumped (release).
  RangeFn fn = nullptr;
  void* ctx = nullptr;
  std::size_t n = 0;
  std::size_t parts = 0;
  std::atomic<std::uint32_t> generation{0};
  std::atomic<int> pending{0};  // workers that have not yet finished the current region
  bool stop = false;            // published through `generation`
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::thread> workers;

  void run_part(std::size_t part) {
    if (part >= parts) return;
    const auto [b, e] = part_range(n, parts, part);
    t_in_region = true;
    try {
      fn(ctx, b, e);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    t_in_region = false;
  }

  void worker_loop(std::size_t part) {
    std::uint32_t seen = 0;
    for (;;) {
      wait_while_equal(generation, seen);
      seen = generation.load(std::memory_order_acquire);
      if (stop) return;
      run_part(part);
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) pending.notify_one();
    }
  }
};

ThreadPool::ThreadPool(int threads)
    : threads_(resolve_threads(threads)), state_(std::make_unique<State>()) {
  state_->workers.reserve(static_cast<std::size_t>(threads_ - 1));
  for (int i = 1; i < threads_; ++i)
    state_->workers.emplace_back(
        [s = state_.get(), i] { s->worker_loop(static_cast<std::size_t>(i)); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(state_->run_mutex);
    state_->stop = true;
    state_->generation.fetch_add(1, std::memory_order_release);
    state_->generation.notify_all();
  }
  for (auto& t : state_->workers) t.join();
}

void ThreadPool::run(std::size_t n, RangeFn fn, void* ctx) {
  if (n == 0) return;
  if (threads_ == 1 || n == 1 || t_in_region) {
    fn(ctx, 0, n);
    return;
  }
  State& s = *state_;
  std::lock_guard lock(s.run_mutex);
  s.fn = fn;
  s.ctx = ctx;
  s.n = n;
  s.parts = std::min(n, static_cast<std::size_t>(threads_));
  s.error = nullptr;
  // Every worker acknowledges every region, even one with no range, so none can miss a generation.
  s.pending.store(static_cast<int>(s.workers.size()), std::memory_order_relaxed);
  s.generation.fetch_add(1, std::memory_order_release);
  s.generation.notify_all();
  s.run_part(0);
  for (int p = s.pending.load(std::memory_order_acquire); p != 0;
       p = s.pending.load(std::memory_order_acquire))
    wait_while_equal(s.pending, p);
  if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
}

ThreadPool& shared_pool(int threads) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<ThreadPool>> pools;
  const int t = resolve_threads(threads);
  std::lock_guard lock(mutex);
  auto& pool = pools[t];
  if (!pool) pool = std::make_unique<ThreadPool>(t);
  return *pool;
}

}  // namespace gpucheck::cpu
