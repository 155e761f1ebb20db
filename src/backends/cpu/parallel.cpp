// The worker pool behind parallel_for. A region is cut into a few contiguous parts per thread;
// each participant owns a slice of them (the same slice in every region of the same size, so
// repeated calls on the same data find it in that core's cache) and, once its slice is done,
// claims what is left of the others'. A participant that the OS has not scheduled yet (a loaded
// machine, OpenBLAS's threads still spinning after a GEMM) therefore costs its share of the work,
// not a wait for it. Idle workers spin briefly, then park on a condition variable, so
// back-to-back regions wake them without a syscall.
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

constexpr std::uint64_t slice_word(std::uint32_t generation, std::uint32_t end,
                                   std::uint32_t next) {
  return (std::uint64_t{generation} << 32) | (std::uint64_t{end} << 16) | next;
}

}  // namespace

// Named, not anonymous: ThreadPool::State (a member type, so external linkage) holds these, and a
// member of an anonymous-namespace type would give it internal linkage in a unity build.
namespace pool_detail {

// A participant's claim word, alone on its cache line: the region's generation (32 bits), the end
// of the participant's slice (16 bits) and its next unclaimed part (16 bits). The generation makes
// a claim by a worker that woke for an earlier region fail instead of taking a part of this one.
struct alignas(64) Slice {
  std::atomic<std::uint64_t> word{0};
};

}  // namespace pool_detail

int resolve_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(threads, 1, kMaxThreads);
}

struct ThreadPool::State {
  using Slice = pool_detail::Slice;
  explicit State(int threads) : slices(static_cast<std::size_t>(threads)) {}

  std::mutex run_mutex;  // one region at a time
  // The current region. The caller writes them before it publishes the slices (release); a
  // participant reads them only after a successful claim (acquire), and the caller rewrites them
  // only after every part is done.
  RangeFn fn = nullptr;
  void* ctx = nullptr;
  std::size_t n = 0;
  std::size_t parts = 0;
  std::vector<Slice> slices;  // one per participant; the caller is participant 0
  // The generation of the latest region, stored (under park_mutex) after its slices; idle workers
  // wait for it to change. It starts at 0 before any worker exists, so a worker that first runs
  // after some regions still sees the latest.
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
  void run_part(std::size_t part) {
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

  // Claims the next part of `slice` in region `generation`; false when the slice is used up or
  // the region is over.
  bool claim(Slice& slice, std::uint32_t generation, std::uint32_t& part) {
    std::uint64_t w = slice.word.load(std::memory_order_acquire);
    for (;;) {
      const auto next = static_cast<std::uint32_t>(w & 0xFFFF);
      const auto end = static_cast<std::uint32_t>((w >> 16) & 0xFFFF);
      if (static_cast<std::uint32_t>(w >> 32) != generation || next >= end) return false;
      if (slice.word.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
        part = next;
        return true;
      }
    }
  }

  // Participant `self` runs the parts of its own slice of region `generation`, then what is left
  // of the others'.
  void work(std::size_t self, std::uint32_t generation) {
    const std::size_t count = slices.size();
    for (std::size_t k = 0; k < count; ++k) {
      Slice& slice = slices[(self + k) % count];
      for (std::uint32_t part = 0; claim(slice, generation, part);) {
        const std::size_t total = parts;  // the region may be rewritten once the count is full
        run_part(part);
        if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == total) {
          std::lock_guard lock(done_mutex);  // orders the notify after a waiter's predicate check
          done_cv.notify_all();
        }
      }
    }
  }

  // Makes `generation` the latest region and wakes the workers.
  void publish(std::uint32_t generation) {
    {
      std::lock_guard lock(park_mutex);
      wake.store(generation, std::memory_order_release);
    }
    park_cv.notify_all();
  }

  void worker_loop(std::size_t self) {
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
      work(self, seen);
    }
  }
};

ThreadPool::ThreadPool(int threads)
    : threads_(resolve_threads(threads)), state_(std::make_unique<State>(threads_)) {
  state_->workers.reserve(static_cast<std::size_t>(threads_ - 1));
  for (int i = 1; i < threads_; ++i)
    state_->workers.emplace_back(
        [s = state_.get(), i] { s->worker_loop(static_cast<std::size_t>(i)); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(state_->run_mutex);
    state_->stop.store(true, std::memory_order_release);
    state_->publish(state_->wake.load(std::memory_order_relaxed) + 1);
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
  s.parts = std::min<std::size_t>(
      n, static_cast<std::size_t>(kPartsPerThread) * static_cast<std::size_t>(threads_));
  s.error = nullptr;
  s.done.store(0, std::memory_order_relaxed);
  // Only run() and the destructor, both under run_mutex, change `wake`.
  const std::uint32_t generation = s.wake.load(std::memory_order_relaxed) + 1;
  const std::size_t count = s.slices.size();
  for (std::size_t i = 0; i < count; ++i) {
    const auto begin = static_cast<std::uint32_t>(i * s.parts / count);
    const auto end = static_cast<std::uint32_t>((i + 1) * s.parts / count);
    s.slices[i].word.store(slice_word(generation, end, begin), std::memory_order_release);
  }
  s.publish(generation);
  s.work(0, generation);
  // Parts that workers claimed may still be running.
  const auto parts = static_cast<std::uint32_t>(s.parts);
  auto all_done = [&] { return s.done.load(std::memory_order_acquire) == parts; };
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
