// The worker pool behind parallel_for. A region is cut into a few contiguous parts per thread,
// which the caller and the workers claim from one atomic word: a worker that the OS has not
// scheduled yet (a loaded machine, OpenBLAS's threads still spinning after a GEMM) costs its
// share of the work, not a wait for it. Idle workers spin briefly, then park on a condition
// variable, so back-to-back regions wake them without a syscall.
#include "backends/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
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
static_assert(std::uint64_t{kPartsPerThread} * kMaxThreads <= 0xFFFF, "parts must fit 16 bits");

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// True while this thread runs a part of some region; nested regions then run serially
// instead of deadlocking on the pool's mutex or oversubscribing the cores.
thread_local bool t_in_region = false;

// The claim word: generation (32 bits) | parts (16 bits) | next unclaimed part (16 bits).
struct Claim {
  std::uint32_t generation;
  std::uint32_t parts;
  std::uint32_t next;
  static Claim decode(std::uint64_t w) {
    return {static_cast<std::uint32_t>(w >> 32), static_cast<std::uint32_t>(w >> 16) & 0xFFFF,
            static_cast<std::uint32_t>(w) & 0xFFFF};
  }
  std::uint64_t encode() const {
    return (std::uint64_t{generation} << 32) | (std::uint64_t{parts} << 16) | next;
  }
};

}  // namespace

int resolve_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(threads, 1, kMaxThreads);
}

struct ThreadPool::State {
  std::mutex run_mutex;  // one region at a time
  // The current region, written by the caller before it publishes `claim` (release); a claimer
  // reads them only after a successful claim (acquire), and the caller rewrites them only after
  // every part is done.
  RangeFn fn = nullptr;
  void* ctx = nullptr;
  std::size_t n = 0;
  std::atomic<std::uint64_t> claim{0};
  // Bumped (under park_mutex) after each publication of `claim`; idle workers wait for it to
  // change. It starts at 0 before any worker exists, so a worker that first runs after some
  // publications still sees them.
  std::atomic<std::uint32_t> wake{0};
  std::mutex park_mutex;
  std::condition_variable park_cv;
  std::atomic<std::uint32_t> done{0};  // parts finished in the current region
  std::mutex done_mutex;
  std::condition_variable done_cv;
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::thread> workers;

  // Runs part `part` of `parts` over [0, n): the first n % parts parts are one longer.
  void run_part(std::size_t part, std::size_t parts) {
    const std::size_t base = n / parts, extra = n % parts;
    const std::size_t begin = part * base + std::min(part, extra);
    const std::size_t end = begin + base + (part < extra ? 1 : 0);
    t_in_region = true;
    try {
      fn(ctx, begin, end);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    t_in_region = false;
  }

  // Claims and runs parts of the current region until none is left.
  void work() {
    std::uint64_t w = claim.load(std::memory_order_acquire);
    for (;;) {
      const Claim c = Claim::decode(w);
      if (c.next >= c.parts) return;
      Claim mine = c;
      ++mine.next;
      if (!claim.compare_exchange_weak(w, mine.encode(), std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        continue;  // w now holds the current word
      run_part(c.next, c.parts);
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == c.parts) {
        std::lock_guard lock(done_mutex);  // orders the notify after a waiter's predicate check
        done_cv.notify_all();
      }
      w = claim.load(std::memory_order_acquire);
    }
  }

  // Publishes a new claim word and wakes the workers.
  void publish(std::uint64_t word) {
    claim.store(word, std::memory_order_release);
    {
      std::lock_guard lock(park_mutex);
      wake.fetch_add(1, std::memory_order_release);
    }
    park_cv.notify_all();
  }

  void worker_loop() {
    std::uint32_t seen = 0;
    for (;;) {
      for (int i = 0; i < kSpinIterations && wake.load(std::memory_order_acquire) == seen; ++i)
        cpu_relax();
      if (wake.load(std::memory_order_acquire) == seen) {
        std::unique_lock lock(park_mutex);
        park_cv.wait(lock, [&] { return wake.load(std::memory_order_acquire) != seen; });
      }
      seen = wake.load(std::memory_order_acquire);
      if (stop.load(std::memory_order_acquire)) return;
      work();
    }
  }
};

ThreadPool::ThreadPool(int threads)
    : threads_(resolve_threads(threads)), state_(std::make_unique<State>()) {
  state_->workers.reserve(static_cast<std::size_t>(threads_ - 1));
  for (int i = 1; i < threads_; ++i)
    state_->workers.emplace_back([s = state_.get()] { s->worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(state_->run_mutex);
    state_->stop.store(true, std::memory_order_release);
    Claim c = Claim::decode(state_->claim.load());
    ++c.generation;
    c.next = c.parts;  // nothing to claim
    state_->publish(c.encode());
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
  s.error = nullptr;
  s.done.store(0, std::memory_order_relaxed);
  Claim c = Claim::decode(s.claim.load(std::memory_order_relaxed));
  ++c.generation;
  c.parts = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      n, std::uint64_t{kPartsPerThread} * static_cast<std::uint64_t>(threads_)));
  c.next = 0;
  s.publish(c.encode());
  s.work();
  // Parts that workers claimed may still be running.
  auto all_done = [&] { return s.done.load(std::memory_order_acquire) == c.parts; };
  for (int i = 0; i < kSpinIterations && !all_done(); ++i) cpu_relax();
  if (!all_done()) {
    std::unique_lock wait_lock(s.done_mutex);
    s.done_cv.wait(wait_lock, all_done);
  }
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
