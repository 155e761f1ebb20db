// A persistent worker pool and a parallel_for over it: workers are created once per thread count
// and reused, so a call costs a wake-up, not a thread creation.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace gpucheck::cpu {

// The number of participants a `threads` argument means: <= 0 is
// std::thread::hardware_concurrency() (at least 1); larger requests are capped at kMaxThreads.
int resolve_threads(int threads);
inline constexpr int kMaxThreads = 1024;
// A region of n indices is cut into min(n, kPartsPerThread · threads) parts.
inline constexpr int kPartsPerThread = 4;

// Range body of a parallel region, type-erased: fn(ctx, begin, end).
using RangeFn = void (*)(void* ctx, std::size_t begin, std::size_t end);

// `threads` participants: the calling thread plus threads-1 workers parked between calls (a short
// spin, then a condition variable). The participants claim parts of a region dynamically, so a
// worker the OS has not scheduled costs its share of the work, not a wait. One region runs at a
// time; concurrent callers queue on a mutex.
class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // Splits [0, n) into min(n, kPartsPerThread · threads()) contiguous ranges whose lengths differ
  // by at most one, and runs body(begin, end) once per range on whichever participant claims it
  // (the caller included). Returns when all are done and rethrows the first exception a range
  // threw. A call from inside a region runs body(0, n) serially on the calling thread.
  template <class F>
  void parallel_for(std::size_t n, F&& body) {
    using Body = std::remove_reference_t<F>;
    run(
        n, [](void* ctx, std::size_t b, std::size_t e) { (*static_cast<Body*>(ctx))(b, e); },
        const_cast<void*>(static_cast<const void*>(std::addressof(body))));
  }

  void run(std::size_t n, RangeFn fn, void* ctx);

 private:
  struct State;
  int threads_;
  std::unique_ptr<State> state_;
};

// The process's pool with resolve_threads(threads) participants, created on first use and kept
// (function-local, one per distinct count) until exit.
ThreadPool& shared_pool(int threads);

// parallel_for over the shared pool for `threads`; n <= 1 or one thread runs inline.
template <class F>
void parallel_for(std::size_t n, int threads, F&& body) {
  if (n == 0) return;
  const int t = resolve_threads(threads);
  if (n == 1 || t == 1) {
    body(std::size_t{0}, n);
    return;
  }
  shared_pool(t).parallel_for(n, std::forward<F>(body));
}

}  // namespace gpucheck::cpu
