// Device memory and pinned host memory owned by types, shared by the one-device bench device and
// the multi-GPU group.
#pragma once

#include "backends/device.h"

#include <cstddef>

namespace gpucheck::cuda {

// cudaMalloc'ed memory of one device; device < 0: the current device at construction.
class CudaBuffer final : public DeviceBuffer {
 public:
  explicit CudaBuffer(std::size_t bytes, int device = -1);
  ~CudaBuffer() override;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  std::size_t bytes() const override { return bytes_; }
  void* get() const { return ptr_; }
  int device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
  int device_;
};

inline void* dptr(const DeviceBuffer& b) {
  return static_cast<const CudaBuffer&>(b).get();
}

// cudaHostAlloc'ed (page-locked) memory; `flags` as cudaHostAlloc takes them.
class PinnedHost final : public HostAllocation {
 public:
  explicit PinnedHost(std::size_t bytes, unsigned int flags = 0);
  ~PinnedHost() override;
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  void* data() override { return ptr_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

}  // namespace gpucheck::cuda
