// Which form of the bandwidth-bound exp reaches the most of an HBM's rate: gpucheck's kernel
// (src/backends/cuda/cuda_kernels.cu) beside variants of it, and a plain copy as the ceiling,
// timed alike in one process (rounds interleaved, so the card's clock falls on all of them).
//   nvcc -O3 -arch=sm_90 -o exp_variants tools/device/exp_variants.cu
//   ./exp_variants LOG2N [ROUNDS]      prints one line per variant: median GB/s (read + write)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_check.cuh"

enum class Hint { kPlain, kStreaming };  // streaming: __ldcs / __stcs (evict first)

__device__ __forceinline__ float4 load(const float4* p, Hint h) {
  return h == Hint::kStreaming ? __ldcs(p) : *p;
}
__device__ __forceinline__ void store(float4* p, float4 v, Hint h) {
  if (h == Hint::kStreaming) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

template <int kThreads, int kUnroll, Hint kHint, bool kExp>
__global__ void __launch_bounds__(kThreads) one_pass(const float4* x, float4* y, size_t vectors) {
  const size_t base = static_cast<size_t>(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x;
  float4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const size_t i = base + static_cast<size_t>(u) * kThreads;
    if (i < vectors) v[u] = load(x + i, kHint);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const size_t i = base + static_cast<size_t>(u) * kThreads;
    if (i < vectors) {
      if (kExp) {
        v[u].x = expf(v[u].x);
        v[u].y = expf(v[u].y);
        v[u].z = expf(v[u].z);
        v[u].w = expf(v[u].w);
      }
      store(y + i, v[u], kHint);
    }
  }
}

// torch's index arithmetic: 32-bit, the block's base first.
template <int kThreads, int kUnroll>
__global__ void __launch_bounds__(kThreads) one_pass_i32(const float4* x, float4* y, int vectors) {
  const int base = blockIdx.x * (kThreads * kUnroll) + threadIdx.x;
  float4 v[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (base + u * kThreads < vectors) v[u] = x[base + u * kThreads];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if (base + u * kThreads < vectors) {
      v[u].x = expf(v[u].x);
      v[u].y = expf(v[u].y);
      v[u].z = expf(v[u].z);
      v[u].w = expf(v[u].w);
      y[base + u * kThreads] = v[u];
    }
  }
}

struct Variant {
  std::string name;
  void (*launch)(const float4*, float4*, size_t, int sms);
};

template <int T, int U, Hint H, bool E>
void launch_one_pass(const float4* x, float4* y, size_t vectors, int) {
  const size_t per = static_cast<size_t>(T) * U;
  one_pass<T, U, H, E><<<static_cast<unsigned>((vectors + per - 1) / per), T>>>(x, y, vectors);
}
template <int T, int U>
void launch_i32(const float4* x, float4* y, size_t vectors, int) {
  const size_t per = static_cast<size_t>(T) * U;
  one_pass_i32<T, U>
      <<<static_cast<unsigned>((vectors + per - 1) / per), T>>>(x, y, static_cast<int>(vectors));
}

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 29;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  const size_t n = size_t{1} << log2n;
  const size_t vectors = n / 4;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float4 *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = static_cast<float>((i * 2654435761u) % 2000) / 1000.f - 1.f;
  CHECK(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  const std::vector<Variant> variants = {
      {"t256 u4 plain (gpucheck's before)", launch_one_pass<256, 4, Hint::kPlain, true>},
      {"t256 u2 plain", launch_one_pass<256, 2, Hint::kPlain, true>},
      {"t256 u8 streaming", launch_one_pass<256, 8, Hint::kStreaming, true>},
      {"t128 u2 plain (torch's shape)", launch_one_pass<128, 2, Hint::kPlain, true>},
      {"t128 u2 streaming", launch_one_pass<128, 2, Hint::kStreaming, true>},
      {"t128 u1 plain", launch_one_pass<128, 1, Hint::kPlain, true>},
      {"t256 u1 plain (gpucheck's now)", launch_one_pass<256, 1, Hint::kPlain, true>},
      {"t64 u2 plain", launch_one_pass<64, 2, Hint::kPlain, true>},
      {"t512 u2 plain", launch_one_pass<512, 2, Hint::kPlain, true>},
      {"t128 u4 streaming", launch_one_pass<128, 4, Hint::kStreaming, true>},
      {"i32 t128 u2 plain", launch_i32<128, 2>},
      {"copy t128 u2 plain", launch_one_pass<128, 2, Hint::kPlain, false>},
      {"copy t256 u4 streaming", launch_one_pass<256, 4, Hint::kStreaming, false>},
  };

  const int reps = n >= (size_t{1} << 28) ? 20 : 200;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<std::vector<double>> gbs(variants.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t v = 0; v < variants.size(); ++v) {
      for (int w = 0; w < 3; ++w) variants[v].launch(x, y, vectors, sms);
      CHECK(cudaEventRecord(start));
      for (int i = 0; i < reps; ++i) variants[v].launch(x, y, vectors, sms);
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      CHECK(cudaGetLastError());
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      gbs[v].push_back(2.0 * n * sizeof(float) * reps / (ms * 1e-3) / 1e9);
    }
  }
  // Every variant's result checked once: exp's to a few ulp, copy's exactly.
  for (size_t v = 0; v < variants.size(); ++v) {
    variants[v].launch(x, y, vectors, sms);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> out(1 << 20);
    CHECK(cudaMemcpy(out.data(), y, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const bool is_copy = variants[v].name.rfind("copy", 0) == 0;
    size_t bad = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const double want = is_copy ? host[i] : std::exp(static_cast<double>(host[i]));
      if (std::fabs(out[i] - want) > 4e-7 * std::fabs(want)) ++bad;
    }
    std::vector<double> s = gbs[v];
    std::sort(s.begin(), s.end());
    std::printf("2^%d %-34s median %7.1f GB/s  min %7.1f  max %7.1f  %s\n", log2n,
                variants[v].name.c_str(), s[s.size() / 2], s.front(), s.back(),
                bad ? "WRONG" : "ok");
  }
  return 0;
}
