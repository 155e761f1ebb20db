#include "stress/host_checked_downloads.h"

#include <algorithm>
#include <cstring>

namespace gpucheck::stress {

std::optional<std::uint64_t> first_difference(const void* a, const void* b, std::size_t bytes) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  if (std::memcmp(x, y, bytes) == 0) return std::nullopt;
  return static_cast<std::uint64_t>(std::mismatch(x, x + bytes, y).first - x);
}

HostCheckedDownloads::HostCheckedDownloads(Device& device, HostCopyQueues& queues,
                                           std::size_t first_event, std::size_t bytes,
                                           std::array<const void*, 2> patterns,
                                           std::array<const DeviceBuffer*, 2> sources)
    : queues_(queues),
      first_event_(first_event),
      bytes_(bytes),
      patterns_(patterns),
      sources_(sources) {
  for (auto& s : slots_) {
    s = device.allocate_host(bytes_, HostMemory::kPinned);
    std::memset(s->data(), 0, bytes_);
  }
  try {
    for (std::size_t e = 0; e < kSlots; ++e)
      threads_[e] = std::thread([this, e] { compare_loop(e); });
  } catch (...) {
    stop_and_join();
    throw;
  }
}

HostCheckedDownloads::~HostCheckedDownloads() {
  stop_and_join();
}

void HostCheckedDownloads::stop_and_join() noexcept {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

bool HostCheckedDownloads::try_queue() {
  std::uint64_t use = 0;
  const std::size_t e = next_ % kSlots;
  {
    std::lock_guard lock(m_);
    if (stop_ || error_ || compared_[e] < queued_[e]) return false;
    use = queued_[e];
  }
  queues_.download(slots_[e]->data(), *sources_[use % 2], bytes_);
  queues_.record(first_event_ + e, HostCopyQueues::Queue::kDown);
  {
    std::lock_guard lock(m_);
    ++queued_[e];
  }
  ++next_;
  cv_.notify_all();
  return true;
}

std::uint64_t HostCheckedDownloads::compared() const {
  std::lock_guard lock(m_);
  std::uint64_t n = 0;
  for (auto c : compared_) n += c;
  return n;
}

void HostCheckedDownloads::compare_loop(std::size_t e) noexcept {
  try {
    for (;;) {
      std::uint64_t use = 0;
      {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return stop_ || compared_[e] < queued_[e]; });
        if (compared_[e] == queued_[e]) return;  // stopped, nothing left to compare
        use = compared_[e];
      }
      queues_.wait_host(first_event_ + e);
      const auto at = first_difference(slots_[e]->data(), patterns_[use % 2], bytes_);
      std::lock_guard lock(m_);
      if (at) {
        ++differed_;
        if (!first_bad_offset_) first_bad_offset_ = at;
      }
      ++compared_[e];
    }
  } catch (...) {
    std::lock_guard lock(m_);
    if (!error_) error_ = std::current_exception();
  }
}

HostCheckedDownloads::Result HostCheckedDownloads::finish() {
  stop_and_join();
  std::lock_guard lock(m_);
  if (error_) std::rethrow_exception(error_);
  Result r;
  for (auto c : compared_) r.compared += c;
  r.differed = differed_;
  r.first_bad_offset = first_bad_offset_;
  return r;
}

}  // namespace gpucheck::stress
