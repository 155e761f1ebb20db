// Allocation and release of CUDA device and pinned host memory, every call checked.
#include "backends/cuda/cuda_memory.h"

#include "backends/cuda/cuda_errors.h"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace gpucheck::cuda {

CudaBuffer::CudaBuffer(std::size_t bytes, int device) : bytes_(bytes), device_(device) {
  if (device_ < 0) GC_CUDA_CHECK(cudaGetDevice(&device_));
  if (bytes == 0) return;
  int current = 0;
  GC_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device_) GC_CUDA_CHECK(cudaSetDevice(device_));
  const cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (current != device_) GC_CUDA_CHECK_NOTHROW(cudaSetDevice(current));
  GC_CUDA_CHECK(e);
}

CudaBuffer::~CudaBuffer() {
  if (ptr_ == nullptr) return;
  int current = 0;
  GC_CUDA_CHECK_NOTHROW(cudaGetDevice(&current));
  if (current != device_) GC_CUDA_CHECK_NOTHROW(cudaSetDevice(device_));
  GC_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
  if (current != device_) GC_CUDA_CHECK_NOTHROW(cudaSetDevice(current));
}

PinnedHost::PinnedHost(std::size_t bytes, unsigned int flags) : bytes_(bytes) {
  GC_CUDA_CHECK(cudaHostAlloc(&ptr_, std::max<std::size_t>(bytes, 1), flags));
}

PinnedHost::~PinnedHost() {
  GC_CUDA_CHECK_NOTHROW(cudaFreeHost(ptr_));
}

}  // namespace gpucheck::cuda
