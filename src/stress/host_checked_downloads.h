// Downloads beside the copy test's round trips, each compared with its pattern on the host by a
// thread of its own. A round trip moves as many bytes down as up, and the host link seldom
// carries both directions at the same rate; these let the downloads run at theirs. The host's
// comparison (about 5 GB/s a core) runs beside the round trips' loop, never in it: done on the
// loop's thread, it held back the round trips.
#pragma once

#include "backends/device.h"

#include <array>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace gpucheck::stress {

// The offset of the first byte where a and b differ, or nullopt.
std::optional<std::uint64_t> first_difference(const void* a, const void* b, std::size_t bytes);

class HostCheckedDownloads {
 public:
  static constexpr std::size_t kSlots = 2;  // downloads in flight; one comparing thread each

  // Pinned slots of `bytes` each; patterns[p] (host) and sources[p] (device) hold pattern p, and
  // outlive this. Slot e's download records event first_event + e on the queues' kDown.
  HostCheckedDownloads(Device& device, HostCopyQueues& queues, std::size_t first_event,
                       std::size_t bytes, std::array<const void*, 2> patterns,
                       std::array<const DeviceBuffer*, 2> sources);
  ~HostCheckedDownloads();  // stops the threads once they compared what was queued
  HostCheckedDownloads(const HostCheckedDownloads&) = delete;
  HostCheckedDownloads& operator=(const HostCheckedDownloads&) = delete;

  // Queues one more download on kDown where its slot's last one was compared; false if not.
  // Each slot's next use holds the other pattern, so a download that did nothing is caught.
  bool try_queue();
  // Downloads compared so far.
  std::uint64_t compared() const;

  struct Result {
    std::uint64_t compared = 0, differed = 0;
    std::optional<std::uint64_t> first_bad_offset;
  };
  // Waits for every queued download's comparison and stops the threads; rethrows a thread's error.
  Result finish();

 private:
  void compare_loop(std::size_t slot) noexcept;
  void stop_and_join() noexcept;

  HostCopyQueues& queues_;
  std::size_t first_event_, bytes_;
  std::array<const void*, 2> patterns_;
  std::array<const DeviceBuffer*, 2> sources_;
  std::array<std::unique_ptr<HostAllocation>, kSlots> slots_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::array<std::uint64_t, kSlots> queued_{}, compared_{};
  std::uint64_t next_ = 0, differed_ = 0;
  std::optional<std::uint64_t> first_bad_offset_;
  std::exception_ptr error_;
  bool stop_ = false;
  std::array<std::thread, kSlots> threads_;
};

}  // namespace gpucheck::stress
