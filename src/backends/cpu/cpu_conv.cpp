// conv2d as im2col + sgemm, block by block of output pixels. NCHW: Y_n[K×cols] =
// W[K×CRS] · col[CRS×cols] for a block of one image's pixels, written in place with leading
// dimension PQ. NHWC: Y[rows×K] = col[rows×RSC] · Wᵀ for a block of the batch's pixels. The blocks
// are the units of work: spread over the pool with single-threaded GEMMs when there are enough of
// them, otherwise one after another with the BLAS's threads.
#include "backends/cpu/cpu_conv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/parallel.h"

namespace gpucheck::cpu {

namespace {

// Checked integer sizes of a convolution; everything fits BLAS's int where a GEMM dimension needs.
struct Dims {
  std::int64_t n, c, h, w, k, r, s, stride, pad, p, q;
  std::int64_t crs() const { return c * r * s; }
  std::int64_t pq() const { return p * q; }
  // 1×1 filter, stride 1, no padding: the input already is the col matrix.
  bool pointwise() const { return r == 1 && s == 1 && stride == 1 && pad == 0; }
};

Dims check_shape(const ConvShape& sh) {
  // LP64's int bounds every GEMM dimension, whichever integer width the library has.
  constexpr std::uint64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
  auto fail = [](const std::string& why) { throw std::invalid_argument("conv2d: " + why); };
  if (sh.n == 0 || sh.c == 0 || sh.h == 0 || sh.w == 0 || sh.k == 0 || sh.r == 0 || sh.s == 0)
    fail("every dimension must be at least 1");
  if (sh.stride == 0) fail("stride must be at least 1");
  for (std::uint64_t v : {sh.n, sh.c, sh.h, sh.w, sh.k, sh.r, sh.s, sh.stride, sh.pad})
    if (v > kMaxDim) fail("a dimension exceeds the BLAS integer range");
  if (sh.h + 2 * sh.pad < sh.r || sh.w + 2 * sh.pad < sh.s)
    fail("the filter is larger than the padded input");
  const std::uint64_t p = sh.p(), q = sh.q();
  // A product of dimensions that fits BLAS's int, or kMaxDim + 1 when it does not.
  auto product = [&](std::initializer_list<std::uint64_t> vs) {
    std::uint64_t acc = 1;
    for (std::uint64_t v : vs)
      if (__builtin_mul_overflow(acc, v, &acc) || acc > kMaxDim) return kMaxDim + 1;
    return acc;
  };
  if (product({sh.c, sh.r, sh.s}) > kMaxDim || product({sh.n, p, q}) > kMaxDim)
    fail("a GEMM dimension exceeds the BLAS integer range");
  auto i = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  return {i(sh.n), i(sh.c),      i(sh.h),   i(sh.w), i(sh.k), i(sh.r),
          i(sh.s), i(sh.stride), i(sh.pad), i(p),    i(q)};
}

// Output pixels per block so that a block's col matrix (CRS floats a pixel) fits `max_bytes`:
// at least 1, at most `limit` (one image's pixels for NCHW, the batch's for NHWC).
std::int64_t block_pixels(const Dims& d, std::size_t max_bytes, std::int64_t limit) {
  const std::size_t per_pixel = sizeof(float) * static_cast<std::size_t>(d.crs());
  const auto fit = static_cast<std::int64_t>(std::min<std::size_t>(
      max_bytes / per_pixel, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())));
  return std::clamp<std::int64_t>(fit, 1, limit);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The output positions o ∈ [lo, hi) ⊆ [0, count) whose input index o·stride + offset lies in
// [0, extent): the rest read zero padding.
std::pair<std::int64_t, std::int64_t> valid_range(std::int64_t count, std::int64_t stride,
                                                  std::int64_t offset, std::int64_t extent) {
  const std::int64_t lo = offset >= 0 ? 0 : std::min(count, ceil_div(-offset, stride));
  const std::int64_t hi =
      extent - offset <= 0 ? lo : std::clamp(ceil_div(extent - offset, stride), lo, count);
  return {lo, hi};
}

// col[row, j − j0] for rows (c, r, s) and output pixels j ∈ [j0, j1) of image `xn` (C×H×W).
void im2col_nchw(const Dims& d, const float* xn, std::int64_t j0, std::int64_t j1, float* col,
                 int threads) {
  const std::int64_t cols = j1 - j0;
  parallel_for(static_cast<std::size_t>(d.crs()), threads, [&](std::size_t rb, std::size_t re) {
    for (auto row = static_cast<std::int64_t>(rb); row < static_cast<std::int64_t>(re); ++row) {
      const std::int64_t c = row / (d.r * d.s), r = row / d.s % d.r, s = row % d.s;
      const std::int64_t off = s - d.pad;  // iw = q·stride + off
      const auto [qlo, qhi] = valid_range(d.q, d.stride, off, d.w);
      const float* plane = xn + c * d.h * d.w;
      float* dst = col + row * cols;
      for (std::int64_t j = j0; j < j1;) {
        const std::int64_t p = j / d.q, q0 = j % d.q;
        const std::int64_t q1 = std::min(d.q, q0 + (j1 - j));
        const std::int64_t ih = p * d.stride - d.pad + r;
        if (ih < 0 || ih >= d.h) {
          std::fill(dst, dst + (q1 - q0), 0.0f);
        } else {
          const float* src = plane + ih * d.w;
          const std::int64_t lo = std::clamp(qlo, q0, q1), hi = std::clamp(qhi, lo, q1);
          std::fill(dst, dst + (lo - q0), 0.0f);
          if (d.stride == 1) {
            std::memcpy(dst + (lo - q0), src + lo + off,
                        static_cast<std::size_t>(hi - lo) * sizeof(float));
          } else {
            for (std::int64_t q = lo; q < hi; ++q) dst[q - q0] = src[q * d.stride + off];
          }
          std::fill(dst + (hi - q0), dst + (q1 - q0), 0.0f);
        }
        dst += q1 - q0;
        j += q1 - q0;
      }
    }
  });
}

// col[row − r0, (r, s, c)] for output pixels row ∈ [r0, r1) over the batch (n, p, q). For one
// (row, r) the valid s form one contiguous run of input floats: one copy, zeros around it.
void im2col_nhwc(const Dims& d, const float* x, std::int64_t r0, std::int64_t r1, float* col,
                 int threads) {
  const std::int64_t width = d.crs(), run = d.s * d.c;
  parallel_for(static_cast<std::size_t>(r1 - r0), threads, [&](std::size_t b, std::size_t e) {
    for (std::int64_t row = r0 + static_cast<std::int64_t>(b);
         row < r0 + static_cast<std::int64_t>(e); ++row) {
      const std::int64_t n = row / d.pq(), p = row / d.q % d.p, q = row % d.q;
      const std::int64_t iw0 = q * d.stride - d.pad;  // iw for s = 0
      const auto [slo, shi] = valid_range(d.s, 1, iw0, d.w);
      float* dst = col + (row - r0) * width;
      for (std::int64_t r = 0; r < d.r; ++r, dst += run) {
        const std::int64_t ih = p * d.stride - d.pad + r;
        if (ih < 0 || ih >= d.h || slo == shi) {
          std::fill(dst, dst + run, 0.0f);
          continue;
        }
        std::fill(dst, dst + slo * d.c, 0.0f);
        std::memcpy(dst + slo * d.c, x + ((n * d.h + ih) * d.w + iw0 + slo) * d.c,
                    static_cast<std::size_t>((shi - slo) * d.c) * sizeof(float));
        std::fill(dst + shi * d.c, dst + run, 0.0f);
      }
    }
  });
}

// Y = A · op(B) with the leading dimensions given: the one GEMM form the convolutions use.
void sgemm(const BlasLibrary& blas, bool transpose_b, std::int64_t m, std::int64_t n,
           std::int64_t k, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
           float* c, std::int64_t ldc) {
  blas.sgemm({m, n, k, transpose_b, lda, ldb, ldc}, a, b, c);
}

// Hands out `buffers` slices of one scratch area, one per participant of a parallel region: at
// most that many ranges run at once, so a range always finds a free slice.
class SliceLender {
 public:
  explicit SliceLender(int buffers) {
    for (int i = buffers - 1; i >= 0; --i) free_.push_back(i);
  }
  int acquire() {
    std::lock_guard lock(mutex_);
    const int i = free_.back();
    free_.pop_back();
    return i;
  }
  void release(int i) {
    std::lock_guard lock(mutex_);
    free_.push_back(i);
  }

