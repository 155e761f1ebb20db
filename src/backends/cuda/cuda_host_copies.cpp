// Three non-blocking streams and timing events on one GPU. The streams are apart from the
// device's own, so nothing the device enqueues elsewhere orders these copies behind it.
#include "backends/cuda/cuda_host_copies.h"

#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/stress_kernels.h"

#include <cuda_runtime_api.h>

#include <array>
#include <vector>

namespace gpucheck::cuda {

namespace {

class CudaHostCopyQueues final : public HostCopyQueues {
 public:
  CudaHostCopyQueues(int device, int sms, std::size_t events) : device_(device), sms_(sms) {
    try {
      GC_CUDA_CHECK(cudaSetDevice(device_));
      for (auto& s : streams_) GC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      events_.assign(events, nullptr);
      for (auto& e : events_) GC_CUDA_CHECK(cudaEventCreate(&e));
      partials_ = std::make_unique<CudaBuffer>(static_cast<std::size_t>(checksum_blocks(sms_)) * 8,
                                               device_);
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaHostCopyQueues() override { release(); }
  CudaHostCopyQueues(const CudaHostCopyQueues&) = delete;
  CudaHostCopyQueues& operator=(const CudaHostCopyQueues&) = delete;

  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    check_buffer_range(dst, 0, bytes);
    GC_CUDA_CHECK(
        cudaMemcpyAsync(dptr(dst), src, bytes, cudaMemcpyHostToDevice, stream(Queue::kUp)));
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    check_buffer_range(src, 0, bytes);
    GC_CUDA_CHECK(
        cudaMemcpyAsync(dst, dptr(src), bytes, cudaMemcpyDeviceToHost, stream(Queue::kDown)));
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums, std::size_t slot,
                std::uint64_t* host_sum) override {
    check_buffer_range(src, 0, words * 8);
    check_buffer_range(sums, slot * 8, 8);
    // A kernel goes to the current device's context: the peer copies may have changed it.
    GC_CUDA_CHECK(cudaSetDevice(device_));
    auto* sum = static_cast<std::uint64_t*>(dptr(sums)) + slot;
    GC_CUDA_CHECK(launch_checksum(static_cast<const std::uint64_t*>(dptr(src)), words,
                                  static_cast<std::uint64_t*>(partials_->get()),
                                  static_cast<std::uint64_t*>(dptr(sums)), slot, sms_,
                                  stream(Queue::kCheck)));
    GC_CUDA_CHECK(cudaMemcpyAsync(host_sum, sum, 8, cudaMemcpyDeviceToHost, stream(Queue::kCheck)));
  }
  void record(std::size_t event, Queue queue) override {
    GC_CUDA_CHECK(cudaEventRecord(events_.at(event), stream(queue)));
  }
  void wait(Queue queue, std::size_t event) override {
    GC_CUDA_CHECK(cudaStreamWaitEvent(stream(queue), events_.at(event), 0));
  }
  void wait_host(std::size_t event) override {
    GC_CUDA_CHECK(cudaEventSynchronize(events_.at(event)));
  }
  double seconds_between(std::size_t from, std::size_t to) override {
    float ms = 0;
    GC_CUDA_CHECK(cudaEventElapsedTime(&ms, events_.at(from), events_.at(to)));
    return static_cast<double>(ms) / 1e3;
  }

 private:
  cudaStream_t stream(Queue q) const { return streams_[static_cast<std::size_t>(q)]; }
  // What was made so far; copies still queued finish first (they write the caller's buffers).
  void release() noexcept {
    for (auto s : streams_)
      if (s) GC_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(s));
    partials_.reset();
    for (auto e : events_)
      if (e) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(e));
    for (auto s : streams_)
      if (s) GC_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s));
  }

  int device_, sms_;
  std::array<cudaStream_t, 3> streams_{};  // indexed by Queue
  std::vector<cudaEvent_t> events_;
  // One checksum at a time: kCheck runs them in order.
  std::unique_ptr<CudaBuffer> partials_;
};

}  // namespace

std::unique_ptr<HostCopyQueues> open_cuda_host_copy_queues(int device, int sms,
                                                           std::size_t events) {
  return std::make_unique<CudaHostCopyQueues>(device, sms, events);
}

}  // namespace gpucheck::cuda
