// gpucheck's own CUDA kernels: a bandwidth-bound exp for four dtypes, an empty kernel, the spin
// kernel that holds a stream until the host releases it, and the SM copy of peer copies.
#include "backends/cuda/cuda_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace gpucheck::cuda {

namespace {

// One 16-byte vector of each element type; exp applied lane by lane.
struct alignas(16) F32x4 {
  float v[4];
};
struct alignas(16) F64x2 {
  double v[2];
};
struct alignas(16) H16x8 {
  __half v[8];
};
struct alignas(16) B16x8 {
  __nv_bfloat16 v[8];
};

__device__ __forceinline__ float exp_one(float x) {
  return expf(x);
}
__device__ __forceinline__ double exp_one(double x) {
  return exp(x);
}
__device__ __forceinline__ __half exp_one(__half x) {
  return __float2half_rn(expf(__half2float(x)));
}
__device__ __forceinline__ __nv_bfloat16 exp_one(__nv_bfloat16 x) {
  return __float2bfloat16_rn(expf(__bfloat162float(x)));
}

// Vectors by a grid-stride loop, then the tail (n not a multiple of the lanes) element-wise.
template <typename T, typename Vec>
__global__ void exp_kernel(const T* __restrict__ x, T* __restrict__ y, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(Vec) / sizeof(T);
  const std::size_t vectors = n / kLanes;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Vec* xv = reinterpret_cast<const Vec*>(x);
  Vec* yv = reinterpret_cast<Vec*>(y);
  for (std::size_t i = first; i < vectors; i += stride) {
    Vec v = xv[i];
#pragma unroll
    for (std::size_t l = 0; l < kLanes; ++l) v.v[l] = exp_one(v.v[l]);
    yv[i] = v;
  }
  for (std::size_t i = vectors * kLanes + first; i < n; i += stride) y[i] = exp_one(x[i]);
}

// Large n: one pass, one 16-byte vector a thread, no loop; block 0 also does the tail. Timed
// beside its variants on an H200 (tools/device/exp_variants.cu, docs/PERFORMANCE.md): one vector
// a thread reached 4292 GB/s at 2^29 floats, torch.exp 4255, and 2, 4 or 8 vectors a thread
// (each thread's loads issued before its stores) 4131–4163.
constexpr int kThreads = 256;

template <typename T, typename Vec>
__global__ void __launch_bounds__(kThreads)
    exp_kernel_one_pass(const T* __restrict__ x, T* __restrict__ y, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(Vec) / sizeof(T);
  const std::size_t vectors = n / kLanes;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < vectors) {
    Vec v = reinterpret_cast<const Vec*>(x)[i];
#pragma unroll
    for (std::size_t l = 0; l < kLanes; ++l) v.v[l] = exp_one(v.v[l]);
    reinterpret_cast<Vec*>(y)[i] = v;
  }
  if (blockIdx.x == 0)
    for (std::size_t t = vectors * kLanes + threadIdx.x; t < n; t += kThreads) y[t] = exp_one(x[t]);
}

// The one-pass kernel once there are enough vectors for 4 waves of full SMs; below that (the
// seed loop's 230400 floats) the grid-stride kernel, whose blocks spread over every SM.
template <typename T, typename Vec>
cudaError_t launch_exp(const T* x, T* y, std::size_t n, int sms, cudaStream_t stream) {
  constexpr std::size_t kLanes = sizeof(Vec) / sizeof(T);
  const std::size_t vectors = n / kLanes;
  const std::size_t per_block = kThreads;
  const std::size_t resident = static_cast<std::size_t>(sms) * (2048 / kThreads);
  if (vectors >= 4 * resident * per_block) {
    const std::size_t blocks = (vectors + per_block - 1) / per_block;
    if (blocks <= 0x7fffffffu) {
      exp_kernel_one_pass<T, Vec><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, n);
      return cudaGetLastError();
    }
  }
  const std::size_t work = vectors > 0 ? vectors : 1;
  const std::size_t blocks = std::min(resident, (work + kThreads - 1) / kThreads);
  exp_kernel<T, Vec><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

__global__ void empty_kernel() {}

__global__ void spin_kernel(const volatile int* latch, int* timed_out,
                            unsigned long long timeout_clocks) {
  const long long end = clock64() + static_cast<long long>(timeout_clocks);
  while (*latch == 0) {
    if (clock64() > end) {
      *timed_out = 1;
      return;
    }
  }
}

// Cache-global loads and stores (nvbandwidth's choice): the data passes L1 by, as a copy should.
__global__ void sm_copy_kernel(uint4* dst, const uint4* src, std::size_t vectors,
                               unsigned char* dst_tail, const unsigned char* src_tail,
                               std::size_t tail) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t i = first; i < vectors; i += stride) __stcg(dst + i, __ldcg(src + i));
  if (first < tail) dst_tail[first] = src_tail[first];
}

}  // namespace

cudaError_t launch_exp_f32(const float* x, float* y, std::size_t n, int sms, cudaStream_t stream) {
  return launch_exp<float, F32x4>(x, y, n, sms, stream);
}

cudaError_t launch_exp_f64(const double* x, double* y, std::size_t n, int sms,
                           cudaStream_t stream) {
  return launch_exp<double, F64x2>(x, y, n, sms, stream);
}

cudaError_t launch_exp_f16(const void* x, void* y, std::size_t n, int sms, cudaStream_t stream) {
  return launch_exp<__half, H16x8>(static_cast<const __half*>(x), static_cast<__half*>(y), n, sms,
                                   stream);
}

cudaError_t launch_exp_bf16(const void* x, void* y, std::size_t n, int sms, cudaStream_t stream) {
  return launch_exp<__nv_bfloat16, B16x8>(static_cast<const __nv_bfloat16*>(x),
                                          static_cast<__nv_bfloat16*>(y), n, sms, stream);
}

cudaError_t launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t launch_spin_kernel(const volatile int* latch, int* timed_out,
                               unsigned long long timeout_clocks, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(latch, timed_out, timeout_clocks);
  return cudaGetLastError();
}

cudaError_t launch_sm_copy(void* dst, const void* src, std::size_t bytes, int sms,
                           cudaStream_t stream) {
  constexpr int kThreads = 512;
  const std::size_t vectors = bytes / sizeof(uint4);
  const std::size_t tail = bytes % sizeof(uint4);
  // Enough resident blocks to keep every SM's loads in flight; the loop covers the rest.
  const std::size_t wanted = std::max<std::size_t>(1, (vectors + kThreads - 1) / kThreads);
  const std::size_t blocks = std::min<std::size_t>(wanted, static_cast<std::size_t>(sms) * 4);
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  sm_copy_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s), vectors,
      d + vectors * sizeof(uint4), s + vectors * sizeof(uint4), tail);
  return cudaGetLastError();
}

}  // namespace gpucheck::cuda
