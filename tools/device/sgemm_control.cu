// The control for the Vulkan f32 GEMM: src/backends/vulkan/shaders/gemm_vec4.comp's algorithm
// written in CUDA, timed beside cuBLAS SGEMM (no TF32) in one process, so that the same GPU
// call tells whether the shader's ~2/3 of cuBLAS is its tiling (the CUDA transcription is as
// slow) or NVIDIA's Vulkan shader compiler (the CUDA transcription is faster).
// sgemm_vec4<WX, WY, TM, TN, BK, LANES_X> is the shader for the plain-B case (BT false), f32,
// row-major A (m×k), B (k×n), C (m×n), no batch and no offsets: the same 16-byte global loads
// into registers, the same two shared buffers per matrix (A stored transposed), one barrier a
// k-step, the same rows (TM/4 groups of 4 strided by 4·WY) and columns (TN/4 groups of 4
// strided by 4·WX) per thread, the same fma order and the same bounds checks. LANES_X is the one
// thing the shader does not have: 0 maps a thread to (tx, ty) as Vulkan does (tid = ty·WX + tx);
// 4 or 8 makes each warp an LANES_X × 32/LANES_X block of the (tx, ty) grid, which only changes
// which shared-memory addresses a warp reads at once. MIN_BLOCKS (1: no constraint) asks ptxas
// for registers few enough that so many blocks fit on an SM, to tell occupancy from the rest.
//   nvcc -O3 -arch=sm_90 -lcublas -o sgemm_control tools/device/sgemm_control.cu
//   ./sgemm_control N [ROUNDS]   N×N×N, N a multiple of 128; per variant: median, min and max
//                                TFLOP/s over ROUNDS (7) interleaved rounds, registers, static
//                                shared bytes, local (spill) bytes, blocks per SM, the check.
// Each variant's output is checked once per run against cuBLAS's (pedantic f32): the largest
// |difference| must stay under 1e-3 of an entry's standard deviation sqrt(k)/3 (inputs uniform
// in [-1, 1]; two f32 sums at k = 8192 differ by ~5e-6 of it at most, a wrong index by ~1).
// Both cuBLAS results are checked against float64 dot products at 512 sampled entries: at most
// 1e-4 of the same scale (f32's error there is ~5e-6 of it, TF32's ~4e-4 rms, ~1e-3 at worst).
// A failure prints FAILED and the exit status is 1.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_check.cuh"

