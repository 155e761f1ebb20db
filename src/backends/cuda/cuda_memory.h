// Device memory and pinned host memory owned by types, shared by the one-device bench device and
// the multi-GPU group; and the pointers the library calls take for them (and for alpha, beta).
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

// alpha = 1 and beta = 0 for cuBLAS and cuDNN, which read both through a host pointer as double
// when the work is f64 and as float otherwise. The pointers point into this object: keep it alive
// until the call that reads them returns.
class UnitScale {
 public:
  explicit UnitScale(bool f64) : f64_(f64) {}
  explicit UnitScale(DType d) : UnitScale(d == DType::kF64) {}
  bool f64() const { return f64_; }
  const void* alpha() const { return f64_ ? static_cast<const void*>(&one_d_) : &one_f_; }
  const void* beta() const { return f64_ ? static_cast<const void*>(&zero_d_) : &zero_f_; }

 private:
  bool f64_;
  double one_d_ = 1.0, zero_d_ = 0.0;
  float one_f_ = 1.0f, zero_f_ = 0.0f;
};

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
