// The stress kernels: a checksum of 64-bit words and memory-test passes, both streaming 16-byte
// vectors in grid-stride loops with several loads in flight per thread, for memory bandwidth.
#include "backends/cuda/stress_kernels.h"

#include <algorithm>

namespace gpucheck::cuda {

namespace {

namespace sm = stress_math;

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;  // 2048 resident threads per SM
constexpr int kUnroll = 4;       // 16-byte vectors in flight per thread

__device__ __forceinline__ std::uint64_t warp_sum(std::uint64_t v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Block sum of v into thread 0's return value (other threads: unspecified).
__device__ std::uint64_t block_sum(std::uint64_t v) {
  __shared__ std::uint64_t warps[kThreads / 32];
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? warps[threadIdx.x] : 0;
  if (threadIdx.x < 32) v = warp_sum(v);
  return v;
}

__global__ void __launch_bounds__(kThreads)
    checksum_partial(const ulonglong2* __restrict__ v, std::size_t vectors,
                     const std::uint64_t* __restrict__ words, std::size_t n,
                     std::uint64_t* __restrict__ partials) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  std::uint64_t sum = 0;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    ulonglong2 x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = v[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t w = 2 * (i + u * stride);
      sum += sm::checksum_term(x[u].x, w) + sm::checksum_term(x[u].y, w + 1);
    }
  }
  for (; i < vectors; i += stride) {
    const ulonglong2 x = v[i];
    sum += sm::checksum_term(x.x, 2 * i) + sm::checksum_term(x.y, 2 * i + 1);
  }
  // An odd count leaves one word after the vectors: block 0, thread 0 takes it.
  if (blockIdx.x == 0 && threadIdx.x == 0 && n % 2 == 1)
    sum += sm::checksum_term(words[n - 1], n - 1);
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(kThreads)
    checksum_final(const std::uint64_t* __restrict__ partials, int count,
                   std::uint64_t* __restrict__ sums, std::size_t slot) {
  std::uint64_t sum = 0;
  for (int i = threadIdx.x; i < count; i += kThreads) sum += partials[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) sums[slot] = sum;
}

template <sm::PatternKind Check, sm::PatternKind Write>
__device__ __forceinline__ void test_word(std::uint64_t& word, std::uint64_t index,
                                          std::uint64_t check_param, std::uint64_t write_param,
                                          unsigned long long& bad, unsigned long long& low) {
  if constexpr (Check != sm::PatternKind::kNone) {
    if (word != sm::pattern_value(Check, check_param, index)) {
      ++bad;
      low = min(low, static_cast<unsigned long long>(index));
    }
  }
  if constexpr (Write != sm::PatternKind::kNone)
    word = sm::pattern_value(Write, write_param, index);
}

template <sm::PatternKind Check, sm::PatternKind Write>
__global__ void __launch_bounds__(kThreads)
    memtest_kernel(ulonglong2* __restrict__ v, std::size_t vectors, std::uint64_t* words,
                   std::size_t n, std::uint64_t first, std::uint64_t check_param,
                   std::uint64_t write_param, unsigned long long* result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  unsigned long long bad = 0, low = ~0ull;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    ulonglong2 x[kUnroll] = {};
    if constexpr (Check != sm::PatternKind::kNone) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) x[u] = v[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint64_t w = first + 2 * (i + u * stride);
      std::uint64_t a = x[u].x, b = x[u].y;
      test_word<Check, Write>(a, w, check_param, write_param, bad, low);
      test_word<Check, Write>(b, w + 1, check_param, write_param, bad, low);
      if constexpr (Write != sm::PatternKind::kNone) v[i + u * stride] = make_ulonglong2(a, b);
    }
  }
  for (; i < vectors; i += stride) {
    ulonglong2 x{};
    if constexpr (Check != sm::PatternKind::kNone) x = v[i];
    std::uint64_t a = x.x, b = x.y;
    test_word<Check, Write>(a, first + 2 * i, check_param, write_param, bad, low);
    test_word<Check, Write>(b, first + 2 * i + 1, check_param, write_param, bad, low);
    if constexpr (Write != sm::PatternKind::kNone) v[i] = make_ulonglong2(a, b);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && n % 2 == 1) {
    std::uint64_t a = words[n - 1];
    test_word<Check, Write>(a, first + n - 1, check_param, write_param, bad, low);
    if constexpr (Write != sm::PatternKind::kNone) words[n - 1] = a;
  }
  if (bad != 0) {
    atomicAdd(&result[0], bad);
    atomicMin(&result[1], low);
  }
}

using MemtestKernel = void (*)(ulonglong2*, std::size_t, std::uint64_t*, std::size_t, std::uint64_t,
                               std::uint64_t, std::uint64_t, unsigned long long*);

template <sm::PatternKind Check, sm::PatternKind Write>
struct KernelTable {
  static constexpr MemtestKernel value = memtest_kernel<Check, Write>;
};

unsigned grid_for(std::size_t vectors, int sms) {
  const std::size_t full = static_cast<std::size_t>(std::max(sms, 1)) * kBlocksPerSm;
  const std::size_t needed = (vectors + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(full, needed)));
}

}  // namespace

int checksum_blocks(int sms) {
  return std::max(sms, 1) * kBlocksPerSm;
}

cudaError_t launch_checksum(const std::uint64_t* words, std::size_t n, std::uint64_t* partials,
                            std::uint64_t* sums, std::size_t slot, int sms, cudaStream_t stream) {
  const std::size_t vectors = n / 2;
  const unsigned blocks = grid_for(vectors, sms);
  checksum_partial<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const ulonglong2*>(words),
                                                    vectors, words, n, partials);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  checksum_final<<<1, kThreads, 0, stream>>>(partials, static_cast<int>(blocks), sums, slot);
  return cudaGetLastError();
}

cudaError_t launch_memtest(std::uint64_t* words, std::size_t n, std::uint64_t first_word,
                           sm::PatternKind check, std::uint64_t check_param, sm::PatternKind write,
                           std::uint64_t write_param, unsigned long long* result, int sms,
                           cudaStream_t stream) {
  const std::size_t vectors = n / 2;
  const MemtestKernel kernel = sm::pick_pass<KernelTable>(check, write);
  kernel<<<grid_for(vectors, sms), kThreads, 0, stream>>>(reinterpret_cast<ulonglong2*>(words),
                                                          vectors, words, n, first_word,
                                                          check_param, write_param, result);
  return cudaGetLastError();
}

}  // namespace gpucheck::cuda
