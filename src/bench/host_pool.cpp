#include "bench/host_pool.h"

#include <algorithm>
#include <utility>

namespace gpucheck::bench {

class PinnedPool::Lease : public HostAllocation {
 public:
  Lease(PinnedPool& pool, std::unique_ptr<HostAllocation> inner, std::size_t bytes)
      : pool_(pool), inner_(std::move(inner)), bytes_(bytes) {}
  ~Lease() override { pool_.give_back(std::move(inner_)); }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  void* data() override { return inner_->data(); }
  std::size_t bytes() const override { return bytes_; }

 private:
  PinnedPool& pool_;
  std::unique_ptr<HostAllocation> inner_;
  std::size_t bytes_;
};

std::unique_ptr<HostAllocation> PinnedPool::take(std::size_t bytes) {
  largest_request_ = std::max(largest_request_, bytes);
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if ((*it)->bytes() >= bytes && (best == free_.end() || (*it)->bytes() < (*best)->bytes()))
      best = it;
  std::unique_ptr<HostAllocation> inner;
  if (best != free_.end()) {
    inner = std::move(*best);
    free_.erase(best);
    free_bytes_ -= inner->bytes();
  } else {
    inner = device_.allocate_host(bytes, HostMemory::kPinned);
  }
  return std::make_unique<Lease>(*this, std::move(inner), bytes);
}

void PinnedPool::give_back(std::unique_ptr<HostAllocation> allocation) noexcept {
  if (!allocation) return;
  try {
    free_bytes_ += allocation->bytes();
    free_.push_back(std::move(allocation));
  } catch (...) {
    // No room to keep it: it is unpinned and freed here, as before the pool.
    return;
  }
  const std::size_t cap = std::max(kMinCap, 2 * largest_request_);
  while (free_bytes_ > cap && !free_.empty()) {
    auto smallest = std::min_element(free_.begin(), free_.end(), [](const auto& a, const auto& b) {
      return a->bytes() < b->bytes();
    });
    free_bytes_ -= (*smallest)->bytes();
    free_.erase(smallest);
  }
}

}  // namespace gpucheck::bench