 private:
  std::mutex mutex_;
  std::vector<int> free_;
};

// Runs unit(u, scratch, inner_threads) for u < units, each with `unit_floats` of scratch. In
// parallel, the units are spread over the pool and each GEMM runs single-threaded on its
// participant: OpenBLAS splits the thin GEMMs of a convolution poorly, and its threads, which
// spin for a while after each call, would otherwise compete with the pool's for the cores.
// Otherwise they run one after another with all threads inside each (the BLAS's and the pool's).
template <class Unit>
void run_units(const BlasLibrary& blas, std::int64_t units, std::size_t unit_floats, int threads,
               bool parallel, ConvScratch* given, Unit&& unit) {
  ConvScratch local;
  ConvScratch& scratch = given ? *given : local;
  if (parallel) {
    blas.set_threads(1);
    float* base = scratch.reserve(unit_floats * static_cast<std::size_t>(threads));
    SliceLender slices(threads);
    parallel_for(static_cast<std::size_t>(units), threads, [&](std::size_t b, std::size_t e) {
      const int i = slices.acquire();
      float* slice = base + unit_floats * static_cast<std::size_t>(i);
      try {
        for (std::size_t u = b; u < e; ++u) unit(static_cast<std::int64_t>(u), slice, 1);
      } catch (...) {
        slices.release(i);
        throw;
      }
      slices.release(i);
    });
  } else {
    blas.set_threads(threads);
    float* buffer = scratch.reserve(unit_floats);
    for (std::int64_t u = 0; u < units; ++u) unit(u, buffer, threads);
  }
}

// How a call is cut into units: pixels a block, blocks, and whether they run in parallel.
struct Plan {
  std::int64_t block = 0;
  std::int64_t units = 0;
  bool parallel = false;
};

// Scratch bytes a thread may use for one block: kConvBlockBytes, within the call's bound.
std::size_t thread_budget(std::size_t max_scratch_bytes, int threads) {
  return std::min(kConvBlockBytes, max_scratch_bytes / static_cast<std::size_t>(threads));
}

// Scratch bytes for the one block of a sequential run, whose GEMM uses all threads.
std::size_t sequential_budget(std::size_t max_scratch_bytes, int threads) {
  return std::min(kConvBlockBytes * static_cast<std::size_t>(threads), max_scratch_bytes);
}

// NCHW: a unit is a block of one image's output pixels (the whole image when it fits).
Plan plan_nchw(const Dims& d, int threads, std::size_t max_scratch_bytes) {
  if (threads > 1) {
    const std::int64_t block = block_pixels(d, thread_budget(max_scratch_bytes, threads), d.pq());
    const std::int64_t units = d.n * ceil_div(d.pq(), block);
    if (units >= 2 * threads) return {block, units, true};
  }
  const std::int64_t block = block_pixels(d, sequential_budget(max_scratch_bytes, threads), d.pq());
  return {block, d.n * ceil_div(d.pq(), block), false};
}

// NHWC: a unit is a block of output pixels over the whole batch; blocks for parallel runs are
// cut to give each thread at least two, but not below kMinRows pixels (thin GEMMs lose).
Plan plan_nhwc(const Dims& d, int threads, std::size_t max_scratch_bytes) {
  constexpr std::int64_t kMinRows = 256;
  const std::int64_t rows = d.n * d.pq();
  if (threads > 1) {
    const std::int64_t fit = block_pixels(d, thread_budget(max_scratch_bytes, threads), rows);
    const std::int64_t block = std::min(fit, ceil_div(rows, 2 * std::int64_t{threads}));
    const std::int64_t units = ceil_div(rows, block);
    if (units >= 2 * threads && (block >= kMinRows || block == fit)) return {block, units, true};
  }
  const std::int64_t block = block_pixels(d, sequential_budget(max_scratch_bytes, threads), rows);
  return {block, ceil_div(rows, block), false};
}

}  // namespace

std::size_t conv2d_scratch_bytes(const ConvShape& shape, Layout layout, int threads,
                                 std::size_t max_scratch_bytes) {
  const Dims d = check_shape(shape);
  if (d.pointwise()) return 0;
  const int t = resolve_threads(threads);
  const Plan plan = layout == Layout::kNchw ? plan_nchw(d, t, max_scratch_bytes)
                                            : plan_nhwc(d, t, max_scratch_bytes);
  const std::size_t buffers = plan.parallel ? static_cast<std::size_t>(t) : 1;
  return buffers * static_cast<std::size_t>(d.crs() * plan.block) * sizeof(float);
}

float* ConvScratch::reserve(std::size_t floats) {
  if (floats > floats_) {
    data_.reset();  // release the old block before allocating the larger one
    data_ = std::make_unique_for_overwrite<float[]>(floats);
    floats_ = floats;
  }
  return data_.get();
}

void conv2d_nchw_f32(const BlasLibrary& blas, const ConvShape& shape, const float* x,
                     const float* w, float* y, int threads, const ConvOptions& options) {
  const Dims d = check_shape(shape);
  const int t = resolve_threads(threads);
  const std::int64_t image_in = d.c * d.h * d.w, image_out = d.k * d.pq();
  if (d.pointwise()) {  // Y_n = W[K×C] · X_n[C×HW], one image a unit
    run_units(blas, d.n, 0, t, t > 1 && d.n >= 2 * t, nullptr, [&](std::int64_t n, float*, int) {
      sgemm(blas, false, d.k, d.pq(), d.c, w, d.c, x + n * image_in, d.pq(), y + n * image_out,
            d.pq());
    });
    return;
  }
  const Plan plan = plan_nchw(d, t, options.max_scratch_bytes);
  const std::int64_t blocks = ceil_div(d.pq(), plan.block);
  run_units(blas, plan.units, static_cast<std::size_t>(d.crs() * plan.block), t, plan.parallel,
            options.scratch, [&](std::int64_t u, float* col, int inner) {
              const std::int64_t n = u / blocks, j0 = u % blocks * plan.block;
              const std::int64_t j1 = std::min(d.pq(), j0 + plan.block);
              im2col_nchw(d, x + n * image_in, j0, j1, col, inner);
              // Y_n[:, j0:j1] = W · col, written in place with Y's leading dimension PQ.
              sgemm(blas, false, d.k, j1 - j0, d.crs(), w, d.crs(), col, j1 - j0,
                    y + n * image_out + j0, d.pq());
            });
}

void conv2d_nhwc_f32(const BlasLibrary& blas, const ConvShape& shape, const float* x,
                     const float* w, float* y, int threads, const ConvOptions& options) {
  const Dims d = check_shape(shape);
  const int t = resolve_threads(threads);
  const std::int64_t rows = d.n * d.pq();
  if (d.pointwise()) {  // Y[NHW×K] = X[NHW×C] · Wᵀ, in row blocks
    const std::int64_t block = std::max<std::int64_t>(1, ceil_div(rows, 4 * std::int64_t{t}));
    const std::int64_t units = ceil_div(rows, block);
    run_units(blas, units, 0, t, t > 1 && units >= 2 * t, nullptr,
              [&](std::int64_t u, float*, int) {
                const std::int64_t r0 = u * block, r1 = std::min(rows, r0 + block);
                sgemm(blas, true, r1 - r0, d.k, d.c, x + r0 * d.c, d.c, w, d.c, y + r0 * d.k, d.k);
              });
    return;
  }
  const Plan plan = plan_nhwc(d, t, options.max_scratch_bytes);
  run_units(blas, plan.units, static_cast<std::size_t>(d.crs() * plan.block), t, plan.parallel,
            options.scratch, [&](std::int64_t u, float* col, int inner) {
              const std::int64_t r0 = u * plan.block, r1 = std::min(rows, r0 + plan.block);
              im2col_nhwc(d, x, r0, r1, col, inner);
              sgemm(blas, true, r1 - r0, d.k, d.crs(), col, d.crs(), w, d.crs(), y + r0 * d.k, d.k);
            });
}

}  // namespace gpucheck::cpu
