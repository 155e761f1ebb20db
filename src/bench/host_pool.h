// Pinned host memory kept for the whole of a device's run, so the cells' rounds reuse it.
//
// Each round of a cell used to pin its host buffers afresh and unpin them at its end; at the
// sizes a GPU's default run chooses (256 MiB copies, 2 × 256 MiB for an exp of 2^26) pinning
// and unpinning cost more than the transfers they serve (the `pinned` phase of
// GPUCHECK_TRACE_FILE, bench/phase_trace.h). The pool hands out a free allocation at least as
// large as asked for (the smallest such), else pins a new one; what comes back stays pinned up
// to a cap, beyond which the smallest are let go. Pageable memory is not pooled: a fresh
// pageable buffer is what the pageable copy cells mean to measure.
#pragma once

#include "backends/device.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace gpucheck::bench {

class PinnedPool {
 public:
  explicit PinnedPool(Device& device) : device_(device) {}
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  // `bytes` of pinned host memory (data() of a lease may have more behind it; bytes() says what
  // was asked for). Every lease must end before the pool does.
  std::unique_ptr<HostAllocation> take(std::size_t bytes);

  // Free bytes kept pinned: at most the larger of kMinCap and twice the largest request.
  std::size_t free_bytes() const { return free_bytes_; }
  static constexpr std::size_t kMinCap = std::size_t{1} << 30;

 private:
  class Lease;
  void give_back(std::unique_ptr<HostAllocation> allocation) noexcept;

  Device& device_;
  std::vector<std::unique_ptr<HostAllocation>> free_;
  std::size_t free_bytes_ = 0;
  std::size_t largest_request_ = 0;
};

}  // namespace gpucheck::bench
