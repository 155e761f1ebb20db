// Helpers every device implementation shares.
#include "backends/device.h"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>
#include <vector>

namespace gpucheck {

void check_buffer_range(const DeviceBuffer& b, std::size_t offset, std::size_t bytes) {
  if (offset > b.bytes() || bytes > b.bytes() - offset)
    throw std::logic_error(
        fmt::format("bytes [{}, {}) outside a {}-byte buffer", offset, offset + bytes, b.bytes()));
}

namespace {

class SerialHostCopyQueues final : public HostCopyQueues {
 public:
  SerialHostCopyQueues(Device& device, StressOps& ops, std::size_t events)
      : dev_(device), ops_(ops), at_(events) {}

  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    dev_.upload(dst, src, bytes);
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    dev_.download(dst, src, bytes);
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums, std::size_t slot,
                std::uint64_t* host_sum) override {
    ops_.checksum(src, words, sums, slot);
    ops_.download_at(host_sum, sums, slot * 8, 8);
  }
  // Everything enqueued so far is done when the event is reached.
  void record(std::size_t event, Queue queue) override {
    (void)queue;
    dev_.synchronize();
    at_.at(event) = std::chrono::steady_clock::now();
  }
  void wait(Queue queue, std::size_t event) override {
    (void)queue;
    (void)event;
  }
  void wait_host(std::size_t event) override {
    (void)event;
    dev_.synchronize();
  }
  double seconds_between(std::size_t from, std::size_t to) override {
    return std::chrono::duration<double>(at_.at(to) - at_.at(from)).count();
  }

 private:
  Device& dev_;
  StressOps& ops_;
  std::vector<std::chrono::steady_clock::time_point> at_;
};

}  // namespace

std::unique_ptr<HostCopyQueues> open_host_copy_queues(Device& device, StressOps& ops,
                                                      std::size_t events) {
  if (auto own = ops.host_copy_queues(events)) return own;
  return std::make_unique<SerialHostCopyQueues>(device, ops, events);
}

std::string missing_capability(const Device& device, std::string_view capability) {
  return fmt::format("the {} backend offers no {}", device.identity().backend, capability);
}

}  // namespace gpucheck
