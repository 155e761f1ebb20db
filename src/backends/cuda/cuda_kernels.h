// The launcher functions for gpucheck's own CUDA kernels (cuda_kernels.cu): plain C++
// declarations, so nvcc never parses the host code and the host compiler never sees CUDA C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpucheck::cuda {

// y[i] = exp(x[i]) over n elements; x and y 16-byte aligned (cudaMalloc gives 256), 16-byte
// vector accesses. The launcher sizes the grid from `sms` (the device's multiprocessors): one
// pass with 4 vectors per thread for large n, a grid-stride loop over resident blocks for small.
// Returns the launch's error (cudaGetLastError).
cudaError_t launch_exp_f32(const float* x, float* y, std::size_t n, int sms, cudaStream_t stream);
cudaError_t launch_exp_f64(const double* x, double* y, std::size_t n, int sms, cudaStream_t stream);
// f16 / bf16 as raw 16-bit words (the host code has no half type): computed in f32.
cudaError_t launch_exp_f16(const void* x, void* y, std::size_t n, int sms, cudaStream_t stream);
cudaError_t launch_exp_bf16(const void* x, void* y, std::size_t n, int sms, cudaStream_t stream);

// An empty kernel, one block of one thread: what launch latency measures.
cudaError_t launch_empty_kernel(cudaStream_t stream);

// One thread that spins until *latch is non-zero (host memory mapped into the device), so the
// work queued behind it on the stream starts at once when the host releases the latch and its
// launch overhead is not timed (nvbandwidth's protocol). After timeout_clocks of the SM clock it
// gives up and sets *timed_out to 1 instead, so a host that blocks while enqueueing cannot hang.
cudaError_t launch_spin_kernel(const volatile int* latch, int* timed_out,
                               unsigned long long timeout_clocks, cudaStream_t stream);

// dst = src, bytes of them, by the SMs of the stream's device (16-byte vectors over a
// grid-stride loop, the tail byte by byte); dst may be a peer's memory (peer access enabled).
cudaError_t launch_sm_copy(void* dst, const void* src, std::size_t bytes, int sms,
                           cudaStream_t stream);

}  // namespace gpucheck::cuda