#define CHECK_BLAS(call)                                                                  \
  do {                                                                                    \
    cublasStatus_t s = (call);                                                            \
    if (s != CUBLAS_STATUS_SUCCESS) {                                                     \
      std::fprintf(stderr, "%s: %d %s\n", #call, static_cast<int>(s), cublasGetStatusString(s)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

__device__ __forceinline__ float component(const float4& v, unsigned q) {
  return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
}

// The shader's names: WX, WY its work group's size (local_size_x, local_size_y), TM, TN, BK its
// specialization constants. Loops over compile-time bounds are unrolled, as NVIDIA's Vulkan
// compiler does with specialization constants; the k-step loop (p.k in the shader) is not.
template <unsigned WX, unsigned WY, unsigned TM, unsigned TN, unsigned BK, unsigned LANES_X,
          unsigned MIN_BLOCKS = 1>
__global__ void __launch_bounds__(WX * WY, MIN_BLOCKS)
    sgemm_vec4(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c,
               unsigned m, unsigned n, unsigned k, unsigned lda, unsigned ldb, unsigned ldc) {
  constexpr unsigned THREADS = WX * WY;
  constexpr unsigned BM = WY * TM;
  constexpr unsigned BN = WX * TN;
  constexpr unsigned BM4 = BM / 4;
  constexpr unsigned BN4 = BN / 4;
  constexpr unsigned TM4 = TM / 4;
  constexpr unsigned TN4 = TN / 4;
  constexpr unsigned A_VECS = BM * BK / 4;
  constexpr unsigned B_VECS = BK * BN4;
  constexpr unsigned A_PER = (A_VECS + THREADS - 1) / THREADS;
  constexpr unsigned B_PER = (B_VECS + THREADS - 1) / THREADS;
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN, BK: multiples of 4");
  static_assert(2 * BK * (BM4 + BN4) * 16 <= 48 * 1024, "static shared memory: 48 KiB at most");
  constexpr unsigned L = LANES_X == 0 ? 32 : LANES_X;  // no division by zero when it is 0
  static_assert(LANES_X == 0 || (THREADS % 32 == 0 && L <= 32 && 32 % L == 0 && WX % L == 0 &&
                                 WY % (32 / L) == 0),
                "a warp tile of LANES_X × 32/LANES_X must tile the WX × WY grid");

  __shared__ float4 as[2 * BK * BM4];  // as[kk * BM4 + r4]: rows 4·r4 … 4·r4+3 at k = kk
  __shared__ float4 bs[2 * BK * BN4];  // bs[kk * BN4 + c4]: columns 4·c4 … 4·c4+3 at k = kk
  float* const asf = reinterpret_cast<float*>(as);

  // tid loads the tiles (as the shader's tid = ty·WX + tx does); (tx, ty) picks the outputs.
  const unsigned tid = threadIdx.x;
  unsigned tx, ty;
  if constexpr (LANES_X == 0) {
    tx = tid % WX;
    ty = tid / WX;
  } else {
    const unsigned lane = tid % 32, warp = tid / 32;
    tx = (warp % (WX / LANES_X)) * LANES_X + lane % LANES_X;
    ty = (warp / (WX / LANES_X)) * (32 / LANES_X) + lane / LANES_X;
  }
  const unsigned row0 = blockIdx.y * BM;
  const unsigned col0 = blockIdx.x * BN;

  float4 ra[A_PER];
  float4 rb[B_PER];
  // load_tiles: A's tile: BK/4 neighbouring threads read one row's vectors along k; B's:
  // neighbouring threads read neighbouring vectors of a row. Indices in f32 elements, then /4.
  auto load_tiles = [&](unsigned k0) {
#pragma unroll
    for (unsigned u = 0; u < A_PER; ++u) {
      const unsigned i = tid + u * THREADS;
      const unsigned r = i / (BK / 4), kq = i % (BK / 4);
      const unsigned gr = row0 + r, gk = k0 + kq * 4;
      ra[u] = ((A_VECS % THREADS == 0 || i < A_VECS) && gr < m && gk < k)
                  ? a[(gr * lda + gk) / 4]
                  : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (unsigned u = 0; u < B_PER; ++u) {
      const unsigned i = tid + u * THREADS;
      const unsigned kk = i / BN4, c4 = i % BN4;
      const unsigned gk = k0 + kk, gc = col0 + c4 * 4;
      rb[u] = ((B_VECS % THREADS == 0 || i < B_VECS) && gk < k && gc < n)
                  ? b[(gk * ldb + gc) / 4]
                  : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  // store_tiles: A transposed, one f32 at a time (as[…][r % 4] = ra[u][q]); B as it came.
  auto store_tiles = [&](unsigned which) {
    const unsigned a0 = which * BK * BM4, b0 = which * BK * BN4;
#pragma unroll
    for (unsigned u = 0; u < A_PER; ++u) {
      const unsigned i = tid + u * THREADS;
      if (A_VECS % THREADS != 0 && i >= A_VECS) break;
      const unsigned r = i / (BK / 4), kq = i % (BK / 4);
#pragma unroll
      for (unsigned q = 0; q < 4; ++q)
        asf[(a0 + (kq * 4 + q) * BM4 + r / 4) * 4 + r % 4] = component(ra[u], q);
    }
#pragma unroll
    for (unsigned u = 0; u < B_PER; ++u) {
      const unsigned i = tid + u * THREADS;
      if (B_VECS % THREADS != 0 && i >= B_VECS) break;
      bs[b0 + i] = rb[u];
    }
  };

  float4 acc[TM * TN4];  // acc[i * TN4 + j4]: row i's columns of group j4
#pragma unroll
  for (unsigned i = 0; i < TM * TN4; ++i) acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  float4 av[TM4];
  float4 bv[TN4];

  load_tiles(0);
  store_tiles(0);
  __syncthreads();
  unsigned cur = 0;
#pragma unroll 1
  for (unsigned k0 = 0; k0 < k; k0 += BK) {
    const bool more = k0 + BK < k;
    if (more) load_tiles(k0 + BK);
    const unsigned a0 = cur * BK * BM4, b0 = cur * BK * BN4;
#pragma unroll
    for (unsigned kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (unsigned i4 = 0; i4 < TM4; ++i4) av[i4] = as[a0 + kk * BM4 + ty + i4 * WY];
#pragma unroll
      for (unsigned j4 = 0; j4 < TN4; ++j4) bv[j4] = bs[b0 + kk * BN4 + tx + j4 * WX];
#pragma unroll
      for (unsigned i4 = 0; i4 < TM4; ++i4)
#pragma unroll
        for (unsigned q = 0; q < 4; ++q)
#pragma unroll
          for (unsigned j4 = 0; j4 < TN4; ++j4) {
            const unsigned at = (i4 * 4 + q) * TN4 + j4;
            const float s = component(av[i4], q);
            acc[at].x = fmaf(s, bv[j4].x, acc[at].x);
            acc[at].y = fmaf(s, bv[j4].y, acc[at].y);
            acc[at].z = fmaf(s, bv[j4].z, acc[at].z);
            acc[at].w = fmaf(s, bv[j4].w, acc[at].w);
          }
    }
    // The other buffer was last read before the previous step's barrier.
    if (more) store_tiles(cur ^ 1);
    __syncthreads();
    cur ^= 1;
  }
#pragma unroll
  for (unsigned i4 = 0; i4 < TM4; ++i4)
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) {
      const unsigned r = row0 + (ty + i4 * WY) * 4 + q;
      if (r >= m) continue;
#pragma unroll
      for (unsigned j4 = 0; j4 < TN4; ++j4) {
        const unsigned cc = col0 + (tx + j4 * WX) * 4;
        if (cc < n) c[(r * ldc + cc) / 4] = acc[(i4 * 4 + q) * TN4 + j4];
      }
    }
}

cublasHandle_t g_blas_default = nullptr;   // CUBLAS_DEFAULT_MATH, CUBLAS_COMPUTE_32F
cublasHandle_t g_blas_pedantic = nullptr;  // CUBLAS_PEDANTIC_MATH, CUBLAS_COMPUTE_32F_PEDANTIC

struct Variant {
  std::string name;
  void (*launch)(const float*, const float*, float*, unsigned);  // n×n×n, row-major
  const void* kernel;  // nullptr for cuBLAS
  unsigned threads, bm, bn;
};

template <unsigned WX, unsigned WY, unsigned TM, unsigned TN, unsigned BK, unsigned LX,
          unsigned MB>
void launch_vec4(const float* a, const float* b, float* c, unsigned n) {
  const dim3 grid(n / (WX * TN), n / (WY * TM));
  sgemm_vec4<WX, WY, TM, TN, BK, LX, MB><<<grid, WX * WY>>>(reinterpret_cast<const float4*>(a),
                                                        reinterpret_cast<const float4*>(b),
                                                        reinterpret_cast<float4*>(c), n, n, n,
                                                        n, n, n);
}

template <unsigned WX, unsigned WY, unsigned TM, unsigned TN, unsigned BK, unsigned LX,
          unsigned MB = 1>
Variant vec4_variant() {
  char name[96];
  std::snprintf(name, sizeof name, "vec4 wx%u wy%u tm%u tn%u bk%u lanes%u%s", WX, WY, TM, TN,
                BK, LX, MB > 1 ? (" minblocks" + std::to_string(MB)).c_str() : "");
  return {name, launch_vec4<WX, WY, TM, TN, BK, LX, MB>,
          reinterpret_cast<const void*>(sgemm_vec4<WX, WY, TM, TN, BK, LX, MB>), WX * WY,
          WY * TM, WX * TN};
}

// Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: B's memory as an n×k column-major matrix times
// A's as k×m, into C's as n×m.
template <bool kPedantic>
void launch_cublas(const float* a, const float* b, float* c, unsigned n) {
  const float alpha = 1.f, beta = 0.f;
  const int d = static_cast<int>(n);
  CHECK_BLAS(cublasGemmEx(kPedantic ? g_blas_pedantic : g_blas_default, CUBLAS_OP_N, CUBLAS_OP_N,
                          d, d, d, &alpha, b, CUDA_R_32F, d, a, CUDA_R_32F, d, &beta, c,
                          CUDA_R_32F, d,
                          kPedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
}

// Fixed-seed inputs, uniform in [-1, 1] (splitmix64: the same numbers on every machine).
void fill(std::vector<float>& v, uint64_t seed) {
  for (float& x : v) {
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x = static_cast<float>(static_cast<double>(z >> 40) / static_cast<double>(1ull << 23) - 1.0);
  }
}

int main(int argc, char** argv) {
  const int size = argc > 1 ? std::atoi(argv[1]) : 4096;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  if (size <= 0 || size % 128 != 0 || size > 32768 || rounds <= 0) {
    std::fprintf(stderr, "usage: %s N [ROUNDS]   (N a multiple of 128, at most 32768)\n",
                 argv[0]);
    return 2;
  }
  const unsigned n = static_cast<unsigned>(size);
  const size_t elems = static_cast<size_t>(n) * n;
  const double flops = 2.0 * n * n * static_cast<double>(n);

  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs; N = %u, %d rounds\n", prop.name, prop.multiProcessorCount, n,
              rounds);

  CHECK_BLAS(cublasCreate(&g_blas_default));
  CHECK_BLAS(cublasSetMathMode(g_blas_default, CUBLAS_DEFAULT_MATH));
  CHECK_BLAS(cublasCreate(&g_blas_pedantic));
  CHECK_BLAS(cublasSetMathMode(g_blas_pedantic, CUBLAS_PEDANTIC_MATH));

  const std::vector<Variant> variants = {
      vec4_variant<16, 16, 4, 8, 16, 0>(),  // Vulkan's tuned set: 64×128 tiles, 256 threads
      vec4_variant<16, 16, 4, 8, 16, 8>(),
      vec4_variant<16, 16, 4, 8, 16, 4>(),
      vec4_variant<16, 16, 4, 8, 16, 0, 3>(),  // ≤ 85 registers: 3 blocks (24 warps) an SM
      vec4_variant<16, 16, 8, 8, 8, 0>(),  // 128×128, bk 8
      vec4_variant<16, 16, 8, 8, 8, 8>(),
      vec4_variant<16, 16, 8, 8, 16, 0>(),  // 128×128, bk 16
      vec4_variant<16, 16, 8, 8, 16, 8>(),
      vec4_variant<16, 16, 8, 8, 16, 4>(),
      vec4_variant<8, 16, 8, 8, 16, 0>(),  // 128 threads, 128×64
      vec4_variant<16, 8, 8, 8, 16, 0>(),  // 128 threads, 64×128
      {"cublas sgemm (default math, compute 32F)", launch_cublas<false>, nullptr, 0, 1, 1},
      {"cublas sgemm (pedantic, compute 32F pedantic)", launch_cublas<true>, nullptr, 0, 1, 1},
  };
  const size_t reference = variants.size() - 1;  // pedantic cuBLAS: f32 by definition

  // What the compiler made of each kernel.
  for (const Variant& v : variants) {
    if (!v.kernel) continue;
    cudaFuncAttributes attr{};
    CHECK(cudaFuncGetAttributes(&attr, v.kernel));
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel,
                                                        static_cast<int>(v.threads), 0));
    std::printf("%-46s %3u threads  tile %3u×%-3u  %3d regs  %5zu B shared  %3zu B local  "
                "%d blocks/SM (%d warps)\n",
                v.name.c_str(), v.threads, v.bm, v.bn, attr.numRegs, attr.sharedSizeBytes,
                attr.localSizeBytes, blocks, blocks * static_cast<int>(v.threads) / 32);
  }
  std::fflush(stdout);

  std::vector<float> ha(elems), hb(elems);
  fill(ha, 1);
  fill(hb, 2);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK(cudaMalloc(&a, elems * sizeof(float)));
  CHECK(cudaMalloc(&b, elems * sizeof(float)));
  CHECK(cudaMalloc(&c, elems * sizeof(float)));
  CHECK(cudaMemcpy(a, ha.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb.data(), elems * sizeof(float), cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  // Times `reps` back-to-back launches of variant v, in ms.
  auto timed = [&](const Variant& v, int reps) {
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < reps; ++i) v.launch(a, b, c, n);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms);
  };

  // Verification, once per run, before any timing: C is filled with NaN first, so a kernel that
  // writes nothing fails.
  const double scale = std::sqrt(static_cast<double>(n)) / 3.0;  // an entry's std. deviation
  int failed = 0;
  std::vector<float> ref(elems), out(elems);
  auto run_into = [&](const Variant& v, std::vector<float>& host) {
    CHECK(cudaMemset(c, 0xFF, elems * sizeof(float)));
    v.launch(a, b, c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), c, elems * sizeof(float), cudaMemcpyDeviceToHost));
  };
  // cuBLAS against float64 dot products at sampled entries.
  auto sampled = [&](const std::vector<float>& got) {
    double worst = 0;
    uint64_t s = 12345;
    for (int t = 0; t < 512; ++t) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const size_t i = (s >> 33) % n, j = (s >> 13) % n;
      double want = 0;
      for (size_t kk = 0; kk < n; ++kk)
        want += static_cast<double>(ha[i * n + kk]) * static_cast<double>(hb[kk * n + j]);
      const double err = std::fabs(static_cast<double>(got[i * n + j]) - want);
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
    return worst / scale;
  };
  std::vector<std::string> verdict(variants.size());
  run_into(variants[reference], ref);
  for (size_t v = 0; v < variants.size(); ++v) {
    double err = 0;
    if (v == reference) {
      err = sampled(ref);
    } else if (!variants[v].kernel) {
      run_into(variants[v], out);
      err = sampled(out);
    } else {
      run_into(variants[v], out);
      for (size_t i = 0; i < elems; ++i) {
        const double d = std::fabs(static_cast<double>(out[i]) - ref[i]);
        if (!(d <= err)) err = std::isnan(d) ? INFINITY : d;
      }
      err /= scale;
    }
    const double tol = variants[v].kernel ? 1e-3 : 1e-4;
    char line[128];
    std::snprintf(line, sizeof line, "%s (max err %.2e of sqrt(k)/3%s)",
                  err <= tol ? "ok" : "FAILED", err,
                  variants[v].kernel ? " vs pedantic cuBLAS" : " vs float64 at 512 entries");
    verdict[v] = line;
    if (!(err <= tol)) {
      ++failed;
      std::printf("FAILED: %s: max error %.3e of sqrt(k)/3, tolerance %.0e\n",
                  variants[v].name.c_str(), err, tol);
    }
  }
  std::fflush(stdout);

  // A second of the first variant so the clocks rise, then each variant's batch: launches
  // enough for ~50 ms, judged from 3 warm-ups.
  for (double spent = 0; spent < 1000;) spent += timed(variants[0], 10);
  std::vector<int> reps(variants.size());
  for (size_t v = 0; v < variants.size(); ++v) {
    const double ms = timed(variants[v], 3) / 3;
    reps[v] = std::max(1, static_cast<int>(std::ceil(50.0 / std::max(ms, 1e-3))));
  }
  std::vector<std::vector<double>> tflops(variants.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t v = 0; v < variants.size(); ++v) {
      timed(variants[v], 3);  // warm-up
      const double ms = timed(variants[v], reps[v]);
      tflops[v].push_back(flops * reps[v] / (ms * 1e-3) / 1e12);
    }
  }
  for (size_t v = 0; v < variants.size(); ++v) {
    std::vector<double> s = tflops[v];
    std::sort(s.begin(), s.end());
    std::printf("%u %-46s median %6.2f TFLOP/s  min %6.2f  max %6.2f  (%d launches a batch)  %s\n",
                n, variants[v].name.c_str(), s[s.size() / 2], s.front(), s.back(), reps[v],
                verdict[v].c_str());
  }
  CHECK_BLAS(cublasDestroy(g_blas_default));
  CHECK_BLAS(cublasDestroy(g_blas_pedantic));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  if (failed) std::printf("FAILED: %d variant(s) gave wrong results at N = %u\n", failed, n);
  return failed ? 1 : 0;
}
